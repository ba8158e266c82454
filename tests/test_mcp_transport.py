"""The MCP server's transports and its contract with clients, default profile: Streamable HTTP
in process and over a real socket with the official SDK client in both protocol eras, stdio
(local and proxying to a server), keys and roles on tool calls, results that match their
outputSchema, image results, the GET 405 and the server card."""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import numpy as np
import pytest
from fastapi import FastAPI
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import Keys, make_build, shot
from tests.mcp_clients import (
    BASE,
    ERAS,
    Era,
    check_output,
    connect,
    images,
    refusal,
    serving,
    texts,
)
from tests.server import VIEWFINDER, clean_environ, running_server
from viewfinder import __version__
from viewfinder.app import create_app
from viewfinder.imaging import png
from viewfinder.mcp import default
from viewfinder.mcp.http import path_of
from viewfinder.mcp.server import profiles
from viewfinder.mcp.tooling import INLINE_LIMIT
from viewfinder.services import builds, projects
from viewfinder.services.env import Env
from viewfinder.settings import Settings

MCP = f"{BASE}/mcp"
SPECS = {spec.name: spec for spec in default.TOOLS}
DEFAULT_TOOLS = list(SPECS)
STDIO_DEADLINE = 60.0  # seconds a stdio server gets to answer one message


def changed_pr(env: Env, keys: Keys) -> dict[str, str]:
    """Baselines from a main build, then PR 7 of acme/shop changing the story "home"."""
    make_build(env, keys.ci, "aaaa1111", {"home": shot(), "about": shot()})
    pr_build = make_build(
        env, keys.ci, "bbbb2222", {"home": shot(box=(8, 8, 30, 20)), "about": shot()}, pr=7
    )
    summary = builds.get_build(env, keys.agent, build_id=pr_build)
    [home] = summary.changed.items
    assert home.diff_id is not None
    return {"build_id": pr_build, "diff_id": home.diff_id, "story_id": home.id}


def in_both_eras(env: Env, check: Callable[[FastAPI, Era], Awaitable[None]]) -> None:
    """Run ``check`` against one in-process app with a client of each protocol era."""

    async def run() -> None:
        async with serving(env) as app:
            for era in ERAS:
                await check(app, era)

    anyio.run(run)


async def tool_of(client: Client, name: str) -> types.Tool:
    listed = await client.list_tools()
    return next(tool for tool in listed.tools if tool.name == name)


# ---- keys and roles ---------------------------------------------------------------------------


def test_tools_are_listed_without_a_key_but_every_call_needs_a_valid_one(
    env: Env, keys: Keys
) -> None:
    async def check(app: FastAPI, era: Era) -> None:
        async with connect(MCP, mode=era, app=app) as anonymous:
            listed = await anonymous.list_tools()
            assert [tool.name for tool in listed.tools] == DEFAULT_TOOLS
            text = refusal(await anonymous.call_tool("get_project", {}))
            assert text.startswith("[unauthenticated]")
            assert "vf_proj_" in text and "Authorization: Bearer" in text
        for wrong in ("vf_proj_" + "x" * 32, "not-a-viewfinder-key"):
            async with connect(MCP, key=wrong, mode=era, app=app) as stranger:
                text = refusal(await stranger.call_tool("list_builds", {}))
                assert text.startswith("[unauthenticated]"), text
        async with connect(MCP, key=keys.secrets["agent"], mode=era, app=app) as agent:
            result = await agent.call_tool("get_project", {})
            overview = check_output(await tool_of(agent, "get_project"), result)
            assert overview["key_name"] == "agent"

    in_both_eras(env, check)


