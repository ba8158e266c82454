"""The MCP server over Streamable HTTP and its contract with clients, default profile: the
official SDK client in process in both protocol eras, keys and roles on tool calls, results that
match their outputSchema, image results, the GET 405 and the server card. Sockets and stdio are
in test_mcp_stdio.py."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import numpy as np
import pytest
from fastapi import FastAPI

from tests.agent_session import record_shopping, zipped
from tests.conftest import Keys, make_build, shot
from tests.mcp_clients import (
    BASE,
    ERAS,
    Era,
    check_output,
    connect,
    images,
    initialize,
    refusal,
    serving,
    texts,
    tool_of,
)
from tests.replay_app import write_app
from viewfinder import __version__
from viewfinder.app import create_app
from viewfinder.imaging import png
from viewfinder.mcp import default
from viewfinder.mcp.http import path_of
from viewfinder.mcp.server import profiles
from viewfinder.mcp.tooling import INLINE_LIMIT
from viewfinder.services import builds, deployments, projects
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
        # A presented key that is not valid is refused at the door (401 with the resource
        # metadata, so an OAuth client can sign in instead): see tests/test_oauth.py.
        for wrong in ("vf_proj_" + "x" * 32, "not-a-viewfinder-key"):
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as http:
                answer = await http.post(
                    MCP,
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    headers={
                        "Authorization": f"Bearer {wrong}",
                        "Accept": "application/json, text/event-stream",
                    },
                )
            assert answer.status_code == 401, answer.text
            assert "resource_metadata=" in answer.headers["www-authenticate"]
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
    wrong = [
        ("get_build", {"limit": 500}, "limit: Input should be less than or equal to 100"),
        ("list_build_stories", {}, "build_id: Field required"),
        ("review_diff", {"diff_id": "dif_x", "decision": "maybe"}, "decision: Input should be"),
        # Strict: a boolean is not a number, a string is not one either.
        ("list_builds", {"limit": True}, "limit: Input should be a valid integer"),
        (
            "list_build_stories",
            {"build_id": "bld_x", "limit": "5"},
            "limit: Input should be a valid integer",
        ),
        (
            "push_screenshot",
            {"image": "x", "name": "a", "context_key": "c", "masks": [{"x": True}]},
            "masks: Input should be a valid integer",
        ),
    ]

    async def check(app: FastAPI, era: Era) -> None:
        async with connect(MCP, key=keys.secrets["agent"], mode=era, app=app) as agent:
            for name, arguments, problem in wrong:
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
        ("agent", "whoami", lambda _: {}),
        ("agent", "list_projects", lambda _: {}),
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
        ("agent", "open_checkup", lambda _: {"title": "Banner", "images": [pushed]}),
        ("agent", "get_checkup", lambda seen: {"id": seen["open_checkup"]["id"]}),
        (
            "agent",
            "add_to_checkup",
            lambda seen: {"id": seen["open_checkup"]["id"], "findings": [{"body": "Align"}]},
        ),
        (
            "agent",
            "resolve_checkup_marks",
            lambda _: {"id": ids["checkup_id"], "marks": [{"id": ids["mark_id"]}]},
        ),
        ("agent", "get_replays", lambda _: {"view": "sessions"}),
        (
            "agent",
            "replay_sessions",
            lambda _: {
                "deployment_id": ids["deployment_id"],
                "base_sha": "aaaa1111",
                "dry_run": True,
            },
        ),
    ]


def recorded_and_deployed(env: Env, keys: Keys, root: Path) -> dict[str, str]:
    """A session the recorder sent and a static build deployed for commit cccc3333."""
    record_shopping(env, keys)
    ticket = deployments.request_asset_upload(env, keys.ci)
    token = ticket.upload_url.rsplit("/", 1)[1]
    deployments.receive_upload(env, token, zipped(write_app(root)))
    made = deployments.register_asset_build(env, keys.ci, ticket.upload_id, "cccc3333")
    return {"deployment_id": made.id}


def decided_checkup(env: Env, keys: Keys) -> dict[str, str]:
    """A checkup whose person marked it and asked for changes (through their link)."""
    from viewfinder.services import checkup_marks, checkups

    pushed = "data:image/png;base64," + base64.b64encode(shot((10, 120, 200))).decode()
    review = checkups.create_review(
        env, keys.agent, checkups.NewReview(title="Checkout", images=[pushed])
    )
    token = review.review_url.rsplit("/r/", 1)[1]
    mark = checkup_marks.add_mark(env, token, screenshot_index=0, body="Too dark")
    checkup_marks.decide(env, token, "changes_requested")
    return {"checkup_id": review.id, "mark_id": mark.id}


# Both eras and both databases, pairwise: every tool's service code runs on each database.
@pytest.mark.parametrize(
    ("env", "era"), [("sqlite", "legacy"), ("postgresql", "auto")], indirect=["env"]
)
def test_every_default_tool_answers_json_text_and_structured_content_matching_its_schema(
    env: Env, keys: Keys, era: Era, tmp_path: Path
) -> None:
    ids = (
        changed_pr(env, keys)
        | decided_checkup(env, keys)
        | recorded_and_deployed(env, keys, tmp_path / "build")
    )
    steps = every_tool_once(ids)
    # set_project is a person's (a key is refused, saying why): tests/test_oauth.py calls it.
    assert sorted(name for _, name, _ in steps) == sorted(set(DEFAULT_TOOLS) - {"set_project"})

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


# ---- a real server and stdio ------------------------------------------------------------------
