"""Every profile's tool list as clients see it (names, descriptions, input and output schemas,
annotations, _meta), pinned in tests/snapshots/ so that any change to what agents are offered
shows up in review. `UPDATE=1 pytest tests/test_mcp_snapshot.py` rewrites the snapshots."""

from __future__ import annotations

import difflib
import functools
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client

from tests.mcp_clients import ERAS, tool_dicts
from viewfinder.mcp.server import build_server, profiles
from viewfinder.mcp.tooling import LocalBackend
from viewfinder.services.env import Env

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("UPDATE") == "1"
# A model choosing among many tools chooses worse; the default profile serves visual review,
# checkups and identity under one endpoint, and stays under this.
MOST_DEFAULT_TOOLS = 30
READ_VERBS = {"get", "list", "render"}


@functools.cache
def listed_tools(profile: str) -> list[dict[str, Any]]:
    """The profile's tools/list result, the same in both protocol eras. The server is the one
    the HTTP and stdio transports build, reached in memory: listing needs no data, and no
    call is made."""

    def no_calls() -> Env:
        raise AssertionError("listing tools must not touch the data")

    server = build_server(profile, LocalBackend(no_calls, lambda _: None, local_files=False))

    async def listing() -> list[list[dict[str, Any]]]:
        lists = []
        for era in ERAS:
            async with Client(server, mode=era) as client:
                lists.append(tool_dicts(await client.list_tools()))
        return lists

    legacy, current = anyio.run(listing)
    assert legacy == current, f"{profile}: the protocol eras list different tools"
    return current


def render(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("profile", list(profiles()))
def test_each_profiles_tool_list_matches_its_snapshot(profile: str) -> None:
    snapshot = SNAPSHOTS / f"mcp_tools_{profile}.json"
    current = render(listed_tools(profile))
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(current, encoding="utf-8")
        return
    if not snapshot.exists():
        pytest.fail(
            f"no snapshot of the {profile!r} tool list at {snapshot}: run "
            "`UPDATE=1 pytest tests/test_mcp_snapshot.py` and commit the file"
        )
    expected = snapshot.read_text(encoding="utf-8")
    if current != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), current.splitlines(), "snapshot", "served", lineterm=""
        )
        shown = "\n".join(list(diff)[:80])
        pytest.fail(
            f"the {profile!r} tool list changed; if that is intended, run "
            f"`UPDATE=1 pytest tests/test_mcp_snapshot.py` and commit {snapshot.name}:\n{shown}"
        )


def test_tools_are_few_unique_and_annotated_by_what_they_do() -> None:
    for profile in profiles():
        tools = listed_tools(profile)
        names = [tool["name"] for tool in tools]
        assert len(names) == len(set(names)), f"{profile}: duplicate tool names"
        if profile == "default":
            assert len(tools) <= MOST_DEFAULT_TOOLS
        for tool in tools:
            hints = tool["annotations"]
            verbs = set(tool["name"].split("_"))
            assert "outputSchema" in tool, f"{profile}/{tool['name']} declares no outputSchema"
            if verbs & READ_VERBS:
                assert hints["readOnlyHint"] is True, f"{profile}/{tool['name']} reads only"
            if "delete" in verbs:
                assert hints["destructiveHint"] is True, f"{profile}/{tool['name']} deletes"
                assert hints["readOnlyHint"] is False
            if hints["readOnlyHint"]:
                assert hints["destructiveHint"] is False, f"{profile}/{tool['name']}"


# An agent reads the whole list before it starts. The default profile's list was 108 KB when each
# tool that changes a record repeated the record's full schema (its review tools alone: 49 KB
# once said once; with checkups and identity: 68 KB; with replays and point marks: 72.2 KB).
MOST_DEFAULT_LIST_BYTES = 74 * 1024


def test_the_tool_list_describes_each_record_once_and_stays_small() -> None:
    for profile in profiles():
        tools = listed_tools(profile)
        for tool in tools:
            schemas = json.dumps([tool["inputSchema"], tool["outputSchema"]])
            # A title keyword's value is a string; a property called title maps to a schema.
            assert '"title": "' not in schemas, f"{profile}/{tool['name']} repeats titles"
            if not tool["annotations"]["readOnlyHint"]:
                # A tool that changes a record answers it; the reading tool describes it.
                assert "$defs" not in tool["outputSchema"], f"{profile}/{tool['name']}"
    size = len(json.dumps(listed_tools("default"), separators=(",", ":")).encode())
    assert size <= MOST_DEFAULT_LIST_BYTES, f"the default tool list is {size} bytes"
