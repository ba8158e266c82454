"""Helpers for the dashboard's browser tests: deterministic screenshots to upload, Debian's
Chromium driven by Playwright with deterministic-rendering flags, signing in, the axe-core
accessibility check, and visual baselines compared by Viewfinder's own engine."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageDraw
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from tests.chromium import CHROMIUM, FLAGS
from tests.server import Server
from viewfinder.imaging import compare

ROOT = Path(__file__).resolve().parent
VISUAL = ROOT / "visual"
FAILURES = VISUAL / ".failures"
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def screen(
    accent: tuple[int, int, int] = (11, 92, 173),
    *,
    shift: int = 0,
    height: int = 400,
    title_bars: int = 3,
    footer: tuple[int, int, int] | None = None,
) -> bytes:
    """A 640 px wide screenshot of a made-up app page: a header, a title, text lines, a button
    (``accent``) and a note moved down by ``shift``; ``footer`` paints a band at the bottom of
    a tall page."""
    image = Image.new("RGB", (640, height), (250, 250, 252))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 639, 47), fill=(32, 38, 46))
    draw.rectangle((16, 16, 120, 31), fill=(230, 233, 238))
    draw.rectangle((40, 80, 360, 104), fill=(40, 44, 52))
    for i in range(title_bars):
        draw.rectangle((40, 128 + i * 22, 560 - i * 60, 140 + i * 22), fill=(150, 156, 166))
    draw.rounded_rectangle((40, 220, 200, 260), radius=8, fill=accent)
    draw.rectangle((70, 236, 170, 244), fill=(255, 255, 255))
    draw.rectangle((40, 290 + shift, 420, 300 + shift), fill=(190, 120, 30))
    for y in range(340, height - 60, 48):
        draw.rectangle((40, y, 600, y + 30), outline=(200, 204, 210), fill=(255, 255, 255))
        draw.rectangle((52, y + 10, 300, y + 20), fill=(170, 175, 184))
    if footer is not None:
        draw.rectangle((0, height - 50, 639, height - 1), fill=footer)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def write(folder: Path, shots: dict[str, bytes]) -> Path:
    for name, data in shots.items():
        path = folder / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


def upload(server: Server, folder: Path, commit: str, *args: str, code: int) -> dict[str, object]:
    """Upload a folder as a build through the CLI, as CI does, and wait for its comparisons."""
    record: dict[str, object] = server.json(
        "upload", folder, "--commit", commit, "--wait", *args, key="ci", code=code
    )
    return record


def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
        try:
            yield launched
        finally:
            launched.close()


def sign_in(page: Page, server: Server, role: str = "admin") -> None:
    page.goto(f"{server.url}/login")
    page.get_by_text("Sign in with a project key").click()
    page.get_by_label("API key").fill(server.keys[role])
    page.get_by_role("button", name="Sign in with the key").click()
    page.wait_for_url(f"{server.url}/builds")


def axe_violations(page: Page) -> list[str]:
    """Serious and critical accessibility violations on the page, as readable lines."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => `${v.id} (${v.impact}): ${v.help}: ` + "
        "v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))"
    )
    return list(found)


def story_ready(page: Page) -> None:
    """Wait for the story page a click or a key went to: measured or shot before, the page may
    still be the one before it, or a document not yet parsed (no documentElement)."""
    expect(page.locator("body[data-ready=story]")).to_have_count(1)


def settle(page: Page) -> None:
    """Wait until every image that is in the page has loaded (lazy ones in view included)."""
    page.wait_for_load_state("networkidle")
    page.wait_for_function(
        "() => [...document.images].filter(i => i.getAttribute('src') && i.loading !== 'lazy')"
        ".every(i => i.complete)"
    )


def looks_as_approved(page: Page, name: str, *, mask: list[Locator] | None = None) -> None:
    """Compare a screenshot of the page with tests/visual/NAME.png using Viewfinder's engine.
    With UPDATE=1 the screenshot becomes the baseline. On a difference the shot and the diff
    image are kept under tests/visual/.failures/."""
    shot = page.screenshot(
        full_page=True,
        animations="disabled",
        caret="hide",
        mask=[page.locator("[data-vary]"), *(mask or [])],
        mask_color="#8a8f98",
    )
    baseline = VISUAL / f"{name}.png"
    if os.environ.get("UPDATE") == "1" or not baseline.exists():
        VISUAL.mkdir(exist_ok=True)
        baseline.write_bytes(shot)
        if os.environ.get("UPDATE") != "1":
            raise AssertionError(f"no baseline for {name}: wrote {baseline}; commit it")
        return
    result = compare(baseline.read_bytes(), shot)
    if result.changed:
        FAILURES.mkdir(parents=True, exist_ok=True)
        (FAILURES / f"{name}.png").write_bytes(shot)
        if result.diff_png:
            (FAILURES / f"{name}.diff.png").write_bytes(result.diff_png)
        raise AssertionError(
            f"the {name} page looks different from tests/visual/{name}.png "
            f"({result.changed_pixels} px, {result.diff_ratio:.4%}); see tests/visual/.failures/. "
            "If the change is intended: UPDATE=1 make test-web"
        )


XSS_NAME = "<img src=x onerror=window.__xss=1>"
XSS_BODY = '<script>window.__xss=2</script><img src=x onerror="window.__xss=3">'


def seed(server: Server, root: Path) -> dict[str, str]:
    """Two builds through the CLI: the first registers every story; the second, for PR 7 of
    acme/web, changes three (one of them a tall page), keeps two, drops one and adds two, one
    of which has markup in its name. Returns the builds' ids."""
    first = {
        "checkout/cart": screen(),
        "login": screen((30, 120, 60)),
        "settings": screen((90, 90, 90), title_bars=2),
        "pages/about": screen((120, 60, 140)),
        "feed/tall": screen(height=3000, footer=(40, 90, 160)),
        "old/banner": screen((200, 80, 40)),
    }
    one = upload(server, write(root / "b1", first), "a1a1a1a1", code=0)
    second = dict(first)
    del second["old/banner"]
    second |= {
        "checkout/cart": screen((196, 43, 110)),
        "login": screen((30, 120, 60), shift=6),
        "feed/tall": screen(height=3000, footer=(200, 60, 60)),
        "pricing": screen((20, 140, 150), title_bars=1),
        XSS_NAME: screen((60, 60, 60)),
    }
    pr = ("--branch", "feature/pay", "--pr", "7", "--repo", "acme/web")
    two = upload(server, write(root / "b2", second), "b2b2b2b2", *pr, code=1)
    return {"first": str(one["build_id"]), "second": str(two["build_id"])}
