"""The meticulous profile with the official MCP SDK client over Streamable HTTP, running the
reference's agent loop unchanged: upload a static build, trigger a run against a base, poll
get_test_run_diffs, read images, DOM and timeline diffs, reject the regression, and once a
fixed build shows no difference, reply on the thread. Builds are real uploaded zips served by
the deployments service, and the session is one the recorder's ingest stored."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from sqlalchemy import select

from tests.agent_session import connect, data, record_shopping, serving, text, worker, zipped
from tests.conftest import Keys
from tests.replay_app import write_app
from tests.server import VIEWFINDER
from viewfinder.mcp import meticulous
from viewfinder.services import sessions
from viewfinder.services.env import Env
from viewfinder.store.models import Image
from viewfinder.store.replay_models import Replay, ReplayScreenshot

BASE_SHA, HEAD_SHA, FIXED_SHA = "1" * 40, "2" * 40, "3" * 40
pytestmark = pytest.mark.parametrize("env", ["sqlite"], indirect=True)


@pytest.fixture
def recorded(env: Env, keys: Keys) -> str:
    return record_shopping(env, keys)


async def _deploy(client: Client, app: Any, build: Path, sha: str) -> str:
    ticket = data(await client.call_tool("request_asset_upload", {}))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as http:
        put = await http.put(ticket["uploadUrl"], content=zipped(build))
        assert put.status_code == 200, put.text
    made = data(
        await client.call_tool(
            "register_asset_build", {"uploadId": ticket["uploadId"], "commitSha": sha}
        )
    )
    return str(made["deploymentId"])


async def _diffs(client: Client, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while True:
        found = data(await client.call_tool("get_test_run_diffs", {"testRunId": run_id}))
        if found["status"] != "processing" or time.monotonic() > deadline:
            return found
        await anyio.sleep(0.2)


def test_an_agent_drives_a_change_to_zero_diffs_with_the_reference_loop(
    env: Env, keys: Keys, recorded: str, tmp_path: Path
) -> None:
    async def loop() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], "meticulous") as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"get_test_run_diffs", "trigger_test_run", "reject_diff"} <= names
            flow = data(await c.call_tool("get_session_data", {"sessionId": recorded}))
            assert flow["userFlow"][:2] == [
                "type 'milk' into input 'Name'",
                "click button 'Add item'",
            ]
            assert "GET /api/items 200 x4" in flow["networkSummary"]
            listed = data(await c.call_tool("get_sessions", {"includeNumberUserEvents": True}))
            assert listed["sessions"][0]["id"] == recorded
            assert listed["sessions"][0]["numberUserEvents"] == 8
            await _deploy(c, app, write_app(tmp_path / "base"), BASE_SHA)
            head = await _deploy(c, app, write_app(tmp_path / "head", "regressed"), HEAD_SHA)
            started = data(
                await c.call_tool(
                    "trigger_test_run", {"deploymentId": head, "baseSha": BASE_SHA, "prNumber": 7}
                )
            )
            run_id = started["testRunId"]
            assert started["status"] == "processing"
            with worker(env):
                found = await _diffs(c, run_id)
            assert found["status"] == "complete" and found["testRunId"] == run_id
            assert len(found["diffs"]) == 1, data(
                await c.call_tool(
                    "get_test_run_diffs",
                    {"testRunId": run_id, "includeAllDiffs": True, "includeDomDiffIds": True},
                )
            )
            [row] = found["diffs"]
            assert set(row) == {"replayDiffId", "screenshotName", "outcome", "sessionId"}
            assert row["sessionId"] == recorded
            shot = {"replayDiffId": row["replayDiffId"], "screenshotName": row["screenshotName"]}

            urls = data(await c.call_tool("get_image_urls", shot))
            assert urls["outcome"] == "diff"
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as http:
                image = await http.get(urls["diffImage"])
                assert image.content.startswith(b"\x89PNG")
            dom = await c.call_tool("get_dom_diff", shot)
            assert text(dom).startswith("[diff 1]") and '+"Add to list"' in text(dom)
            rows = data(
                await c.call_tool("get_timeline_diff", {"replayDiffId": row["replayDiffId"]})
            )["rows"]
            assert rows[0] == {
                "diff": "same",
                "timeMs": 0,
                "event": "urlChange",
                "description": "/",
            }
            assert (
                data(
                    await c.call_tool(
                        "reject_diff",
                        {**shot, "reason": "The button turned red", "x": 0.6, "y": 0.1},
                    )
                )
                == {}
            )
            counts = data(await c.call_tool("get_test_run_diffs_counts", {"testRunId": run_id}))
            assert counts["decisions"]["rejected"] == 1
            assert data(
                await c.call_tool("get_test_run_for_commit", {"commitSha": HEAD_SHA[:10]})
            ) == {"testRunId": run_id, "status": "complete"}
            check = data(
                await c.call_tool(
                    "get_test_run_check", {"testRunId": run_id, "checkId": "uncaught-exceptions"}
                )
            )
            assert check["status"] == "complete" and "None in 1" in check["text"]

            # The same build run for no pull request (its replays reused): nothing to reject.
            branch = data(
                await c.call_tool("trigger_test_run", {"deploymentId": head, "baseSha": BASE_SHA})
            )
            with worker(env):
                [other] = (await _diffs(c, branch["testRunId"]))["diffs"]
            refused = await c.call_tool(
                "reject_diff",
                {
                    "replayDiffId": other["replayDiffId"],
                    "screenshotName": other["screenshotName"],
                    "reason": "The button turned red",
                    "x": 0.6,
                    "y": 0.1,
                },
            )
            assert refused.is_error and text(refused).startswith(
                f"[conflict] test run {branch['testRunId']} belongs to no pull request, so its "
                "diffs cannot be rejected"
            )
            fixed = await _deploy(c, app, write_app(tmp_path / "fixed"), FIXED_SHA)
            again = data(
                await c.call_tool("trigger_test_run", {"deploymentId": fixed, "baseSha": BASE_SHA})
            )
            with worker(env):
                clean = await _diffs(c, again["testRunId"])
            assert clean == {"status": "complete", "testRunId": again["testRunId"], "diffs": []}
            [thread] = data(await c.call_tool("get_diff_comments", shot))["comments"]
            assert (thread["text"], thread["x"], thread["y"]) == ("The button turned red", 0.6, 0.1)
            reply = data(
                await c.call_tool(
                    "reply_to_diff_comment", {"commentId": thread["id"], "text": "Fixed."}
                )
            )
            [thread] = data(await c.call_tool("get_diff_comments", shot))["comments"]
            assert thread["replies"][0]["id"] == reply["commentId"]
            sent = data(
                await c.call_tool(
                    "submit_feedback", {"message": "Clear diffs", "outcome": "helped"}
                )
            )
            assert sent["feedbackId"].startswith("fbk_")

    anyio.run(loop)
    # The visitor asks to be forgotten: what the replays kept of the session goes too.
    sessions.delete_session(env, keys.admin, recorded)
    with env.db.read() as s:
        replays = list(s.scalars(select(Replay).where(Replay.session_id == recorded)))
        assert len(replays) == 3 and all(r.timeline == [] for r in replays)
        shots = list(
            s.scalars(
                select(ReplayScreenshot).where(
                    ReplayScreenshot.replay_id.in_([r.id for r in replays])
                )
            )
        )
        assert shots and all(shot.dom == "" for shot in shots)
        kept = s.scalars(select(Image).where(Image.id.in_([shot.image_id for shot in shots])))
        assert {image.expired_reason for image in kept} == {"forgotten"}


def test_refusals_come_back_as_coded_tool_errors(env: Env, keys: Keys) -> None:
    async def calls() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], "meticulous") as c:
            missing = await c.call_tool("get_test_run_diffs", {"commitSha": "abcdef1"})
            assert missing.is_error
            assert text(missing).startswith("[not_found] no test run for commit abcdef1")
            bad = await c.call_tool(
                "reject_diff",
                {"replayDiffId": "x", "screenshotName": "end-state", "reason": "r", "x": 2, "y": 0},
            )
            assert bad.is_error and text(bad).startswith("[invalid_input] invalid arguments: x")
            other = await c.call_tool(
                "get_test_run_diffs", {"testRunId": "trn_x", "project": "someone-else"}
            )
            assert text(other).startswith("[forbidden] this key belongs to project")

    anyio.run(calls)


def test_the_profile_is_served_over_stdio_too(env: Env, keys: Keys) -> None:
    params = StdioServerParameters(
        command=VIEWFINDER,
        args=["mcp", "--profile", "meticulous", "--data-dir", str(env.settings.data_dir)],
        env={"VIEWFINDER_KEY": keys.secrets["agent"]},
    )

    async def check() -> None:
        async with Client(params) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == [spec.name for spec in meticulous.TOOLS]
            missing = await client.call_tool("get_test_run_for_commit", {"commitSha": "abcdef1"})
            assert text(missing).startswith("[not_found] no test run for commit abcdef1")

    anyio.run(check)
