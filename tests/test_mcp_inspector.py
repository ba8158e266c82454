"""The official MCP Inspector CLI (npm @modelcontextprotocol/inspector, pinned in
tests/npm/package.json and installed by `make test`) against a real `viewfinder serve`: every
profile's tool schemas pass its portability lint in both protocol eras, and tool calls succeed
with a key and are tool errors without one."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.server import Server, clean_environ, running_server
from viewfinder.mcp.http import path_of
from viewfinder.mcp.server import PROTECTED, profiles

CLIENTS = Path(__file__).parent / ".npm"
INSPECTOR = CLIENTS / "node_modules" / ".bin" / "inspector"
# The CLI's --protocol-era values that pin one era (its "auto" settles on one of them).
ERAS = ("legacy", "modern")
EXIT_OK, EXIT_TOOL_ERROR = 0, 5  # the CLI's exit codes
TIMEOUT = 120.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not INSPECTOR.exists():
        pytest.fail(
            f"the MCP Inspector CLI is not installed in {CLIENTS}: run `make clients` (or "
            "`make test`, which installs it from tests/npm/package.json)"
        )
    with running_server("sqlite", tmp_path_factory.mktemp("inspected")) as served:
        yield served


def inspector(
    home: Path, url: str, *args: str, key: str | None = None
) -> tuple[int, dict[str, Any], str]:
    """Run the CLI against the HTTP endpoint at ``url``: its exit code, its JSON envelope and its
    stderr. ``home`` keeps its catalog and settings out of the user's."""
    command = [str(INSPECTOR), "--cli", url, "--transport", "http", "--format", "json", *args]
    if key is not None:
        command += ["--header", f"Authorization: Bearer {key}"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=clean_environ() | {"HOME": str(home), "NO_COLOR": "1"},
        check=False,
    )
    assert done.stdout.strip(), f"exit {done.returncode}, nothing on stdout:\n{done.stderr}"
    return done.returncode, json.loads(done.stdout), done.stderr


def test_the_inspector_finds_every_profile_portable_and_calls_tools_only_with_a_key(
    server: Server, tmp_path: Path
) -> None:
    def listing(profile: str, era: str) -> tuple[int, dict[str, Any], str]:
        url = server.url + path_of(profile)
        # Protected profiles list their tools to a caller with credentials only.
        key = server.keys["agent"] if profile in PROTECTED else None
        arguments = ("--method", "tools/list", "--strict", "--protocol-era", era)
        return inspector(tmp_path, url, *arguments, key=key)

    def call(era: str, key: str | None, *args: str) -> tuple[int, dict[str, Any], str]:
        url = server.url + path_of("default")
        arguments = ("--protocol-era", era, "--method", "tools/call", *args)
        return inspector(tmp_path, url, *arguments, key=key)

    agent = server.keys["agent"]
    lists = [(profile, era) for profile in profiles() for era in ERAS]
    # Each run starts Node; two at a time keep the test short on a two-core machine.
    with ThreadPoolExecutor(max_workers=2) as pool:
        listed = pool.map(lambda job: listing(*job), lists)
        keyed = pool.submit(call, "modern", agent, "--tool-name", "get_project")
        with_args = pool.submit(
            call, "legacy", agent, "--tool-name", "list_builds", "--tool-args-json", '{"limit": 5}'
        )
        keyless = pool.submit(call, "legacy", None, "--tool-name", "get_project")

        for (profile, era), (code, envelope, stderr) in zip(lists, listed, strict=True):
            assert code == EXIT_OK, f"{profile} ({era}): exit {code}\n{stderr}"
            # --strict puts warnings in schemaFindings too; the schemas must have none at all.
            assert "schemaFindings" not in envelope, (profile, era, envelope["schemaFindings"])
            assert "Warning: tool" not in stderr and "Error: tool" not in stderr, stderr
            names = [tool["name"] for tool in envelope["result"]["tools"]]
            assert names == [spec.name for spec in profiles()[profile]], (profile, era)

        code, envelope, stderr = keyed.result()
        assert code == EXIT_OK, stderr
        assert envelope["result"]["isError"] is False
        assert envelope["result"]["structuredContent"]["key_name"] == "agent"

        code, envelope, stderr = with_args.result()
        assert code == EXIT_OK, stderr
        assert envelope["result"]["structuredContent"] == {"items": [], "next_cursor": None}

        code, envelope, stderr = keyless.result()
        assert code == EXIT_TOOL_ERROR, stderr
        result = envelope["result"]
        assert result["isError"] is True and "structuredContent" not in result
        assert result["content"][0]["text"].startswith("[unauthenticated]")
