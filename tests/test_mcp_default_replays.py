"""Session replays in the default profile, with the official MCP SDK client over Streamable
HTTP: the recorded sessions, a run started for a pull request and read until complete, one
screenshot diff's images, DOM, timeline and coverage, then the default review tools on its
diff_id (a thread, a denial; accepting is a person's). Builds are real uploaded zips and the
session is one the recorder's ingest stored."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from fastapi import FastAPI
from mcp.client import Client

from tests.agent_session import BASE, connect, data, record_shopping, serving, text, worker, zipped
from tests.conftest import Keys
from tests.replay_app import write_app
from viewfinder.services.env import Env

BASE_SHA, HEAD_SHA = "6" * 40, "7" * 40
pytestmark = pytest.mark.parametrize("env", ["sqlite"], indirect=True)


async def _deploy(app: FastAPI, key: str, build: Path, sha: str) -> str:
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url=BASE, headers=headers
    ) as http:
        ticket = (await http.post("/api/v1/deployments/uploads")).json()
        put = await http.put(ticket["upload_url"], content=zipped(build))
        assert put.status_code == 200, put.text
        made = await http.post(
            "/api/v1/deployments", json={"upload_id": ticket["upload_id"], "commit_sha": sha}
        )
        assert made.status_code == 201, made.text
        return str(made.json()["id"])


async def _run(client: Client, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while True:
        found = data(await client.call_tool("get_replays", {"test_run_id": run_id}))
        if found["run"]["status"] != "processing" or time.monotonic() > deadline:
            return found
        await anyio.sleep(0.2)


def test_the_default_profile_replays_sessions_and_reviews_their_diffs_in_its_own_words(
    env: Env, keys: Keys, tmp_path: Path
) -> None:
    recorded = record_shopping(env, keys)

    async def loop() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], "default") as c:
            listed = data(await c.call_tool("get_replays", {"view": "sessions"}))
            assert [s["id"] for s in listed["sessions"]] == [recorded]
            assert listed["sessions"][0]["number_user_events"] == 8
            await _deploy(app, keys.secrets["ci"], write_app(tmp_path / "base"), BASE_SHA)
            head = await _deploy(
                app, keys.secrets["ci"], write_app(tmp_path / "head", "regressed"), HEAD_SHA
            )
            started = data(
                await c.call_tool(
                    "replay_sessions", {"deployment_id": head, "base_sha": BASE_SHA, "pr_number": 4}
                )
            )
            assert started["status"] == "processing" and started["sessionIds"] == [recorded]
            with worker(env):
                found = await _run(c, started["testRunId"])
            run = found["run"]
            assert (run["status"], run["prNumber"], run["commitSha"]) == ("complete", 4, HEAD_SHA)
            assert found["counts"]["outcomes"]["diff"] == 6
            assert found["counts"]["decisions"]["unreviewed"] == 6
            [row] = found["diffs"]
            assert (row["outcome"], row["decision"], row["openComments"]) == (
                "diff",
                "unreviewed",
                0,
            )
            shot = {"replay_diff_id": row["replayDiffId"], "screenshot": row["screenshotName"]}

            images = data(await c.call_tool("get_replays", {"view": "images", **shot}))
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as http:
                png = await http.get(images["detail"]["diffImage"])
                assert png.content.startswith(b"\x89PNG")
            dom = data(await c.call_tool("get_replays", {"view": "dom", **shot}))["detail"]
            assert dom["diff"].startswith("[diff 1]") and '+"Add to list"' in dom["diff"]
            timeline = data(await c.call_tool("get_replays", {"view": "timeline", **shot}))
            assert timeline["detail"]["rows"][0]["event"] == "urlChange"
            coverage = data(await c.call_tool("get_replays", {"view": "coverage", **shot}))
            assert coverage["detail"]["files"] == []
            missing = await c.call_tool(
                "get_replays", {"view": "dom", "replay_diff_id": row["replayDiffId"]}
            )
            assert text(missing) == "[invalid_input] view dom needs screenshot"

            # The default review tools take the screenshot diff's diff_id.
            anchor = {"type": "point", "x": 0.6, "y": 0.1}
            thread = data(
                await c.call_tool(
                    "add_comment",
                    {"diff_id": row["diffId"], "body": "The button turned red", "anchor": anchor},
                )
            )
            listed_threads = data(await c.call_tool("list_comments", {"diff_id": row["diffId"]}))
            assert [t["id"] for t in listed_threads["items"]] == [thread["id"]]
            accept = await c.call_tool(
                "review_diff", {"diff_id": row["diffId"], "decision": "accept"}
            )
            assert text(accept).startswith("[forbidden] only a person may accept a screenshot diff")
            denied = data(
                await c.call_tool("review_diff", {"diff_id": row["diffId"], "decision": "deny"})
            )
            assert denied["baseline_updated"] is False and denied["message"].startswith(
                "Recorded: denied"
            )
            again = data(await c.call_tool("get_replays", {"test_run_id": run["testRunId"]}))
            assert again["counts"]["decisions"]["rejected"] == 1
            assert again["diffs"][0]["openComments"] == 1

            # A run of the same build for no pull request (its replays reused): no denial.
            branch = data(
                await c.call_tool("replay_sessions", {"commit_sha": HEAD_SHA, "base_sha": BASE_SHA})
            )
            with worker(env):
                [other] = (await _run(c, branch["testRunId"]))["diffs"]
            refused = await c.call_tool(
                "review_diff", {"diff_id": other["diffId"], "decision": "deny"}
            )
            assert text(refused).startswith(
                f"[conflict] test run {branch['testRunId']} belongs to no pull request"
            )
            unchanged = data(await c.call_tool("get_replays", {"test_run_id": branch["testRunId"]}))
            assert unchanged["counts"]["decisions"]["rejected"] == 0

    anyio.run(loop)
