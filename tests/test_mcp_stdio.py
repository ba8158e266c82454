"""The MCP server over a real socket and over stdio: the SDK client against `viewfinder serve`
in both protocol eras, the stdio server on the local data directory and proxying to a server
(files named in arguments are sent up), and stdio's tolerance of lines that are not JSON."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import make_build, shot
from tests.mcp_clients import (
    BASE,
    ERAS,
    check_output,
    connect,
    initialize,
    tool_of,
)
from tests.server import VIEWFINDER, clean_environ, running_server
from viewfinder.mcp import default
from viewfinder.services import projects
from viewfinder.services.env import Env
from viewfinder.settings import Settings

MCP = f"{BASE}/mcp"
SPECS = {spec.name: spec for spec in default.TOOLS}
DEFAULT_TOOLS = list(SPECS)
STDIO_DEADLINE = 60.0  # seconds a stdio server gets to answer one message


def test_a_real_server_answers_over_a_socket_in_both_eras_and_the_stdio_proxy_sends_files_up(
    tmp_path: Path,
) -> None:
    screenshot = tmp_path / "checkout.png"
    screenshot.write_bytes(shot((250, 200, 0), (4, 4, 40, 30)))
    (tmp_path / "server").mkdir()
    with running_server("sqlite", tmp_path / "server") as server:

        async def check() -> None:
            for era in ERAS:
                async with connect(f"{server.url}/mcp", key=server.keys["agent"], mode=era) as c:
                    assert len((await c.list_tools()).tools) == len(DEFAULT_TOOLS)
                    result = await c.call_tool("get_project", {})
                    overview = check_output(await tool_of(c, "get_project"), result)
                    assert overview["roles"] == ["review", "upload"], era
            proxy = StdioServerParameters(
                command=VIEWFINDER,
                args=["mcp"],
                env={"VIEWFINDER_URL": server.url, "VIEWFINDER_KEY": server.keys["agent"]},
                cwd=tmp_path,
            )
            async with Client(proxy) as client:
                arguments: dict[str, Any] = {"image": str(screenshot), "name": "checkout"}
                arguments |= {"pr_number": 12, "repo": "acme/shop"}
                result = await client.call_tool("push_screenshot", arguments)
                pushed = check_output(await tool_of(client, "push_screenshot"), result)
                assert pushed["markdown"] and pushed["image_id"].startswith("img_")
            async with httpx2.AsyncClient(timeout=30) as http:
                fetched = await http.get(pushed["view_url"])
            assert fetched.status_code == 200 and fetched.content == screenshot.read_bytes()

            # A setup written for Miseru works unchanged: its variable names, its wording, and
            # what the agent's machine could not tell is said there, not blamed on HTTP.
            miseru = StdioServerParameters(
                command=VIEWFINDER,
                args=["mcp", "--profile", "miseru"],
                env={"MISERU_API": server.url, "MISERU_TOKEN": server.keys["agent"]},
                cwd=tmp_path,
            )
            async with Client(miseru) as client:
                arguments = {"file": str(screenshot), "name": "checkout", "context_key": "docs"}
                result = await client.call_tool("miseru_push", arguments)
                assert not result.is_error
                assert result.content[0].text.startswith("アップロード完了(id: img_")  # type: ignore[union-attr]
                arguments = {"file": str(screenshot), "name": "checkout", "pr_number": 3}
                no_repo = (await client.call_tool("miseru_push", arguments)).content[0]
                assert no_repo.text.startswith("[invalid_input] pr_number には repo")  # type: ignore[union-attr]
                assert "HTTP" not in no_repo.text  # type: ignore[union-attr]

        anyio.run(check)


@pytest.fixture(scope="module")
def local_data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A data directory with a project, and its keys, for `viewfinder mcp` in local mode."""
    data_dir = tmp_path_factory.mktemp("stdio") / "data"
    env = Env.open(Settings(data_dir=data_dir, database_url=None, workers=0))
    try:
        boot = projects.bootstrap(env)
        assert boot is not None
        ci = projects.authenticate(env, boot.keys["ci"].key)
        make_build(env, ci, "ffff6666", {"home": shot()})
    finally:
        env.close()
    return data_dir, {name: key.key for name, key in boot.keys.items()}


