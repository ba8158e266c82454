"""The person's review page and the guest page in Debian's Chromium against a real server: a
click (or Enter on a focused screenshot) sets a point mark shown as a numbered pin; the page
shows the agent's work (a mark resolved, the next pass opened) without being reloaded; guests
point at areas and spots with their suggestions, and their link never verifies or decides."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests import dashboard
from tests.conftest import shot
from tests.server import Server, running_server
from tests.test_web_checkup import agent, data_url, drag

BUTTON = shot(box=(80, 80, 240, 160), size=(800, 400))
FIXED = shot(box=(80, 80, 240, 160), size=(800, 400), fill=(120, 120, 120))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server("sqlite", tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from dashboard.browser()


def open_review(server: Server, title: str) -> dict[str, object]:
    with agent(server) as api:
        created = api.post("/reviews", json={"title": title, "images": [data_url(BUTTON)]})
        assert created.status_code == 201, created.text
        return created.json()  # type: ignore[no-any-return]


def click_at(page: Page, selector: str, at: tuple[float, float]) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] * at[0], box["y"] + box["height"] * at[1])


def save_mark(page: Page, body: str, where: str) -> None:
    form = page.locator("#mark-form")
    expect(form).to_be_visible()
    expect(page.locator("#mark-where")).to_have_text(where)
    form.get_by_label("What is wrong").fill(body)
    form.get_by_role("button", name="Save mark").click()


def pins(server: Server, review_id: object) -> list[dict[str, object]]:
    with agent(server) as api:
        review = api.get(f"/reviews/{review_id}").json()
        return sorted(review["work_packets"]["pins"], key=lambda p: p["number"])  # type: ignore[no-any-return]


def test_a_click_or_enter_sets_a_point_mark_shown_as_a_numbered_pin(
    server: Server, browser: Browser
) -> None:
    review = open_review(server, "Pricing")
    context = browser.new_context(viewport=dashboard.DESKTOP)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.goto(str(review["review_url"]))

    # A click (no drag) is a point at the place clicked.
    click_at(page, ".shot[data-shot='0'] img", (0.5, 0.25))
    save_mark(page, "This price is wrong", "On a point on screenshot 1.")
    expect(page.locator(".pin-box.point:not(.hint) .pin-label")).to_have_text("M1")

    # A press that moves a pixel or two is still a click.
    drag(page, ".shot[data-shot='0'] img", (0.2, 0.7), (0.201, 0.701))
    save_mark(page, "A stray dot", "On a point on screenshot 1.")
    expect(page.locator(".pin-box.point:not(.hint) .pin-label")).to_have_text(["M1", "M2"])

    # From the keyboard: focus the screenshot, move the cross from the middle, press Enter.
    page.locator(".shot[data-shot='0']").focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowDown")
    page.keyboard.press("Enter")
    save_mark(page, "The footer is crowded", "On a point on screenshot 1.")
    expect(page.locator(".pin-box.point:not(.hint) .pin-label")).to_have_text(["M1", "M2", "M3"])

    # A drag is still an area.
    drag(page, ".shot[data-shot='0'] img", (0.1, 0.2), (0.3, 0.4))
    save_mark(page, "The button", "On an area of screenshot 1.")
    expect(page.locator(".pin-box:not(.point, .hint) .pin-label")).to_have_text("M4")
    dashboard.settle(page)
    assert dashboard.axe_violations(page) == []
    context.close()

    first, second, third, fourth = pins(server, review["id"])
    assert first["area"] is None and second["area"] is None and third["area"] is None
    assert first["point"] == {
        "x": pytest.approx(0.5, abs=0.01),
        "y": pytest.approx(0.25, abs=0.01),
        "w": 0,
        "h": 0,
    }
    assert second["point"]["x"] == pytest.approx(0.2, abs=0.01)  # type: ignore[index]
    assert (third["point"]["x"], third["point"]["y"]) == (  # type: ignore[index]
        pytest.approx(0.6),
        pytest.approx(0.6),
    )
    assert fourth["point"] is None and fourth["area"]["w"] == pytest.approx(0.2, abs=0.02)  # type: ignore[index]
    assert problems == []


def test_the_open_page_shows_the_agents_work_without_a_reload(
    server: Server, browser: Browser
) -> None:
    review = open_review(server, "Checkout")
    link = f"{server.url}/api/v1/r/{str(review['review_url']).rsplit('/r/', 1)[1]}"
    context = browser.new_context(viewport=dashboard.DESKTOP)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.goto(str(review["review_url"]))
    expect(page.locator("#status")).to_have_text("pending")
    page.evaluate("window.stillTheSamePage = true")

    # The agent adds a screenshot while the person looks.
    with agent(server) as api:
        added = api.post(f"/reviews/{review['id']}/screenshots", json={"image": data_url(FIXED)})
        assert added.status_code == 200, added.text
    expect(page.locator("#shot-1")).to_contain_text("image-2", timeout=20_000)

    # The person marks and asks for changes elsewhere (another tab, the review app).
    with httpx.Client(timeout=30) as person:
        mark = person.post(
            f"{link}/marks",
            json={"screenshot_index": 0, "body": "Too dark", "severity": "must-fix"},
        )
        assert mark.status_code == 201, mark.text
        decided = person.post(f"{link}/decision", json={"decision": "changes_requested"})
        assert decided.status_code == 200, decided.text
    mark_id = mark.json()["id"]
    item = page.locator(f"#pin-{mark_id}")
    expect(item.locator(".badge.status-open")).to_have_text("open", timeout=20_000)
    expect(page.locator("#status")).to_have_text("changes requested")

    with agent(server) as api:
        resolved = api.post(
            f"/reviews/{review['id']}/resolve",
            json={
                "marks": [{"id": mark_id, "note": "Lighter grey", "after_image": data_url(FIXED)}]
            },
        )
        assert resolved.status_code == 200, resolved.text
    expect(item.locator(".badge.status-resolved")).to_have_text("resolved", timeout=20_000)
    expect(item).to_contain_text("Lighter grey")
    expect(item.get_by_role("img", name="After image of M1")).to_be_visible()

    with agent(server) as api:
        nxt = api.post(
            "/reviews",
            json={
                "title": "Checkout, pass 2",
                "images": [data_url(FIXED)],
                "parent_id": review["id"],
            },
        )
        assert nxt.status_code == 201, nxt.text
    expect(page.get_by_role("link", name="review pass 2")).to_have_attribute(
        "href", str(nxt.json()["review_url"]), timeout=20_000
    )
    assert page.evaluate("window.stillTheSamePage") is True

    # The refreshed page still works: verify from it.
    item.get_by_role("button", name="Verify M1").click()
    expect(page.locator(f"#pin-{mark_id} .badge.status-verified")).to_have_text("verified")
    context.close()
    assert problems == []


def test_the_live_route_answers_304_until_something_changes(server: Server) -> None:
    review = open_review(server, "Live")
    link = f"{server.url}/api/v1/r/{str(review['review_url']).rsplit('/r/', 1)[1]}"
    with httpx.Client(timeout=30) as person:
        first = person.get(f"{link}/live")
        assert first.status_code == 200 and first.json()["status"] == "pending"
        etag = first.headers["etag"]
        assert person.get(f"{link}/live", headers={"If-None-Match": etag}).status_code == 304
        person.post(f"{link}/marks", json={"screenshot_index": 0, "body": "x"})
        changed = person.get(f"{link}/live", headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed.headers["etag"] != etag
        gone = person.get(f"{server.url}/api/v1/r/not-a-real-token-at-all/live")
        assert gone.status_code == 404 and "no review at this link" in gone.text


def test_a_guest_suggests_on_an_area_and_a_point_and_never_decides(
    server: Server, browser: Browser
) -> None:
    review = open_review(server, "Landing")
    guest_link = str(review["guest_share_url"])
    guest_token = guest_link.rsplit("/g/", 1)[1]
    context = browser.new_context(viewport=dashboard.DESKTOP)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.goto(guest_link)

    drag(page, ".shot[data-shot='0'] img", (0.1, 0.2), (0.3, 0.4))
    expect(page.locator("#suggest-where")).to_have_text("On an area of screenshot 1.")
    page.get_by_label("Your suggestion").fill("A bigger button")
    page.get_by_role("button", name="Send suggestion").click()
    expect(page.locator(".pin-box:not(.point) .pin-label")).to_have_text("G1")

    page.locator(".shot[data-shot='0']").focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    expect(page.locator("#suggest-where")).to_have_text("On a point on screenshot 1.")
    page.get_by_label("Your suggestion").fill("Odd dot here")
    page.get_by_role("button", name="Send suggestion").click()
    expect(page.locator(".pin-box.point .pin-label")).to_have_text("G2")

    click_at(page, ".shot[data-shot='0'] img", (0.9, 0.9))
    page.get_by_role("button", name="Whole screenshot").click()
    expect(page.locator("#suggest-where")).to_have_text("On the whole screenshot chosen below.")
    page.get_by_label("Your suggestion").fill("Warmer colours overall")
    page.get_by_role("button", name="Send suggestion").click()
    expect(page.locator(".pins")).to_contain_text("G3")
    dashboard.settle(page)
    assert dashboard.axe_violations(page) == []

    # The guest link opens no review page, and the reviewer's routes refuse it, saying why.
    page.goto(f"{server.url}/r/{guest_token}")
    expect(page.get_by_text("this is a guest link, which leaves suggestions only")).to_be_visible()
    context.close()

    # The reviewer sees where the guests pointed, beside their own marks, in light and dark.
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=dashboard.DESKTOP, color_scheme=scheme)
        page = context.new_page()
        page.goto(str(review["review_url"]))
        expect(page.locator(".pin-box.hint:not(.point) .pin-label")).to_contain_text(["G1"])
        expect(page.locator(".pin-box.hint.point .pin-label")).to_contain_text(["G2"])
        assert "G3" not in page.locator(".shot").inner_text()  # a whole-screenshot suggestion
        dashboard.settle(page)
        assert dashboard.axe_violations(page) == [], scheme
        context.close()
    assert problems == []

    with httpx.Client(base_url=f"{server.url}/api/v1", timeout=30) as guest:
        seen = guest.get(f"/g/{guest_token}").json()
        g1, g2, g3 = sorted(seen["suggestions"], key=lambda p: p["number"])
        assert g1["area"]["w"] == pytest.approx(0.2, abs=0.02) and g1["point"] is None
        assert g2["area"] is None and g2["point"]["y"] == pytest.approx(0.48)
        assert g3["area"] is None and g3["point"] is None
        assert {p["kind"] for p in seen["suggestions"]} == {"finding"}
        for path, body in (
            ("/decision", {"decision": "approved"}),
            (f"/marks/{g1['id']}/verify", {}),
            (f"/marks/{g1['id']}/reopen", {}),
            (f"/hints/{g1['id']}/accept", {}),
            ("/marks", {"screenshot_index": 0, "body": "x", "severity": "must-fix"}),
            ("/guest-link", {}),
        ):
            refused = guest.post(f"/r/{guest_token}{path}", json=body)
            assert refused.status_code == 403, (path, refused.text)
            assert "guest link, which leaves suggestions only" in refused.json()["error"]["message"]
        severe = guest.post(
            f"/g/{guest_token}/suggestions",
            json={"screenshot_index": 0, "body": "x", "severity": "must-fix"},
        )
        assert severe.status_code == 400 and "severity" in severe.text
        both = guest.post(
            f"/g/{guest_token}/suggestions",
            json={
                "screenshot_index": 0,
                "body": "x",
                "area": {"x": 0.1, "y": 0.1, "w": 0.2, "h": 0.2},
                "point": {"x": 0.5, "y": 0.5},
            },
        )
        assert both.status_code == 400 and "an area or a point, not both" in both.text

    # The reviewer accepts the guest's point: it becomes a mark on the same spot.
    person_link = str(review["review_url"]).rsplit("/r/", 1)[1]
    with httpx.Client(base_url=f"{server.url}/api/v1", timeout=30) as person:
        accepted = person.post(f"/r/{person_link}/hints/{g2['id']}/accept", json={})
        assert accepted.status_code == 201, accepted.text
        mark = accepted.json()
        assert mark["source"] == "guest" and mark["number"] == "M1"
        assert mark["point"] == g2["point"] and mark["area"] is None
        review_now = person.get(f"/r/{person_link}").json()
        assert review_now["status"] == "pending" and review_now["loop"]["outstanding"] == 1
