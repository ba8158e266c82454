"""The UI Verify profile at /mcp/uiverify, driven by the official MCP client the way an agent
following UI Verify's skill would: find the build, triage it, look, comment, decide."""

from __future__ import annotations

import base64
import hashlib
import io
from typing import Any

import anyio
import mcp_types as types
import pytest
from PIL import Image
from sqlalchemy import update

from tests.agent_session import connect, data, serving, size, text, texts
from tests.conftest import Keys, drain, make_build, shot
from viewfinder.services import builds
from viewfinder.services.env import Env
from viewfinder.store.models import Job, utcnow

PROFILE = "uiverify"


def pr_fixture(env: Env, keys: Keys) -> tuple[str, str]:
    """A main build (the baselines) and a PR build that changes two stories, keeps one and
    adds one."""
    main = make_build(
        env, keys.ci, "aaaa1111", {"about": shot(), "checkout": shot(), "home": shot()}
    )
    pr = make_build(
        env,
        keys.ci,
        "bbbb2222",
        {
            "about": shot(box=(40, 30, 60, 44)),
            "checkout": shot(),
            "home": shot(box=(2, 2, 20, 10)),
            "pricing": shot((200, 220, 255)),
        },
        branch="feature",
        pr=7,
    )
    return main, pr


def test_the_agent_loop_of_ui_verify_reads_decides_and_checks_the_pr(env: Env, keys: Keys) -> None:
    main_id, pr_id = pr_fixture(env, keys)

    async def loop() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], PROFILE) as agent:
            listed = data(await agent.call_tool("list_builds", {}))
            assert [b["buildId"] for b in listed["items"]] == [pr_id, main_id]
            assert listed["items"][0]["verdict"] == "changed" and listed["nextCursor"] is None

            build = data(await agent.call_tool("get_build", {"commitSha": "bbbb2222"}))
            assert build["buildId"] == pr_id and build["prNumber"] == 7
            assert build["counts"] == {
                "total": 4,
                "changed": 2,
                "failed": 0,
                "unchanged": 1,
                "new": 1,
                "removed": 0,
                "pending": 0,
            }
            assert build["comments"] == {"total": 0, "unresolved": 0}
            assert [s["name"] for s in build["changed"]] == ["about", "home"]
            assert build["changedNextCursor"] is None and build["failed"] == []
            assert [s["name"] for s in build["new"]] == ["pricing"] and build["removed"] == []
            assert build["newNextCursor"] is None and build["removedNextCursor"] is None
            home = build["changed"][1]
            assert home["status"] == "changed" and home["diffPercent"] > 0
            assert "unchanged" not in build

            diff = data(await agent.call_tool("get_diff", {"diffResultId": home["diffResultId"]}))
            assert diff["storyId"] == home["storyId"] and diff["status"] == "changed"
            assert all(diff[k] for k in ("baselineUrl", "candidateUrl", "diffUrl"))
            assert diff["comments"] == {"total": 0, "unresolved": 0} and diff["regions"]

            shown = await agent.call_tool(
                "render_diff_image", {"diffResultId": home["diffResultId"], "which": "before_after"}
            )
            assert isinstance(shown.content[0], types.TextContent)
            assert "No open comment threads" in shown.content[0].text
            assert [c.type for c in shown.content[1:]] == ["text", "image"]
            assert data(shown)["which"] == "before_after"

            anchor = {"type": "rect", "x": 0.0, "y": 0.0, "w": 0.4, "h": 0.3}
            posted = data(
                await agent.call_tool(
                    "post_comment",
                    {
                        "commitSha": "bbbb2222",
                        "diffResultId": home["diffResultId"],
                        "body": "The header lost its logo here: intended?",
                        "anchor": anchor,
                    },
                )
            )
            assert posted["authorType"] == "agent" and posted["side"] == "after"
            assert posted["anchor"] == anchor and posted["resolved"] is False
            triage = data(await agent.call_tool("get_build", {"prNumber": 7}))
            assert triage["comments"] == {"total": 1, "unresolved": 1}
            assert triage["changed"][1]["unresolvedComments"] == 1

            shown = await agent.call_tool(
                "render_diff_image", {"diffResultId": home["diffResultId"], "which": "diff"}
            )
            assert posted["commentId"] in text(shown) and "1 open comment thread" in text(shown)
            assert [c.type for c in shown.content] == ["text", "text", "image"]

            refused = await agent.call_tool(
                "review_diff", {"diffResultId": home["diffResultId"], "decision": "accept"}
            )
            assert refused.is_error and text(refused).startswith("[conflict]")
            blocked = data(await agent.call_tool("accept_build", {"buildId": pr_id}))
            assert blocked["accepted"] == [] and blocked["blocked"][0]["name"] == "home"

            reply = data(
                await agent.call_tool(
                    "post_comment", {"parentId": posted["commentId"], "body": "Yes: redesign."}
                )
            )
            assert reply["parentId"] == posted["commentId"] and reply["side"] == "after"
            listed_comments = data(
                await agent.call_tool("list_comments", {"commitSha": "bbbb2222"})
            )
            assert [c["commentId"] for c in listed_comments["items"]] == [
                posted["commentId"],
                reply["commentId"],
            ]
            assert {c["diffResultId"] for c in listed_comments["items"]} == {home["diffResultId"]}

            resolved = data(
                await agent.call_tool("resolve_comment", {"commentId": posted["commentId"]})
            )
            assert resolved["resolved"] is True
            accepted = data(
                await agent.call_tool(
                    "review_diff", {"diffResultId": home["diffResultId"], "decision": "accept"}
                )
            )
            # Within the PR an agent's accept moves the PR's own baseline (not the shared one).
            assert accepted["review"] == "accepted" and accepted["baselineUpdated"] is True
            assert "this pull request's baseline" in accepted["message"]
            rest = data(await agent.call_tool("accept_build", {"commitSha": "bbbb2222"}))
            assert rest["accepted"] == [build["changed"][0]["diffResultId"]]

            changes = data(await agent.call_tool("get_pr_changeset", {"prNumber": 7}))
            assert changes["counts"] == {
                "total": 3,
                "new": 1,
                "changed": 2,
                "removed": 0,
                "failed": 0,
            }
            assert [s["review"] for s in changes["changed"]] == ["accepted", "accepted"]
            assert changes["new"][0]["name"] == "pricing" and changes["newNextCursor"] is None
            first = data(
                await agent.call_tool(
                    "list_pr_stories", {"buildId": pr_id, "kind": "changed", "limit": 1}
                )
            )
            assert [s["name"] for s in first["items"]] == ["about"] and first["nextCursor"]
            second = data(
                await agent.call_tool(
                    "list_pr_stories",
                    {"buildId": pr_id, "kind": "changed", "cursor": first["nextCursor"]},
                )
            )
            assert [s["name"] for s in second["items"]] == ["home"]
            assert second["nextCursor"] is None

            gone = data(await agent.call_tool("delete_comment", {"commentId": reply["commentId"]}))
            assert gone["commentId"] == reply["commentId"]
            after = data(await agent.call_tool("list_comments", {"buildId": pr_id}))
            assert len(after["items"]) == 1

    anyio.run(loop)


