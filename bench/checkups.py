"""How fast design checkups get their screenshots and their second opinion, with a warm
browser, as a worker process would run them:

- a local page (bench/pages/dashboard.html, served on 127.0.0.1) captured at desktop
  1280x800 and mobile 375x812 at scale 2, with DOM, boxes and axe-core, both together;
- an HTML email rendered in light and dark (bench/pages/email.html);
- a five-page PDF (16:9 slides printed by Chromium) rendered one image per page;
- the second opinion on the desktop shot (1280x800) with its DOM, as a website.

Each figure is the median of several rounds after one warm-up, each round starting from a
warm, idle camera (browser running, the contexts it makes ahead made), as a worker's next
capture does. Targets: 1.5 s, 1 s, 1 s and
0.5 s. Run alone with ``python -m bench.checkups [--rounds N]``; prints one line:

    checkups: capture desktop+mobile X s, html Y s, pdf(5) Z s, second opinion W s
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.chromium import CHROMIUM
from viewfinder.capture import (
    DESKTOP,
    Guard,
    Policy,
    capture_html,
    capture_url,
    render_pdf,
    second_opinion,
)
from viewfinder.capture.camera import camera

ROOT = Path(__file__).resolve().parent
PAGES = ROOT / "pages"
RESULTS = ROOT / ".results"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(folder: Path) -> Iterator[int]:
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def deck(pages: int = 5) -> bytes:
    """A deck of 16:9 slides with a title and bullets each, printed to PDF by Chromium."""
    slides = "".join(
        "<section style='width: 960px; height: 540px; padding: 48px; box-sizing: border-box; "
        f"break-after: page; font: 24px sans-serif; background: #f8fafc'><h1>Quarter {n}</h1>"
        + "".join(f"<li>Result {i} of quarter {n}, against plan</li>" for i in range(4))
        + "</section>"
        for n in range(1, pages + 1)
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page()
        page.set_content(f"<html><body style='margin: 0'>{slides}</body></html>")
        pdf = page.pdf(width="960px", height="540px", print_background=True)
        browser.close()
    return pdf


def median_seconds(work: Callable[[], object], rounds: int) -> float:
    """Median wall time of ``work`` after a warm-up; each round starts from a warm, idle
    camera (browser running, contexts made ahead), as a worker's next capture does."""
    work()  # warm-up: the browser starts, caches fill
    times = []
    for _ in range(rounds):
        camera(CHROMIUM).settle()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def cpu_share(seconds: float = 1.0) -> float:
    """The share of one core a busy thread of this process gets now (1.0 on an idle machine)."""
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        pass
    return round((time.process_time() - cpu) / (time.perf_counter() - started), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    email = (PAGES / "email.html").read_text()
    pdf = deck()
    with serving(PAGES) as port:
        policy = Policy(guard=Guard([f"127.0.0.1:{port}"]))
        url = f"http://127.0.0.1:{port}/dashboard.html"

        def page() -> None:
            shots = capture_url(url, policy=policy, on_failure="raise")
            assert [s.origin for s in shots] == ["page", "page"]

        def html() -> None:
            shots = capture_html(email, policy=policy, on_failure="raise")
            assert [s.label for s in shots] == ["light", "dark"]

        def slides() -> None:
            assert len(render_pdf(pdf, policy=policy, on_failure="raise")) == 5

        timings = {
            "capture": median_seconds(page, args.rounds),
            "html": median_seconds(html, args.rounds),
            "pdf": median_seconds(slides, args.rounds),
        }
        [desktop] = capture_url(url, policy=policy, viewports=[DESKTOP], on_failure="raise")
        timings["second_opinion"] = median_seconds(
            lambda: second_opinion([desktop], "website"), args.rounds
        )
    # What the machine gave beside the figures: on a shared machine they are worth no more.
    timings["load_average"] = os.getloadavg()[0]
    timings["cpu_share"] = cpu_share()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "checkups.json").write_text(json.dumps(timings, indent=2))
    print(
        f"checkups: capture desktop+mobile {timings['capture']:.2f} s, html {timings['html']:.2f} "
        f"s, pdf(5) {timings['pdf']:.2f} s, second opinion {timings['second_opinion']:.2f} s"
    )


if __name__ == "__main__":
    main()