def test_stdio_serves_the_tools_on_the_local_data_directory_with_the_key_from_the_environment(
    local_data: tuple[Path, dict[str, str]],
) -> None:
    data_dir, keys = local_data
    image = data_dir.parent / "Screenshot 2026-11-30 at 10.00.00.png"
    image.write_bytes(shot((0, 90, 0)))
    params = StdioServerParameters(
        command=VIEWFINDER,
        args=["mcp", "--data-dir", str(data_dir)],
        env={"VIEWFINDER_KEY": keys["agent"]},
    )

    async def check() -> None:
        async with Client(params) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert list(listed) == DEFAULT_TOOLS
            builds_page = check_output(
                listed["list_builds"], await client.call_tool("list_builds", {})
            )
            assert [b["commit_sha"] for b in builds_page["items"]] == ["ffff6666"]
            # Over stdio the caller shares the machine, so a path is a valid image argument,
            # spaces and all.
            arguments = {"image": str(image), "name": "local", "context_key": "stdio"}
            pushed = check_output(
                listed["push_screenshot"], await client.call_tool("push_screenshot", arguments)
            )
            assert pushed["image_id"].startswith("img_")

    anyio.run(check)


class Wire:
    """A stdio server run by hand: lines written to its stdin, its stdout read line by line on
    a thread so that every wait has a deadline, and every line it wrote kept in ``seen``."""

    def __init__(
        self, command: list[str], environ: dict[str, str], cwd: Path | None = None
    ) -> None:
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=environ,
            cwd=cwd,
        )
        self.seen: list[bytes] = []
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *_: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(STDIO_DEADLINE)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        """The response to ``request_id`` (other lines on the way are kept in ``seen``)."""
        deadline = time.monotonic() + STDIO_DEADLINE
        while True:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                raise AssertionError(f"no answer to request {request_id} in time") from None
            self.seen.append(line)
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)

    def hang_up(self) -> int:
        """Close stdin as a client leaving does; the exit code, once all output is read."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(STDIO_DEADLINE)
        self._reader.join(STDIO_DEADLINE)
        while not self._lines.empty():
            self.seen.append(self._lines.get_nowait())
        return code


def test_stdio_ignores_lines_that_are_not_json_and_keeps_answering(
    local_data: tuple[Path, dict[str, str]],
) -> None:
    data_dir, keys = local_data
    command = [VIEWFINDER, "mcp", "--data-dir", str(data_dir)]
    with Wire(command, clean_environ() | {"VIEWFINDER_KEY": keys["agent"]}) as wire:
        wire.send(b"this is not json")
        wire.send(json.dumps(initialize(1, "2025-06-18")).encode())
        hello = wire.answer(1)
        assert hello["result"]["protocolVersion"] == "2025-06-18"
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        wire.send(b"{broken")
        wire.send(b"")
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/no_such_thing"}')
        wire.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
        listed = wire.answer(2)
        assert [tool["name"] for tool in listed["result"]["tools"]] == DEFAULT_TOOLS
        call = {"name": "get_project", "arguments": {}}
        wire.send(
            json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}).encode()
        )
        called = wire.answer(3)
        assert called["result"]["isError"] is False
        assert called["result"]["structuredContent"]["key_name"] == "agent"
        assert wire.hang_up() == 0
    # Nothing but JSON-RPC on stdout, and nothing for the lines it dropped.
    for line in wire.seen:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0" and ("result" in message or "error" in message)
    assert [json.loads(line).get("id") for line in wire.seen] == [1, 2, 3]


def test_stdio_answers_a_call_still_running_when_the_client_closes_stdin(
    local_data: tuple[Path, dict[str, str]],
) -> None:
    data_dir, keys = local_data
    command = [VIEWFINDER, "mcp", "--data-dir", str(data_dir)]
    with Wire(command, clean_environ() | {"VIEWFINDER_KEY": keys["agent"]}) as wire:
        wire.send(json.dumps(initialize(1, "2025-06-18")).encode())
        wire.answer(1)
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        call = {"name": "list_builds", "arguments": {}}
        wire.send(
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}).encode()
        )
        assert wire.hang_up() == 0  # at once, the call most likely still running
    (answer,) = [json.loads(line) for line in wire.seen if json.loads(line).get("id") == 2]
    assert answer["result"]["isError"] is False
    assert answer["result"]["structuredContent"]["items"][0]["commit_sha"] == "ffff6666"


def test_a_key_without_a_server_url_is_refused_and_no_store_appears(tmp_path: Path) -> None:
    command = [VIEWFINDER, "mcp", "--profile", "miseru"]
    environ = clean_environ() | {"MISERU_TOKEN": "vf_proj_from_a_server"}
    with Wire(command, environ, cwd=tmp_path) as wire:  # the agent's working directory
        wire.send(json.dumps(initialize(1, "2025-06-18")).encode())
        wire.answer(1)
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        call = {"name": "miseru_list_baselines", "arguments": {}}
        wire.send(
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}).encode()
        )
        refused = wire.answer(2)["result"]
        assert wire.hang_up() == 0
    assert refused["isError"] is True
    assert refused["content"][0]["text"].startswith(
        "[unauthenticated] MISERU_TOKEN is set but not VIEWFINDER_URL or MISERU_API, and there "
        "is no local store in"
    )
    assert list(tmp_path.iterdir()) == []