def test_selectors_cursors_and_px_pagination(env: Env, keys: Keys) -> None:
    names = [f"story-{i:02}" for i in range(7)]
    tall = shot(size=(40, 1200))
    main_id = make_build(env, keys.ci, "aaaa1111", {n: shot() for n in names} | {"tall": tall})
    for n in range(3):
        make_build(env, keys.ci, f"dddd000{n}", {"a": shot()}, branch="topic" if n else "main")
    stories = {n: shot(box=(0, 0, 5, 5)) for n in names}
    stories["tall"] = shot(box=(0, 1100, 40, 1150), size=(40, 1200))
    build_id = make_build(env, keys.ci, "bbbb2222", stories)
    story = builds.list_build_stories(env, keys.agent, build_id, limit=100).items[-1]
    assert story.name == "tall"

    async def page() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], PROFILE) as agent:
            for tool in ("get_build", "list_build_stories", "accept_build", "get_pr_changeset"):
                none = await agent.call_tool(tool, {})
                assert none.is_error and text(none).startswith("[invalid_input]"), tool
                assert "commitSha" in text(none) and "commit_sha" not in text(none)
                several = await agent.call_tool(tool, {"commitSha": "bbbb2222", "prNumber": 7})
                assert several.is_error and text(several).startswith("[invalid_input]"), tool
            missing = await agent.call_tool("get_build", {"commitSha": "cccc3333"})
            assert missing.is_error and text(missing).startswith("[not_found]")
            not_pr = await agent.call_tool("get_pr_changeset", {"buildId": main_id})
            assert not_pr.is_error and "pull request" in text(not_pr)
            both = await agent.call_tool("get_diff", {"diffResultId": "dif_x", "storyId": "sty_x"})
            assert both.is_error and text(both).startswith("[invalid_input]")

            tools = {t.name: t for t in (await agent.list_tools()).tools}
            assert set(tools) >= {
                "list_builds",
                "get_build",
                "list_build_stories",
                "get_diff",
                "render_diff_image",
                "get_pr_changeset",
                "list_pr_stories",
                "review_diff",
                "accept_build",
                "list_comments",
                "post_comment",
                "update_comment",
                "resolve_comment",
                "delete_comment",
            }
            for name, tool in tools.items():
                assert tool.annotations is not None
                reads = name.startswith(("list_", "get_", "render_"))
                assert tool.annotations.read_only_hint is reads, name
                for argument in tool.input_schema["properties"]:
                    assert "_" not in argument, (name, argument)
            assert tools["delete_comment"].annotations.destructive_hint  # type: ignore[union-attr]
            # The three selectors, and repo for a PR number that several repositories share.
            assert set(tools["get_build"].input_schema["properties"]) == {
                "commitSha",
                "prNumber",
                "buildId",
                "repo",
            }

            seen: list[str] = []
            args: dict[str, Any] = {"buildId": build_id, "status": "changed", "limit": 3}
            while True:
                got = data(await agent.call_tool("list_build_stories", args))
                assert len(got["items"]) <= 3
                seen += [s["name"] for s in got["items"]]
                if got["nextCursor"] is None:
                    break
                args["cursor"] = got["nextCursor"]
            assert seen == [*names, "tall"]
            unchanged = data(
                await agent.call_tool(
                    "list_build_stories", {"commitSha": "bbbb2222", "status": "unchanged"}
                )
            )
            assert unchanged["items"] == [] and unchanged["nextCursor"] is None
            forged = await agent.call_tool(
                "list_build_stories", {"buildId": build_id, "cursor": "forged.cursor"}
            )
            assert forged.is_error and text(forged).startswith("[invalid_input]")

            topic: list[str] = []
            cursor = None
            while True:
                args = {"branch": "topic", "limit": 1} | ({"cursor": cursor} if cursor else {})
                got = data(await agent.call_tool("list_builds", args))
                topic += [b["commitSha"] for b in got["items"]]
                cursor = got["nextCursor"]
                if cursor is None:
                    break
            assert topic == ["dddd0002", "dddd0001"]
            every = data(await agent.call_tool("list_builds", {}))["items"]
            changed = data(await agent.call_tool("list_builds", {"status": "changed"}))["items"]
            assert changed == [b for b in every if b["verdict"] == "changed"]
            assert changed[0]["buildId"] == build_id and len(changed) < len(every)

            args = {"diffResultId": story.diff_id, "which": "candidate"}
            first = await agent.call_tool("render_diff_image", args | {"pxPagination": {}})
            assert "rows 0-499 of 1200; next page at offset 500" in texts(first)[1]
            last = await agent.call_tool(
                "render_diff_image", args | {"pxPagination": {"offset": 1000, "height": 500}}
            )
            assert "rows 1000-1199 of 1200" in texts(last)[1]
            assert image_size(last) == (40, 200)
            whole = await agent.call_tool("render_diff_image", {"storyId": story.id})
            assert image_size(whole) == (40, 1200)
            past = await agent.call_tool(
                "render_diff_image", args | {"pxPagination": {"offset": 5000}}
            )
            assert past.is_error and text(past).startswith("[invalid_input]")

    anyio.run(page)


