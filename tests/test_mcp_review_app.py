"""The MCP App ui://viewfinder/review against a real `viewfinder serve`: create_review and
get_review link to it, its three tools are for the app only, the Inspector CLI finds it
(--app-info), and its HTML, loaded in Chromium under a small host page that speaks the Apps
postMessage protocol (the test relays the app's tool calls with the SDK client), lets the person
mark and decide with the review link's token."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from playwright.async_api import Page, async_playwright, expect

from tests.chromium import CHROMIUM, FLAGS
from tests.conftest import shot
from tests.mcp_clients import connect
from tests.server import Server, clean_environ, running_server
from viewfinder.mcp.review_app import APP_URI

INSPECTOR = Path(__file__).parent / ".npm" / "node_modules" / ".bin" / "inspector"
APP_TOOLS = {"add_mark", "decide_review", "verify_mark"}
PNG = "data:image/png;base64," + base64.b64encode(shot(size=(300, 150))).decode()
HOST = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head>
<body><script>
window.host = {
  calls: [],
  start(html, result) {
    const frame = document.createElement("iframe");
    frame.title = "Viewfinder review";
    frame.width = "900"; frame.height = "900";
    frame.srcdoc = html;
    this.frame = frame;
    window.addEventListener("message", (event) => {
      const m = event.data;
      if (!m || m.jsonrpc !== "2.0") return;
      if (m.method === "ui/initialize") {
        this.reply(m.id, { protocolVersion: m.params.protocolVersion,
          hostInfo: { name: "test-host", version: "1" }, hostCapabilities: { serverTools: {} },
          hostContext: { theme: "light" } });
      } else if (m.method === "ui/notifications/initialized") {
        frame.contentWindow.postMessage(
          { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result }, "*");
      } else if (m.method === "tools/call") {
        this.calls.push(m);
      }
    });
    document.body.append(frame);
  },
  reply(id, result) { this.frame.contentWindow.postMessage({ jsonrpc: "2.0", id, result }, "*"); },
};
</script></body></html>"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server("sqlite", tmp_path_factory.mktemp("server")) as running:
        yield running


def dumped(result: Any) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)  # type: ignore[no-any-return]


async def relay(page: Page, client: Client) -> dict[str, Any]:
    """Carry out the app's next tools/call through the SDK client, as a host does."""
    await page.wait_for_function("() => host.calls.length > 0", timeout=30_000)
    call = await page.evaluate("() => host.calls.shift()")
    result = await client.call_tool(call["params"]["name"], call["params"]["arguments"])
    await page.evaluate("([id, result]) => host.reply(id, result)", [call["id"], dumped(result)])
    return call["params"]  # type: ignore[no-any-return]


def test_the_review_app_is_linked_listed_and_acts_with_the_links_token(server: Server) -> None:
    async def flow() -> None:
        url = f"{server.url}/mcp/revisemy"
        async with connect(url, key=server.keys["agent"]) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("create_review", "get_review"):
                assert (tools[name].meta or {})["ui"] == {"resourceUri": APP_URI}
            for name in APP_TOOLS:
                assert (tools[name].meta or {})["ui"]["visibility"] == ["app"]
            read = await client.read_resource(APP_URI)
            [content] = read.contents
            assert content.mime_type == "text/html;profile=mcp-app"
            html = content.text  # type: ignore[union-attr]
            assert "<script>" in html and "src=" not in html.split("<script>")[0]

            created = await client.call_tool(
                "create_review", {"title": "Checkout", "images": [PNG]}
            )
            assert created.structured_content is not None
            review = created.structured_content
            assert review["review_url"] in created.content[0].text  # type: ignore[union-attr]

            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
                page = await browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                await page.set_content(HOST)
                await page.evaluate(
                    "([html, result]) => host.start(html, result)", [html, dumped(created)]
                )
                app = page.frame_locator("iframe")
                await expect(app.get_by_role("heading", name="Checkout")).to_be_visible()
                await expect(app.get_by_role("img", name="Screenshot 1: image-1")).to_be_visible()

                # The person sets a point and writes a mark: the app calls add_mark.
                await app.get_by_role("img", name="Screenshot 1: image-1").click(
                    position={"x": 30, "y": 40}
                )
                await app.get_by_label("Severity").select_option("must-fix")
                await app.get_by_label("Mark on screenshot 1").fill("Too dark")
                await app.get_by_role("button", name="Add mark").click()
                params = await relay(page, client)
                assert params["name"] == "add_mark"
                assert params["arguments"]["token"] == review["review_url"].rsplit("/r/", 1)[1]
                await expect(app.get_by_text("must-fix · open · Too dark")).to_be_visible()

                await app.get_by_label("Note for the agent").fill("Lighter")
                await app.get_by_role("button", name="Request changes").click()
                assert (await relay(page, client))["name"] == "decide_review"
                await expect(app.locator("#facts")).to_contain_text("changes requested")
                assert errors == []
                await browser.close()

            polled = await client.call_tool("get_review", {"id": review["id"]})
            assert polled.structured_content is not None
            after = polled.structured_content
            assert after["status"] == "changes_requested" and after["decision_note"] == "Lighter"
            [mark] = after["work_packets"]["must_fix"]
            assert mark["point"]["x"] == pytest.approx(0.1, abs=0.02)

    anyio.run(flow)


def test_the_inspector_finds_the_review_app(server: Server, tmp_path: Path) -> None:
    if not INSPECTOR.exists():
        pytest.fail("the MCP Inspector CLI is not installed: run `make clients`")
    command = [
        str(INSPECTOR),
        "--cli",
        f"{server.url}/mcp/revisemy",
        "--transport",
        "http",
        "--format",
        "json",
        "--header",
        f"Authorization: Bearer {server.keys['agent']}",
        "--advertise-apps",
        "--app-info",
        "--method",
        "tools/call",
        "--tool-name",
        "get_review",
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=clean_environ() | {"HOME": str(tmp_path), "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout.strip().splitlines()[-1])
    assert APP_URI in json.dumps(info)
