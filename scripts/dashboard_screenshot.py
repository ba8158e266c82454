"""Render docs/dashboard-story.png, the README's picture of a story under review.

Run from the repository root with ``.venv/bin/python -m scripts.dashboard_screenshot`` after
``make test-web`` has installed what the dashboard's tests need: it starts a real
``viewfinder serve`` on the test data, signs in, opens a changed story, draws a rectangle
thread on the after image and photographs the page at 1280x800.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from playwright.sync_api import expect

from tests import dashboard
from tests.server import running_server

OUT = Path(__file__).resolve().parent.parent / "docs" / "dashboard-story.png"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, running_server("sqlite", Path(tmp)) as server:
        builds = dashboard.seed(server, Path(tmp))
        for browser in dashboard.browser():
            page = browser.new_context(viewport=dashboard.DESKTOP).new_page()
            dashboard.sign_in(page, server)
            page.goto(f"{server.url}/builds/{builds['second']}")
            page.get_by_role("link", name="checkout/cart").click()
            expect(page.locator("body[data-ready=story]")).to_have_count(1)
            page.get_by_role("radio", name=re.compile("^Comment")).check()
            box = page.locator('.layer[data-side="after"] svg').bounding_box()
            assert box is not None
            x, y, w, h = box["x"], box["y"], box["width"], box["height"]
            page.mouse.move(x + 0.05 * w, y + 0.5 * h)
            page.mouse.down()
            page.mouse.move(x + 0.35 * w, y + 0.7 * h, steps=6)
            page.mouse.up()
            form = page.locator("#new-thread")
            form.get_by_label("Comment").fill(
                "The new button colour is off-brand: use the primary."
            )
            form.get_by_role("button", name="Post comment").click()
            expect(page.locator(".thread")).to_have_count(1)
            # The "Thread started." notice fades after four seconds.
            expect(page.locator("#toast.show")).to_have_count(0, timeout=10_000)
            dashboard.settle(page)
            OUT.write_bytes(page.screenshot(animations="disabled", caret="hide"))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
