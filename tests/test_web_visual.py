"""Every dashboard page looks as approved and passes axe-core: screenshots at 1280x800 and on a
390x844 phone, in the light and the dark scheme, compared with the baselines in tests/visual/
by Viewfinder's own engine (ids and times masked). `UPDATE=1 make test-web` renews them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests import dashboard
from tests.server import Server, running_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server("sqlite", tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from dashboard.browser()


def check(page: Page, name: str, problems: list[str]) -> None:
    """Screenshot and axe: a visual difference fails at once, accessibility problems are
    gathered so one run names them all."""
    dashboard.settle(page)
    problems += [f"{name}: {v}" for v in dashboard.axe_violations(page)]
    dashboard.looks_as_approved(page, name)


def fits(page: Page, width: int) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= width, f"{page.url} is {overflow} px wide on a {width} px screen"


def test_every_page_looks_as_approved_and_is_accessible(
    server: Server, browser: Browser, tmp_path: Path
) -> None:
    builds = dashboard.seed(server, tmp_path)
    problems: list[str] = []
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=dashboard.DESKTOP, color_scheme=scheme)
        page = context.new_page()
        page.goto(f"{server.url}/login")
        check(page, f"login-{scheme}", problems)
        dashboard.sign_in(page, server)
        check(page, f"builds-{scheme}", problems)
        page.goto(f"{server.url}/builds/{builds['second']}")
        page.locator("#group-unchanged > summary").click()
        check(page, f"build-{scheme}", problems)
        page.get_by_role("link", name="checkout/cart").click()
        dashboard.story_ready(page)
        check(page, f"story-side-{scheme}", problems)
        if scheme == "light":
            for mode in ("overlay", "swipe", "diff", "changes"):
                page.get_by_role("link", name=mode.capitalize()).first.click()
                expect(page.locator("#viewer")).to_have_attribute("data-mode", mode)
                check(page, f"story-{mode}", problems)
            page.keyboard.press("?")
            expect(page.locator("#keys-help")).to_be_visible()
            check(page, "story-keys", problems)
            page.keyboard.press("Escape")
        page.goto(f"{server.url}/baselines")
        check(page, f"baselines-{scheme}", problems)
        page.goto(f"{server.url}/contexts")
        check(page, f"contexts-{scheme}", problems)
        context.close()

    phone = browser.new_context(
        viewport=dashboard.PHONE, is_mobile=True, has_touch=True, device_scale_factor=1
    )
    page = phone.new_page()
    dashboard.sign_in(page, server)
    fits(page, dashboard.PHONE["width"])
    check(page, "builds-phone", problems)
    page.goto(f"{server.url}/builds/{builds['second']}")
    fits(page, dashboard.PHONE["width"])
    check(page, "build-phone", problems)
    page.get_by_role("link", name="checkout/cart").click()
    dashboard.story_ready(page)
    fits(page, dashboard.PHONE["width"])
    check(page, "story-phone", problems)
    phone.close()

    assert problems == []


def test_a_tall_screenshot_arrives_in_pixel_pages_as_it_is_scrolled(
    server: Server, browser: Browser, tmp_path: Path
) -> None:
    if not server.json("builds", key="admin")["items"]:
        dashboard.seed(server, tmp_path)
    builds = server.json("builds", key="admin")["items"]
    context = browser.new_context(viewport=dashboard.DESKTOP)
    page = context.new_page()
    pages: list[str] = []
    page.on("request", lambda r: pages.append(r.url) if "offset=" in r.url else None)
    dashboard.sign_in(page, server)
    page.goto(f"{server.url}/builds/{builds[0]['id']}")
    page.get_by_role("link", name="feed/tall").click()
    dashboard.settle(page)
    after = page.locator('.layer[data-side="after"] img')
    expect(after).to_have_count(3)  # 3000 rows in pages of 1024
    first = len(pages)
    assert 0 < first < 6, pages  # the bottom pages wait until they come near
    page.locator(".scroller").first.evaluate("s => s.scrollTo(0, s.scrollHeight)")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.layer img')].every(i => i.getAttribute('src'))"
    )
    # Scrolling one pane scrolled the other with it.
    tops = page.locator(".scroller").evaluate_all("all => all.map(s => s.scrollTop)")
    assert len(set(tops)) == 1 and tops[0] > 0
    assert len(pages) == 6
    context.close()
