"""A person runs their side of a design checkup in Debian's Chromium against a real server,
signed in by nothing but the link: draw a mark on the screenshot, request changes; after the
agent resolves it and opens the next pass, see whether its area changed, verify it and
approve. The page and its board are axe clean in light and dark."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests import dashboard
from tests.conftest import shot
from tests.server import Server, running_server

BUTTON = shot(box=(80, 80, 240, 160), size=(800, 400))
FIXED = shot(box=(80, 80, 240, 160), size=(800, 400), fill=(120, 120, 120))


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server("sqlite", tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from dashboard.browser()


def agent(server: Server) -> httpx.Client:
    return httpx.Client(
        base_url=f"{server.url}/api/v1",
        headers={"Authorization": f"Bearer {server.keys['agent']}"},
        timeout=60,
    )


def drag(page: Page, selector: str, start: tuple[float, float], end: tuple[float, float]) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None
    x0, y0 = box["x"] + box["width"] * start[0], box["y"] + box["height"] * start[1]
    x1, y1 = box["x"] + box["width"] * end[0], box["y"] + box["height"] * end[1]
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=4)
    page.mouse.move(x1, y1, steps=4)
    page.mouse.up()


def compared(api: httpx.Client, review_id: str) -> dict[str, object]:
    """The review once the server's worker compared its screenshots with the pass before."""
    deadline = time.monotonic() + 60
    while True:
        review = api.get(f"/reviews/{review_id}").json()
        states = [s["diff"]["state"] for s in review["screenshots"] if s["diff"]]
        if (states and "requested" not in states) or time.monotonic() > deadline:
            return review  # type: ignore[no-any-return]
        time.sleep(0.1)


def test_a_person_marks_verifies_and_approves_through_the_link_alone(
    server: Server, browser: Browser
) -> None:
    with agent(server) as api:
        first = api.post("/reviews", json={"title": "Checkout", "images": [data_url(BUTTON)]})
        assert first.status_code == 201, first.text
        review = first.json()

    problems: list[str] = []
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=dashboard.DESKTOP, color_scheme=scheme)
        page = context.new_page()
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(review["review_url"])
        dashboard.settle(page)
        assert dashboard.axe_violations(page) == [], scheme
        context.close()

    context = browser.new_context(viewport=dashboard.DESKTOP)
    page = context.new_page()
    page.on("pageerror", lambda exc: problems.append(str(exc)))

    # A guest, on the guest link, suggests; the suggestion waits as a hint (G1).
    page.goto(review["guest_share_url"])
    page.get_by_label("Your suggestion").fill("A bigger logo")
    page.get_by_role("button", name="Send suggestion").click()
    expect(page.locator(".pins")).to_contain_text("G1")
    dashboard.settle(page)
    assert dashboard.axe_violations(page) == []

    page.goto(review["review_url"])
    expect(page.get_by_role("button", name="Accept G1 as a mark")).to_be_visible()
    expect(page.get_by_role("heading", name="Checkout")).to_be_visible()

    # Zoom in and out again (scrolling pans the zoomed screenshot).
    page.get_by_role("button", name="100%").click()
    expect(page.get_by_role("button", name="100%")).to_have_attribute("aria-pressed", "true")
    assert page.locator(".shot img").evaluate("img => img.getBoundingClientRect().width") == 800
    page.get_by_role("button", name="Fit").click()

    # Draw a rectangle over the button, say what is wrong, save: M1 is on the image and listed.
    drag(page, ".shot[data-shot='0'] img", (0.08, 0.18), (0.32, 0.42))
    form = page.locator("#mark-form")
    expect(form).to_be_visible()
    form.get_by_label("Severity").select_option("must-fix")
    form.get_by_label("What is wrong").fill("The button is too dark")
    form.get_by_label("Suggested copy (optional)").fill("Buy now")
    form.get_by_role("button", name="Save mark").click()
    expect(page.locator(".pin-box:not(.hint) .pin-label")).to_have_text("M1")
    expect(page.locator(".pins").first).to_contain_text("The button is too dark")
    expect(page.locator(".pins").first).to_contain_text("Use: “Buy now”")

    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("c")
    expect(page.get_by_role("button", name="Request changes")).to_be_focused()
    page.get_by_label("Note for the agent").fill("Lighter, please")
    page.get_by_role("button", name="Request changes").click()
    expect(page.locator("#status")).to_have_text("changes requested")

    with agent(server) as api:
        review = api.get(f"/reviews/{review['id']}").json()
        [mark] = review["work_packets"]["must_fix"]
        area = mark["area"]
        assert area["x"] == pytest.approx(0.08, abs=0.02) and area["w"] == pytest.approx(
            0.24, abs=0.02
        )
        resolved = api.post(
            f"/reviews/{review['id']}/resolve",
            json={
                "marks": [
                    {"id": mark["id"], "note": "Lighter grey", "after_image": data_url(FIXED)}
                ]
            },
        )
        assert resolved.status_code == 200, resolved.text
        nxt = api.post(
            "/reviews",
            json={
                "title": "Checkout, pass 2",
                "images": [data_url(FIXED)],
                "parent_id": review["id"],
            },
        )
        second = compared(api, nxt.json()["id"])

    page.goto(str(second["review_url"]))
    item = page.locator(f"#pin-{mark['id']}")
    expect(item).to_contain_text("M1 resolved; its area changed between pass 1 and pass 2")
    expect(item).to_contain_text("Lighter grey")
    expect(page.get_by_role("img", name="What changed between the passes")).to_be_visible()
    dashboard.settle(page)
    assert dashboard.axe_violations(page) == []
    item.get_by_role("button", name="Verify M1").click()
    expect(page.locator(f"#pin-{mark['id']} .badge.status-verified")).to_have_text("verified")

    page.goto(f"{second['review_url']}/board")
    expect(page.locator("#col-verified")).to_contain_text("1")
    assert dashboard.axe_violations(page) == []

    page.goto(str(second["review_url"]))
    page.get_by_label("Note for the agent").fill("Ship it")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator("#status")).to_have_text("approved")
    with agent(server) as api:
        done = api.get(f"/reviews/{second['id']}").json()
        assert done["next_action"]["action"] == "done" and done["decision_note"] == "Ship it"
    page.goto(f"{server.url}/r/not-a-real-token-at-all")
    expect(page.get_by_text("no review at this link")).to_be_visible()
    assert problems == []