def test_a_key_reads_only_its_own_project_and_acts_only_within_its_roles(
    env: Env, keys: Keys, other: Keys
) -> None:
    build_id = make_build(env, keys.ci, "cccc3333", {"home": shot()})
    reviewer = projects.create_key(
        env, None, roles=["review"], label="reviewer", kind="agent", project="default"
    )

    async def check(app: FastAPI, era: Era) -> None:
        async with connect(MCP, key=other.secrets["agent"], mode=era, app=app) as outsider:
            text = refusal(await outsider.call_tool("get_build", {"build_id": build_id}))
            assert text.startswith("[not_found]") and build_id in text, text
        async with connect(MCP, key=reviewer.key, mode=era, app=app) as client:
            text = refusal(await client.call_tool("approve_diff", {"diff_id": "dif_x"}))
            assert text.startswith("[forbidden]") and "'approve' role" in text, text
            text = refusal(await client.call_tool("get_build", {"build_id": "bld_nope"}))
            assert text.startswith("[not_found]"), text

    in_both_eras(env, check)


@pytest.mark.parametrize("env", ["sqlite"], indirect=True)
def test_arguments_outside_the_input_schema_are_refused_as_invalid_input_naming_the_field(
    env: Env, keys: Keys
) -> None:
    wrong = {
        "get_build": ({"limit": 500}, "limit: Input should be less than or equal to 100"),
        "list_build_stories": ({}, "build_id: Field required"),
        "review_diff": ({"diff_id": "dif_x", "decision": "maybe"}, "decision: Input should be"),
    }

    async def check(app: FastAPI, era: Era) -> None:
        async with connect(MCP, key=keys.secrets["agent"], mode=era, app=app) as agent:
            for name, (arguments, problem) in wrong.items():
                text = refusal(await agent.call_tool(name, arguments))
                assert text.startswith("[invalid_input] invalid arguments: "), text
                assert problem in text and "pydantic" not in text, text

    in_both_eras(env, check)


# ---- results ----------------------------------------------------------------------------------

Step = tuple[str, str, Callable[[dict[str, Any]], dict[str, Any]]]


def every_tool_once(ids: dict[str, str]) -> list[Step]:
    """Each default tool called once, in an order where each call's target exists: (key role,
    tool, arguments from the results so far)."""
    pushed = "data:image/png;base64," + base64.b64encode(shot((10, 120, 200))).decode()
    return [
        ("agent", "get_project", lambda _: {}),
        ("agent", "list_builds", lambda _: {"limit": 5}),
        ("agent", "get_build", lambda _: {"pr_number": 7}),
        ("agent", "list_build_stories", lambda _: {"build_id": ids["build_id"], "state": "new"}),
        ("agent", "get_diff", lambda _: {"diff_id": ids["diff_id"]}),
        ("agent", "render_diff_image", lambda _: {"story_id": ids["story_id"]}),
        (
            "agent",
            "add_comment",
            lambda _: {
                "diff_id": ids["diff_id"],
                "body": "The button moved left.",
                "anchor": {"type": "point", "x": 0.25, "y": 0.3},
            },
        ),
        (
            "agent",
            "update_comment",
            lambda seen: {"comment_id": seen["add_comment"]["id"], "body": "It moved 8 px."},
        ),
        ("agent", "list_comments", lambda _: {"diff_id": ids["diff_id"], "status": "open"}),
        ("agent", "resolve_comment", lambda seen: {"comment_id": seen["add_comment"]["id"]}),
        ("agent", "delete_comment", lambda seen: {"comment_id": seen["add_comment"]["id"]}),
        ("agent", "review_diff", lambda _: {"diff_id": ids["diff_id"], "decision": "accept"}),
        ("agent", "accept_build", lambda _: {"build_id": ids["build_id"]}),
        ("admin", "approve_diff", lambda _: {"diff_id": ids["diff_id"]}),
        ("agent", "get_pr_changeset", lambda _: {"pr_number": 7, "repo": "acme/shop"}),
        ("agent", "pr_comment", lambda _: {"pr_number": 7, "repo": "acme/shop"}),
        (
            "agent",
            "push_screenshot",
            lambda _: {"image": pushed, "name": "banner", "context_key": "release-notes"},
        ),
        ("agent", "expire_image", lambda seen: {"image_id": seen["push_screenshot"]["image_id"]}),
        ("agent", "close_context", lambda _: {"context_key": "release-notes"}),
        ("agent", "list_baselines", lambda _: {"name": "about"}),
        (
            "admin",
            "delete_baseline",
            lambda seen: {"baseline_id": seen["list_baselines"]["items"][0]["id"]},
        ),
    ]


