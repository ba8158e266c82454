"""How quickly the dashboard shows a big build: a real `viewfinder serve`, two builds of 500
stories uploaded through the CLI (the second changes 25), then the build page and a story
page opened in Debian's Chromium. Prints time to interactive, requests and bytes.

Run with ``python -m bench.dashboard`` (needs the dev extras and Debian's chromium)."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from tests import dashboard
from tests.server import running_server

STORIES = 500
CHANGED = 25
RUNS = 5


def shots(changed: bool) -> dict[str, bytes]:
    out = {}
    for i in range(STORIES):
        accent = (20 + i % 200, 60 + (i * 7) % 150, 90 + (i * 13) % 140)
        if changed and i % (STORIES // CHANGED) == 0:
            accent = (200, 40, 40)
        out[f"area-{i // 50:02d}/screen-{i:03d}"] = dashboard.screen(accent, title_bars=1 + i % 4)
    return out


def measure(page: Page, url: str) -> dict[str, Any]:
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    timing: dict[str, Any] = page.evaluate(
        """() => {
          const nav = performance.getEntriesByType('navigation')[0];
          const res = performance.getEntriesByType('resource');
          return {
            html_ms: nav.responseEnd - nav.startTime,
            interactive_ms: nav.domContentLoadedEventEnd - nav.startTime,
            load_ms: nav.loadEventEnd - nav.startTime,
            html_bytes: nav.encodedBodySize,
            requests: res.length + 1,
            bytes: nav.encodedBodySize + res.reduce((n, r) => n + r.encodedBodySize, 0),
            images: res.filter(r => r.initiatorType === 'img').length,
          };
        }"""
    )
    return timing


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="vf-dash-"))
    with running_server("sqlite", root) as server:
        started = time.perf_counter()
        dashboard.upload(server, dashboard.write(root / "one", shots(False)), "c0ffee01", code=0)
        second = dashboard.upload(
            server, dashboard.write(root / "two", shots(True)), "c0ffee02", code=1
        )
        print(f"uploaded 2 x {STORIES} stories in {time.perf_counter() - started:.1f} s")
        build = f"{server.url}/builds/{second['build_id']}"
        for browser in dashboard.browser():
            context = browser.new_context(viewport=dashboard.DESKTOP)
            page = context.new_page()
            dashboard.sign_in(page, server)
            results: dict[str, list[dict[str, Any]]] = {"build": [], "story": []}
            for run in range(RUNS + 1):
                # Each run in a fresh cache, as a first visit; run 0 warms the server's caches.
                page.context.clear_cookies()
                dashboard.sign_in(page, server)
                cdp = context.new_cdp_session(page)
                cdp.send("Network.clearBrowserCache")
                build_run = measure(page, build)
                page.locator(".story-link").first.click()
                page.wait_for_load_state("networkidle")
                story_run = measure(page, page.url)
                if run:
                    results["build"].append(build_run)
                    results["story"].append(story_run)
            for name, runs in results.items():
                summary = {key: statistics.median(r[key] for r in runs) for key in runs[0] if runs}
                print(f"{name} page (median of {RUNS}): {json.dumps(summary)}")
            context.close()


if __name__ == "__main__":
    main()
