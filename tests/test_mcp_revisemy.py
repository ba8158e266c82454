"""The ReviseMy profile at /mcp/revisemy, driven end to end by the official MCP SDK client over
Streamable HTTP with a project key as Bearer token: the agent creates a review, the person
marks and decides through their link's REST routes, the agent resolves with an after-image
and opens the next pass, the person verifies and approves, and the signed webhook arrives at
a real receiver. Every refusal of the reference answers its bracketed code."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.agent_session import BASE, connect, data, serving, text, worker
from tests.capture_site import WIDE_EMAIL, slide_deck
from tests.conftest import Keys, shot
from tests.mcp_clients import check_output, refusal
from tests.webhook_receiver import receiving
from viewfinder.services.env import Env

PROFILE = "revisemy"
BUTTON = shot(box=(20, 20, 60, 40), size=(200, 100))
FIXED = shot(box=(20, 20, 60, 40), size=(200, 100), fill=(120, 120, 120))
SEED_TOOLS = {
    "create_review",
    "get_review",
    "list_reviews",
    "add_screenshot",
    "add_findings",
    "resolve_marks",
    "request_second_opinion",
    "get_billing",
    "create_checkout",
    "create_portal",
    "cancel_subscription",
}
APP_TOOLS = {"add_mark", "decide_review", "verify_mark"}  # for the review app only


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def link(review: dict[str, Any], path: str = "") -> str:
    return "/api/v1/r/" + review["review_url"].rsplit("/r/", 1)[1] + path


def test_the_checkup_loop_runs_end_to_end_with_the_sdk_client(env: Env, keys: Keys) -> None:
    async def flow() -> None:
        with receiving() as receiver, worker(env):
            env.settings = env.settings.model_copy(
                update={"capture_allow": f"127.0.0.1:{receiver.port}"}
            )
            async with (
                serving(env) as app,
                connect(app, keys.secrets["agent"], PROFILE) as agent,
                httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as web,
            ):
                tools = {t.name: t for t in (await agent.list_tools()).tools}
                assert set(tools) == SEED_TOOLS | APP_TOOLS
                hidden = {
                    n
                    for n, t in tools.items()
                    if (t.meta or {}).get("ui", {}).get("visibility") == ["app"]
                }
                assert hidden == APP_TOOLS
                prompts = {p.name for p in (await agent.list_prompts()).prompts}
                assert prompts == {"design_checkup_loop", "check_page"}
                page = await agent.get_prompt(
                    "check_page", {"url": "https://example.com", "focus": "the header"}
                )
                assert "the header" in page.messages[0].content.text  # type: ignore[union-attr]

                created = await agent.call_tool(
                    "create_review",
                    {
                        "title": "Checkout",
                        "images": [data_url(BUTTON)],
                        "webhook_url": f"{receiver.url}/hook",
                    },
                )
                first = check_output(tools["create_review"], created, json_text=False)
                assert first["status"] == "pending" and first["pass"] == 1
                assert first["review_url"] in text(created)
                assert first["next_action"]["action"] == "wait_for_human"
                receiver.secret = first["webhook"]["secret"]

                early = await agent.call_tool(
                    "resolve_marks", {"id": first["id"], "marks": [{"id": "cmt_x"}]}
                )
                assert refusal(early).startswith("[conflict] resolve_marks works only while")

                # The person marks on their page (its REST routes) and asks for changes.
                mark = await web.post(
                    link(first, "/marks"),
                    json={
                        "screenshot_index": 0,
                        "body": "Too dark",
                        "severity": "must-fix",
                        "area": {"x": 0.1, "y": 0.2, "w": 0.2, "h": 0.2},
                    },
                )
                assert mark.status_code == 201, mark.text
                mark_id = mark.json()["id"]
                decided = await web.post(
                    link(first, "/decision"), json={"decision": "changes_requested", "note": "Fix"}
                )
                assert decided.status_code == 200, decided.text
                await _until(lambda: len(receiver.deliveries) >= 1, receiver)

                polled = data(await agent.call_tool("get_review", {"id": first["id"]}))
                assert polled["next_action"]["action"] == "apply_pins_then_next_pass"
                assert polled["work_packets"]["must_fix"][0]["number"] == "M1"

                resolved = await agent.call_tool(
                    "resolve_marks",
                    {
                        "id": first["id"],
                        "marks": [
                            {"id": mark_id, "note": "Lighter grey", "after_image": data_url(FIXED)},
                            {"id": mark_id, "status": "verified"},
                        ],
                    },
                )
                assert resolved.is_error  # verified is no status an agent may set
                resolved = await agent.call_tool(
                    "resolve_marks",
                    {
                        "id": first["id"],
                        "marks": [
                            {"id": mark_id, "note": "Lighter grey", "after_image": data_url(FIXED)},
                        ],
                    },
                )
                result = check_output(tools["resolve_marks"], resolved, json_text=False)
                assert result["updated"][0]["number"] == "M1"
                assert result["next_action"]["action"] == "open_next_pass"

                nxt = await agent.call_tool(
                    "create_review",
                    {
                        "title": "Pass 2",
                        "images": [data_url(FIXED)],
                        "parent_id": first["id"],
                    },
                )
                second = data(nxt)
                assert second["pass"] == 2 and second["webhook"]["url"] == f"{receiver.url}/hook"
                second = await _compared(agent, second["id"])
                [waiting] = second["work_packets"]["awaiting_verification"]
                assert waiting["pass_diff"]["summary"] == (
                    "M1 resolved; its area changed between pass 1 and pass 2"
                )
                assert waiting["after_image_url"]

                verified = await web.post(link(second, f"/marks/{mark_id}/verify"))
                assert verified.json()["status"] == "verified", verified.text
                approved = await web.post(
                    link(second, "/decision"), json={"decision": "approved", "note": "Ship it"}
                )
                assert approved.json()["status"] == "approved"
                done = data(await agent.call_tool("get_review", {"id": second["id"]}))
                assert done["next_action"]["action"] == "done"
                await _until(lambda: len(receiver.deliveries) >= 2, receiver)

                hooks = receiver.deliveries
                assert all(d.signed for d in hooks)
                assert hooks[-1].headers["x-viewfinder-event"] == "review.decided"
                assert hooks[-1].headers["x-viewfinder-review"] == second["id"]
                body = hooks[-1].json()
                assert body["event"] == "review.decided"
                assert body["review"]["status"] == "approved"
                assert body["review"]["decision_note"] == "Ship it"

                listed = data(await agent.call_tool("list_reviews", {}))
                assert [r["pass"] for r in listed["reviews"]] == [2, 1]

    anyio.run(flow)


async def _until(condition: Any, receiver: Any) -> None:
    with anyio.fail_after(30):
        while not condition():
            receiver.arrived.clear()
            await anyio.to_thread.run_sync(receiver.arrived.wait, 0.5)


async def _compared(agent: Any, review_id: str) -> dict[str, Any]:
    """The review once its screenshots are compared with the pass before (the worker thread
    computes them)."""
    with anyio.fail_after(30):
        while True:
            review = data(await agent.call_tool("get_review", {"id": review_id}))
            states = [s["diff"]["state"] for s in review["screenshots"] if s["diff"]]
            if states and all(s != "requested" for s in states):
                return review
            await anyio.sleep(0.05)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"title": "t"}, "[invalid_input] provide exactly one source"),
        ({"title": "t", "images": [data_url(BUTTON)], "html": "<p>x</p>"}, "gave images and html"),
        ({"title": "t", "images": [data_url(BUTTON)] * 6}, "images takes 1 to 5 screenshots"),
        ({"title": "t", "capture_url": True, "page_url": "http://10.0.0.7/"}, "[address_refused]"),
    ],
)
def test_every_refusal_of_create_review_names_its_code(
    env: Env, keys: Keys, arguments: dict[str, Any], said: str
) -> None:
    async def flow() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], PROFILE) as agent:
            answer = refusal(await agent.call_tool("create_review", arguments))
            assert said in answer
            if "exactly one source" in said:
                for name in ("images", "capture_url", "pdf", "html"):
                    assert name in answer

    anyio.run(flow)


def test_hints_credits_payments_and_a_failed_capture_answer_as_the_reference_says(
    env: Env, keys: Keys
) -> None:
    deck = base64.b64encode(slide_deck()).decode()  # printed by Chromium before the loop runs

    async def flow() -> None:
        env.settings = env.settings.model_copy(update={"capture_allow": "127.0.0.1:9"})
        with worker(env):
            async with (
                serving(env) as app,
                connect(app, keys.secrets["agent"], PROFILE) as agent,
                connect(app, keys.secrets["admin"], PROFILE) as admin,
            ):
                failed = await agent.call_tool(
                    "create_review",
                    {
                        "title": "Down",
                        "capture_url": True,
                        "page_url": "http://127.0.0.1:9/",
                    },
                )
                review = data(failed)
                assert review["capture"]["state"] == "failed"
                assert {s["meta"]["origin"] for s in review["screenshots"]} == {"capture_failed"}
                assert review["credits"] == 0  # nothing came through: its 5 credits came back
                assert "add_screenshot" in text(failed)
                added = data(
                    await agent.call_tool(
                        "add_screenshot", {"id": review["id"], "image": data_url(BUTTON)}
                    )
                )
                assert added["screenshots"][-1]["meta"]["origin"] == "image"

                must = await agent.call_tool(
                    "add_findings",
                    {"id": review["id"], "findings": [{"severity": "must-fix", "body": "x"}]},
                )
                assert refusal(must).startswith("[invalid_input]")
                hint = data(
                    await agent.call_tool(
                        "add_findings",
                        {
                            "id": review["id"],
                            "findings": [
                                {"severity": "polish", "body": "Align", "screenshot_index": 2}
                            ],
                        },
                    )
                )
                assert hint["added"][0]["number"] == "S1"
                assert hint["review"]["status"] == "pending"

                email = data(
                    await agent.call_tool(
                        "create_review", {"title": "Newsletter", "html": WIDE_EMAIL}
                    )
                )
                assert email["type"] == "email" and email["capture"]["state"] == "done"
                rules = {p["rule"] for p in email["work_packets"]["second_opinion"]}
                assert "email-width" in rules

                slides = data(
                    await agent.call_tool("create_review", {"title": "Deck", "pdf": deck})
                )
                assert slides["type"] == "presentation"
                assert [s["label"] for s in slides["screenshots"]][:1] == ["page-1"]

                billing = data(await agent.call_tool("get_billing", {}))
                # The email (3) and the deck (1); the failed capture was refunded.
                assert billing["used"] == 4 and billing["burn"]["capture_url"] == 5
                pay = await agent.call_tool("create_checkout", {"product": "plus"})
                assert refusal(pay).startswith("[payments_disabled]")
                assert "self-hosted" in refusal(pay)

                async with httpx2.AsyncClient(
                    transport=httpx2.ASGITransport(app=app), base_url=BASE
                ) as http:
                    put = await http.put(
                        "/api/v1/project/checkup-allowance",
                        json={"allowance": 4},
                        headers={"Authorization": f"Bearer {keys.secrets['admin']}"},
                    )
                    assert put.status_code == 200, put.text
                    card = (await http.get("/.well-known/mcp/server-card.json")).json()
                    llms = (await http.get("/llms.txt")).text
                spent = await agent.call_tool(
                    "create_review", {"title": "More", "images": [data_url(BUTTON)]}
                )
                assert refusal(spent).startswith("[insufficient_credits]")
                assert (await admin.call_tool("get_billing", {})).structured_content
                remote = next(r for r in card["remotes"] if r["_meta"]["profile"] == PROFILE)
                assert remote["url"].endswith("/mcp/revisemy")
                assert set(remote["_meta"]["tools"]) == SEED_TOOLS | APP_TOOLS
                assert remote["_meta"]["prompts"] == ["design_checkup_loop", "check_page"]
                for name in [*SEED_TOOLS, "design_checkup_loop", "open_checkup"]:
                    assert f"`{name}`" in llms
                assert json.dumps(card)

    anyio.run(flow)


def test_the_profile_over_stdio_proxies_to_a_real_server(tmp_path: Path) -> None:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.server import VIEWFINDER, running_server

    (tmp_path / "server").mkdir()
    with running_server("sqlite", tmp_path / "server") as server:

        async def check() -> None:
            proxy = StdioServerParameters(
                command=VIEWFINDER,
                args=["mcp", "--profile", PROFILE],
                env={"VIEWFINDER_URL": server.url, "VIEWFINDER_KEY": server.keys["agent"]},
                cwd=tmp_path,
            )
            async with Client(proxy) as client:
                listed = {t.name for t in (await client.list_tools()).tools}
                assert listed == SEED_TOOLS | APP_TOOLS
                created = data(
                    await client.call_tool(
                        "create_review", {"title": "Over stdio", "images": [data_url(BUTTON)]}
                    )
                )
                assert created["review_url"].startswith(server.url + "/r/")
                polled = data(await client.call_tool("get_review", {"id": created["id"]}))
                assert polled["next_action"]["action"] == "wait_for_human"
                two = refusal(
                    await client.call_tool(
                        "create_review", {"title": "t", "pdf": "x", "html": "<p>x</p>"}
                    )
                )
                assert two.startswith("[invalid_input] provide exactly one source")

        anyio.run(check)