# Both eras and both databases, pairwise: every tool's service code runs on each database.
@pytest.mark.parametrize(
    ("env", "era"), [("sqlite", "legacy"), ("postgresql", "auto")], indirect=["env"]
)
def test_every_default_tool_answers_json_text_and_structured_content_matching_its_schema(
    env: Env, keys: Keys, era: Era
) -> None:
    ids = changed_pr(env, keys)
    steps = every_tool_once(ids)
    assert sorted(name for _, name, _ in steps) == sorted(DEFAULT_TOOLS)

    async def check() -> None:
        seen: dict[str, dict[str, Any]] = {}
        async with serving(env) as app:
            clients = {}
            async with (
                connect(MCP, key=keys.secrets["agent"], mode=era, app=app) as clients["agent"],
                connect(MCP, key=keys.secrets["admin"], mode=era, app=app) as clients["admin"],
            ):
                listed = {tool.name: tool for tool in (await clients["agent"].list_tools()).tools}
                for role, name, arguments in steps:
                    result = await clients[role].call_tool(name, arguments(seen))
                    json_text = not SPECS[name].images
                    seen[name] = check_output(listed[name], result, json_text=json_text)

    anyio.run(check)


@pytest.mark.parametrize("env", ["sqlite"], indirect=True)
def test_render_diff_image_puts_a_text_note_before_the_png_blocks(env: Env, keys: Keys) -> None:
    ids = changed_pr(env, keys)

    async def check() -> None:
        async with (
            serving(env) as app,
            connect(MCP, key=keys.secrets["agent"], app=app) as agent,
        ):
            tool = await tool_of(agent, "render_diff_image")
            result = await agent.call_tool(
                "render_diff_image", {"diff_id": ids["diff_id"], "which": "before_after"}
            )
            record = check_output(tool, result, json_text=False)
            first = result.content[0]
            assert isinstance(first, types.TextContent)
            assert "comment thread" in first.text
            crops = images(result)
            assert len(crops) == len(record["images"]) >= 1
            assert [image["bytes"] for image in record["images"]] == [len(c) for c in crops]
            kinds = [block.type for block in result.content]
            assert kinds[0] == "text" and kinds.index("image") > 0

    anyio.run(check)


def noise(seed: int, size: int = 2500) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """RGB noise: incompressible, so its PNG stays at about 3 bytes a pixel."""
    return np.random.default_rng(seed).integers(0, 256, (size, size, 3), dtype=np.uint8)


@pytest.mark.parametrize("env", ["sqlite"], indirect=True)
def test_an_image_over_5_mb_is_not_inlined_and_the_note_says_where_to_get_it(
    env: Env, keys: Keys
) -> None:
    before = noise(1)
    after = before.copy()
    after[100:300, 200:600] = 0
    big = png.encode(after, level=0)
    assert len(big) > INLINE_LIMIT  # build uploads take up to 25 MB; push stops at 5 MB
    make_build(env, keys.ci, "dddd4444", {"poster": png.encode(before, level=0)})
    build_id = make_build(env, keys.ci, "eeee5555", {"poster": big})
    [poster] = builds.get_build(env, keys.agent, build_id=build_id).changed.items

    async def check() -> None:
        async with (
            serving(env) as app,
            connect(MCP, key=keys.secrets["agent"], app=app) as agent,
        ):
            tool = await tool_of(agent, "render_diff_image")
            result = await agent.call_tool(
                "render_diff_image", {"diff_id": poster.diff_id, "which": "after"}
            )
            record = check_output(tool, result, json_text=False)
            assert record["images"][0]["bytes"] == len(big)
            assert images(result) == []
            note = texts(result)[-1]
            assert f"{len(big):,} bytes, too large to show inline" in note
            assert "px_offset/px_height" in note
            link = note.split("Download it from ", 1)[1].split(" ", 1)[0]
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as http:
                fetched = await http.get(link)
            assert fetched.status_code == 200 and fetched.content == big

            paged = await agent.call_tool(
                "render_diff_image",
                {"diff_id": poster.diff_id, "which": "after", "px_offset": 0, "px_height": 100},
            )
            check_output(tool, paged, json_text=False)
            [page] = images(paged)
            assert png.decode(page).shape == (100, 2500, 3)

    anyio.run(check)