def image_size(result: types.CallToolResult) -> tuple[int, int]:
    image = next(c for c in result.content if isinstance(c, types.ImageContent))
    size: tuple[int, int] = Image.open(io.BytesIO(base64.b64decode(image.data))).size
    return size


def test_get_build_on_a_500_story_build_stays_under_16_kb(env: Env, keys: Keys) -> None:
    if env.settings.database_url:
        # An answer's size does not depend on the database, and computing 500 comparisons
        # takes the jobs about 14 s on PostgreSQL.
        pytest.skip("measured on SQLite")
    names = [f"components/button-variant-{i:03}" for i in range(500)]
    make_build(env, keys.ci, "aaaa1111", {n: shot(size=(4, 4)) for n in names})
    changed = shot(box=(0, 0, 1, 1), size=(4, 4))
    make_build(env, keys.ci, "bbbb2222", dict.fromkeys(names, changed))

    async def measure() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], PROFILE) as agent:
            result = await agent.call_tool("get_build", {"commitSha": "bbbb2222"})
            build = data(result)
            assert build["counts"]["changed"] == 500 and len(build["changed"]) == 25
            assert build["changedNextCursor"] is not None
            assert size(result) <= 16 * 1024, size(result)
            print(f"get_build on 500 changed stories: {size(result)} bytes")
            more = data(
                await agent.call_tool(
                    "list_build_stories",
                    {"commitSha": "bbbb2222", "cursor": build["changedNextCursor"], "limit": 100},
                )
            )
            assert more["items"][0]["name"] == names[25] and len(more["items"]) == 100

            # 470 changed and 30 failed: both lists share the 25, and both cursors go on.
            # The failed ones: their bytes are lost from the store before a worker gets to
            # them, and their jobs give up after the last attempt.
            lost = shot(box=(1, 1, 3, 3), size=(4, 4))
            stories = dict.fromkeys(names[:470], changed) | dict.fromkeys(names[470:], lost)
            build = builds.create_build(env, keys.ci, commit_sha="cccc3333")
            uploads = [builds.StoryUpload(n, None, png) for n, png in stories.items()]
            for start in range(0, 500, builds.MAX_BATCH):
                builds.add_stories(env, keys.ci, build.id, uploads[start : start + 200])
            builds.finalize_build(env, keys.ci, build.id)
            env.blobs.delete(hashlib.sha256(lost).hexdigest())
            for _ in range(env.settings.job_max_attempts):
                with env.db.write() as s:
                    s.execute(update(Job).values(run_after=utcnow()))
                drain(env)
            result = await agent.call_tool("get_build", {"commitSha": "cccc3333"})
            build = data(result)
            assert (build["counts"]["changed"], build["counts"]["failed"]) == (470, 30)
            assert (len(build["changed"]), len(build["failed"])) == (20, 5)
            assert size(result) <= 16 * 1024, size(result)
            print(f"get_build on 470 changed and 30 failed stories: {size(result)} bytes")
            rest = data(
                await agent.call_tool(
                    "list_build_stories",
                    {
                        "commitSha": "cccc3333",
                        "status": "failed",
                        "cursor": build["failedNextCursor"],
                    },
                )
            )
            assert [s["name"] for s in rest["items"]] == names[475:]

    anyio.run(measure)


