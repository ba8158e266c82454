"""A person reviews a build in the dashboard, in Debian's Chromium against a real server: sign
in, open the build CI uploaded, look at a change in every view mode, discuss it on the image,
resolve the thread, accept with the keyboard, and find the baseline replaced."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests import dashboard
from tests.server import Server, running_server

# One test per module: under `pytest -n` a module-scoped server would start once per worker.


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server("sqlite", tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from dashboard.browser()


def drag(page: Page, selector: str, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Press, move and release the mouse between two points given as fractions of the box."""
    box = page.locator(selector).bounding_box()
    assert box is not None
    x0, y0 = box["x"] + box["width"] * start[0], box["y"] + box["height"] * start[1]
    x1, y1 = box["x"] + box["width"] * end[0], box["y"] + box["height"] * end[1]
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=4)
    page.mouse.move(x1, y1, steps=4)
    page.mouse.up()


def test_a_person_reviews_a_change_in_the_dashboard(
    server: Server, browser: Browser, tmp_path: Path
) -> None:
    builds = dashboard.seed(server, tmp_path)
    context = browser.new_context(viewport=dashboard.DESKTOP)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"{exc} {exc.stack}"))
    page.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))

    # Signing in lands on the builds, newest first; the PR's build is there with its counts.
    page.goto(f"{server.url}/builds/{builds['second']}")
    expect(page).to_have_url(re.compile(r"/login\?next="))
    page.get_by_text("Sign in with a project key").click()
    page.get_by_label("API key").fill(server.keys["admin"])
    page.get_by_role("button", name="Sign in with the key").click()
    expect(page).to_have_url(f"{server.url}/builds/{builds['second']}")
    page.get_by_role("link", name="Builds", exact=True).first.click()
    rows = page.locator(".build-row")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("acme/web#7")
    expect(rows.first).to_contain_text("3 changed")
    rows.first.get_by_role("link").first.click()

    # The build: groups in review order; a story name with markup is shown as text.
    expect(page.locator("details.group > summary h2")).to_have_text(
        ["Changed (3)", "New (2)", "Removed (1)", "Unchanged (2)"]
    )
    expect(page.get_by_text(dashboard.XSS_NAME)).to_be_visible()
    expect(page.locator("#group-unchanged")).not_to_have_attribute("open", "")
    page.get_by_role("link", name="checkout/cart").click()
    expect(page.locator("h1")).to_have_text("checkout/cart")
    dashboard.story_ready(page)

    # Every view mode, by key and by click; each is its own address.
    viewer = page.locator("#viewer")
    for key, mode in enumerate(("side", "overlay", "swipe", "diff", "changes"), 1):
        page.keyboard.press(str(key))
        expect(viewer).to_have_attribute("data-mode", mode)
        expect(page).to_have_url(re.compile(f"mode={mode}"))
    expect(page.locator(".changes")).to_contain_text("Change 1 of 1")
    expect(page.locator(".crop img")).to_have_count(2)
    page.get_by_role("link", name="2 Overlay").click()
    page.locator("#opacity").fill("80")
    expect(page.locator('.layer[data-side="after"]')).to_have_css("opacity", "0.8")
    page.get_by_role("link", name="3 Swipe").click()
    expect(page.locator(".swipe-line")).to_be_visible()
    page.get_by_role("link", name="1 Side by side").click()
    expect(page.locator(".pane")).to_have_count(2)

    # A rectangle drawn on the after image starts a thread there; its body is text, not markup.
    page.get_by_role("radio", name=re.compile("^Comment")).check()
    drag(page, '.layer[data-side="after"] svg', (0.05, 0.5), (0.35, 0.7))
    form = page.locator("#new-thread")
    expect(form).to_be_visible()
    expect(form.get_by_label("After")).to_be_checked()
    form.get_by_label("Comment").fill(dashboard.XSS_BODY)
    form.get_by_role("button", name="Post comment").click()
    thread = page.locator(".thread").first
    expect(thread.locator(".body")).to_have_text(dashboard.XSS_BODY)
    expect(thread).to_contain_text("rect on after")
    expect(page.locator('.layer[data-side="after"] svg rect.mark')).to_have_count(1)

    # The open thread blocks accepting, and the page says why.
    accept = page.get_by_role("button", name="Accept")
    expect(accept).to_be_disabled()
    expect(page.locator("#blocked-reason")).to_contain_text("Resolve the 1 open comment thread")
    page.keyboard.press("a")
    expect(page.locator("#toast")).to_contain_text("Resolve the 1 open comment thread")

    # Reply, then resolve: accept is back.
    thread.get_by_label("Reply").fill("The new colour is on purpose: the brand changed.")
    thread.get_by_role("button", name="Reply").click()
    expect(page.locator(".thread .comment")).to_have_count(2)
    # Your own comments can be edited and deleted (after a confirmation).
    reply = page.locator(".thread .comment").nth(1)
    reply.get_by_role("button", name="Edit").click()
    reply.get_by_label("Edit comment").fill("On purpose: the brand colour changed.")
    reply.get_by_role("button", name="Save").click()
    expect(page.locator(".thread .comment").nth(1).locator(".body")).to_have_text(
        "On purpose: the brand colour changed."
    )
    page.locator(".thread .comment").nth(1).get_by_role("button", name="Delete").click()
    page.locator("#confirm").get_by_role("button", name="Delete").click()
    expect(page.locator(".thread .comment")).to_have_count(1)
    page.locator(".thread").first.get_by_role("button", name="Resolve").click()
    expect(page.locator(".thread").first.locator(".badge.status-resolved")).to_have_text("resolved")
    expect(accept).to_be_enabled()

    # The thread has its own address, which opens the story with the thread picked out.
    link = page.locator(".thread .permalink").first.get_attribute("href")
    assert link is not None and "thread=cmt_" in link

    page.keyboard.press("a")
    toast = page.locator("#toast")
    expect(toast).to_contain_text("the candidate is now this pull request's baseline")
    expect(page.locator("#facts .badge.decision-accepted")).to_have_text("accepted")

    # The baseline changed: the PR's build gets a baseline of the PR's own, approved by the
    # person; the shared one waits for the PR to merge.
    current = server.json("baselines", "--name", "checkout/cart", key="admin")["items"]
    assert {(b["scope"], b["source"]) for b in current} == {
        ("shared", "registered"),
        ("context", "approved"),
    }
    page.goto(f"{server.url}{link}")
    expect(page.locator(".thread[aria-current=true]")).to_have_count(1)
    page.goto(f"{server.url}/baselines")
    cart = page.locator(".lineage", has_text="checkout/cart")
    approved = cart.locator(".baseline.current", has_text="pull request")
    expect(approved.locator(".badge.source")).to_have_text("approved")
    expect(approved).to_contain_text("by admin")

    # j and k walk the build's stories.
    page.goto(f"{server.url}/builds/{builds['second']}")
    page.get_by_role("link", name="checkout/cart").click()
    dashboard.story_ready(page)
    page.keyboard.press("j")
    expect(page.locator("h1")).not_to_have_text("checkout/cart")
    dashboard.story_ready(page)
    page.keyboard.press("k")
    expect(page.locator("h1")).to_have_text("checkout/cart")

    # A build still being uploaded updates itself as CI finishes it.
    ci = {"Authorization": f"Bearer {server.keys['ci']}"}
    late = httpx.post(f"{server.url}/api/v1/builds", json={"commit_sha": "c3c3c3c3"}, headers=ci)
    page.goto(f"{server.url}/builds/{late.json()['id']}")
    expect(page.locator(".badge.state-uploading")).to_be_visible()
    stories = f"{server.url}/api/v1/builds/{late.json()['id']}/stories"
    png = dashboard.screen((10, 10, 10))
    assert httpx.put(stories, params={"name": "late"}, content=png, headers=ci).is_success
    assert httpx.post(f"{stories[:-8]}/finalize", headers=ci).is_success
    expect(page.locator("#group-new")).to_contain_text("late")
    expect(page.locator("#build")).not_to_have_attribute("data-live", re.compile(".*"))

    assert page.evaluate("window.__xss") is None
    assert problems == []
    context.close()