# ---- the HTTP endpoint's other answers --------------------------------------------------------


@pytest.fixture
def bare_app(tmp_path: Path) -> FastAPI:
    """The app without its lifespan: enough for routes that touch no data."""
    settings = Settings(data_dir=tmp_path / "data", database_url=None, workers=0, secret="t")
    return create_app(settings)


def test_get_on_every_mcp_endpoint_is_a_json_405(bare_app: FastAPI) -> None:
    async def check() -> None:
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=bare_app), base_url=BASE
        ) as http:
            for profile in profiles():
                response = await http.get(path_of(profile))
                assert response.status_code == 405, profile
                assert response.headers["allow"] == "POST"
                assert response.headers["content-type"] == "application/json"
                assert response.json()["error"]["code"] == "method_not_allowed"

    anyio.run(check)


def test_the_server_card_is_served_at_both_paths_from_the_live_tool_lists(
    bare_app: FastAPI,
) -> None:
    async def check() -> None:
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=bare_app), base_url=BASE
        ) as http:
            well_known = await http.get("/.well-known/mcp/server-card.json")
            beside = await http.get("/mcp/server-card")
            for response in (well_known, beside):
                assert response.status_code == 200
                assert response.headers["content-type"] == "application/mcp-server-card+json"
                assert response.headers["access-control-allow-origin"] == "*"
                assert "max-age=" in response.headers["cache-control"]
                assert response.headers["etag"] == well_known.headers["etag"]
                assert response.content == well_known.content
            card = well_known.json()
            assert card["name"] and card["version"] == __version__
            by_profile = {remote["_meta"]["profile"]: remote for remote in card["remotes"]}
            assert set(by_profile) == set(profiles())
            for profile, tools in profiles().items():
                remote = by_profile[profile]
                assert remote["url"] == f"http://127.0.0.1:8000{path_of(profile)}"
                assert remote["type"] == "streamable-http"
                assert "2025-06-18" in remote["supportedProtocolVersions"]
                assert remote["_meta"]["tools"] == [spec.name for spec in tools]
            etag = well_known.headers["etag"]
            # As a client sends it back, as a compressing proxy weakens it, and in a list.
            for sent in (etag, f"W/{etag}", f'"stale", {etag}'):
                cached = await http.get("/mcp/server-card", headers={"If-None-Match": sent})
                assert cached.status_code == 304 and cached.content == b"", sent
                assert cached.headers["etag"] == etag
            stale = await http.get("/mcp/server-card", headers={"If-None-Match": '"stale"'})
            assert stale.status_code == 200 and stale.content == well_known.content

    anyio.run(check)


@pytest.mark.parametrize("env", ["sqlite"], indirect=True)
def test_a_handshake_client_gets_the_protocol_version_it_asked_for(env: Env) -> None:
    async def check() -> None:
        async with (
            serving(env) as app,
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as http,
        ):
            for version in ("2025-06-18", "2025-11-25"):
                response = await http.post(
                    "/mcp",
                    json=initialize(1, version),
                    headers={"Accept": "application/json, text/event-stream"},
                )
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("application/json")
                assert response.json()["result"]["protocolVersion"] == version

    anyio.run(check)


def initialize(request_id: int, version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "viewfinder-tests", "version": "0"},
        },
    }


# ---- a real server and stdio ------------------------------------------------------------------


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

    def __init__(self, command: list[str], environ: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=environ,
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