def test_get_build_shows_every_list_with_its_cursor_within_25_stories(env: Env, keys: Keys) -> None:
    old = {f"old-{i:02}": shot() for i in range(12)}
    same = {f"same-{i:02}": shot() for i in range(30)}
    make_build(env, keys.ci, "aaaa1111", old | same)
    changed = dict.fromkeys(same, shot(box=(0, 0, 3, 3)))
    new = {f"new-{i:02}": shot() for i in range(9)}
    make_build(env, keys.ci, "bbbb2222", changed | new)

    async def check() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], PROFILE) as agent:
            build = data(await agent.call_tool("get_build", {"commitSha": "bbbb2222"}))
            sizes = {k: len(build[k]) for k in ("changed", "failed", "new", "removed")}
            assert sizes == {"changed": 15, "failed": 0, "new": 5, "removed": 5}
            assert build["failedNextCursor"] is None
            for kind, total in (("changed", 30), ("new", 9), ("removed", 12)):
                rest = data(
                    await agent.call_tool(
                        "list_build_stories",
                        {
                            "commitSha": "bbbb2222",
                            "status": kind,
                            "cursor": build[f"{kind}NextCursor"],
                            "limit": 100,
                        },
                    )
                )
                names = [s["name"] for s in build[kind] + rest["items"]]
                assert len(names) == len(set(names)) == total, kind

    anyio.run(check)


def test_a_build_selector_beside_a_diff_must_name_its_build_and_pr_numbers_need_their_repo(
    env: Env, keys: Keys
) -> None:
    _, pr_id = pr_fixture(env, keys)
    make_build(env, keys.ci, "cccc3333", {"home": shot(box=(1, 1, 9, 9))}, pr=7, repo="acme/api")

    async def check() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], PROFILE) as agent:
            build = data(await agent.call_tool("get_build", {"buildId": pr_id}))
            diff_id = build["changed"][0]["diffResultId"]
            agreeing = {"diffResultId": diff_id, "commitSha": "bbbb2222", "buildId": pr_id}
            assert data(await agent.call_tool("get_diff", agreeing))["buildId"] == pr_id
            wrong = await agent.call_tool(
                "get_diff", {"diffResultId": diff_id, "commitSha": "aaaa1111"}
            )
            assert text(wrong).startswith(
                f"[invalid_input] diffResultId {diff_id} belongs to build {pr_id}, not to the "
                "build selected by commitSha aaaa1111"
            )
            comment = await agent.call_tool(
                "post_comment", {"diffResultId": diff_id, "body": "hm", "buildId": "bld_other"}
            )
            assert "leave the build selector out" in text(comment)

            ambiguous = await agent.call_tool("get_build", {"prNumber": 7})
            assert text(ambiguous) == (
                "[invalid_input] PR #7 has builds in several repositories (acme/api, acme/shop): "
                "say which with repo (owner/name)"
            )
            shop = data(await agent.call_tool("get_build", {"prNumber": 7, "repo": "acme/shop"}))
            assert shop["buildId"] == pr_id

    anyio.run(check)
