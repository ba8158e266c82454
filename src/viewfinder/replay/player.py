"""Playing one recording on one deployment, on the camera's loop, so that two replays of the
same session on the same build give the same pixels.

What is pinned: a fresh browser context per replay (the recording's viewport, scale 1, UTC,
en-US, reduced motion, no service workers); the camera's Chromium flags; ``Math.random``
seeded; the clock installed at a fixed date and paused, moved on only by the recorded gaps
between events (capped); every fetch/XHR answered from the recording (network.py); screenshots
with animations stopped and the caret hidden, once the page's network is quiet.

What is allowed out: requests to the deployment's own origin (a loopback server the caller
runs) and nothing else: other origins are refused and show on the timeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from viewfinder.capture.page import STEADY
from viewfinder.errors import CaptureFailed
from viewfinder.imaging import read_header
from viewfinder.replay import coverage
from viewfinder.replay.model import ReplayResult, ReplayShot, TimelineEntry, TimelineEvent
from viewfinder.replay.network import Stub
from viewfinder.replay.recorder import REPLAY_INIT_SCRIPT
from viewfinder.replay.recording import Event, Recording

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Route

    from viewfinder.capture.spares import Spares

NORMALISE_DOM = (Path(__file__).resolve().parent / "dom.js").read_text(encoding="utf-8")
# 2024-01-01T00:00:00Z: every replay starts at the same instant.
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
# The longest pause between two events that is played out, and the time given to the page
# after its last event and after it first loads (virtual milliseconds: costs little).
MAX_GAP_MS = 5_000
END_MS = 1_000
LOAD_MS = 100
# Real seconds to wait for the page's calls to be answered before a screenshot.
QUIET_SECONDS = 5.0
# The clock moves by at most this much (virtual ms) before the page's new calls are answered.
CHUNK_MS = 250
# Counts the page's open fetch/XHR calls as the page itself sees them (the browser's network
# events reach us later than the page's next task), so that a call a response handler starts
# is seen before the clock moves.
COUNT_CALLS = """(() => {
  let open = 0;
  const done = () => { open = Math.max(0, open - 1); };
  const fetch = window.fetch;
  if (fetch) {
    window.fetch = function (...args) {
      open++;
      let made;
      try { made = fetch.apply(this, args); } catch (e) { done(); throw e; }
      made.then(done, done);
      return made;
    };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    open++;
    this.addEventListener("loadend", done, {once: true});
    return send.apply(this, args);
  };
  Object.defineProperty(window, "__viewfinderOpenCalls", {get: () => open});
})();"""
# A few real tasks of the page (MessageChannel: not a timer, so the paused clock does not
# hold it), then how many of its calls are open.
YIELD = """async () => {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(0);
    });
  }
  return window.__viewfinderOpenCalls || 0;
}"""
ACTION_MS = 3_000
# Transitions and animations off, the caret hidden: nothing moves between two screenshots.
QUIET = """(() => {
  const quiet = () => {
    const style = document.createElement("style");
    style.setAttribute("data-viewfinder-replay", "");
    style.textContent = "*,*::before,*::after{transition:none!important;" +
      "animation:none!important;caret-color:transparent!important}";
    (document.head || document.documentElement).appendChild(style);
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", quiet, {once: true});
  } else { quiet(); }
})();"""
# The page the start storage is written on (same origin as the deployment, never served).
SEED_PATH = "/__viewfinder_replay_seed__"
API_TYPES = ("fetch", "xhr", "eventsource")


class Player:
    """One replay of ``recording`` on the deployment at ``base_url`` (scheme://host:port).
    ``deadline`` (time.monotonic) fails a replay that outlives it; ``stop_at`` ends one
    early instead, keeping the screenshots taken so far (a run's time limit)."""

    def __init__(
        self,
        recording: Recording,
        base_url: str,
        *,
        deadline: float,
        stop_at: float | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        self.recording = recording
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.deadline = deadline
        self.stop_at = stop_at
        self.stopped_after: int | None = None  # events played when stop_at passed
        self.stub = Stub(recording)
        self.virtual_ms = 0
        self.timeline: list[TimelineEntry] = []
        self.shots: list[ReplayShot] = []
        self.unrecorded: list[str] = []
        self.failed: list[str] = []
        self.console_errors: list[str] = []
        self.exceptions: list[str] = []
        self.notes: list[str] = []
        self.sources: dict[str, str] = {}
        self.pending = 0
        self.started = 0  # calls the page started (fetch, XHR), all told
        self._quiet = asyncio.Event()
        self._quiet.set()
        # Cleared when the page starts loading another document, set when it has loaded.
        self._loaded = asyncio.Event()
        self._loaded.set()

    # ---- the timeline ---------------------------------------------------------------------

    def note(self, event: TimelineEvent, description: str) -> None:
        self.timeline.append(TimelineEntry(self.virtual_ms, event, description))

    def _path(self, url: str) -> str:
        parts = urlsplit(url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    # ---- the network ----------------------------------------------------------------------

    async def route(self, route: Route) -> None:
        try:
            await self._route(route)
        except Exception as exc:  # past the deadline, or the page went away: the call fails
            self.notes.append(f"{route.request.method} {route.request.url}: {exc}")
            with contextlib.suppress(Exception):
                await route.abort("failed")

    async def _route(self, route: Route) -> None:
        request = route.request
        url = request.url
        parts = urlsplit(url)
        same_origin = f"{parts.scheme}://{parts.netloc}" == self.origin
        if parts.scheme in ("data", "blob"):
            await route.continue_()
            return
        if same_origin and parts.path == SEED_PATH:
            await route.fulfill(body="<!doctype html><title></title>", content_type="text/html")
            return
        if request.resource_type in API_TYPES:
            answer = self.stub.answer(request.method, url)
            where = self._path(url) if same_origin else url
            if not answer.recorded:
                self.unrecorded.append(f"{request.method} {where}")
                self.note("network", f"{request.method} {where} 404 (not in the recording)")
            else:
                self.note("network", f"{request.method} {where} {answer.status}")
                if answer.status >= 400:
                    self.failed.append(f"{request.method} {where} {answer.status}")
            await route.fulfill(status=answer.status, body=answer.body, headers=answer.headers)
            return
        if not same_origin:
            self.note("network", f"{request.method} {url} refused (outside the deployment)")
            await route.abort("blockedbyclient")
            return
        try:
            response = await route.fetch(timeout=max(1000.0, self._left_ms()))
        except Exception as exc:  # the deployment's server failed: the page sees it fail
            self.failed.append(f"{request.method} {self._path(url)} ({exc})")
            await route.abort("failed")
            return
        if request.resource_type == "script" and response.ok:
            body = await response.body()
            self.sources[url] = body.decode("utf-8", "replace")
            await route.fulfill(response=response, body=body)
            return
        if response.status >= 400:
            self.failed.append(f"{request.method} {self._path(url)} {response.status}")
        await route.fulfill(response=response)

    def _on_request(self, request: Any) -> None:
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self._loaded.clear()
        if request.resource_type in API_TYPES:
            self.started += 1
            self.pending += 1
            self._quiet.clear()

    def _on_failed(self, request: Any) -> None:
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self._loaded.set()
        self._on_done(request)

    def _on_done(self, request: Any) -> None:
        if request.resource_type in API_TYPES:
            self.pending = max(0, self.pending - 1)
            if self.pending == 0:
                self._quiet.set()

    # ---- time -----------------------------------------------------------------------------

    def _left_ms(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CaptureFailed("the replay did not finish in time")
        return left * 1000

    async def settle(self, page: Page, ms: int) -> None:
        """Let the page's calls be answered, then its timers run for ``ms`` virtual ms, a
        chunk at a time, the calls those timers make answered after each chunk. The clock
        never moves while a call is open: where a call's answer lands among the timers
        would otherwise depend on how fast it came (a toast shown or not)."""
        await self._calm(page)
        while ms > 0:
            step = min(CHUNK_MS, ms)
            await page.clock.run_for(step)
            self.virtual_ms += step
            ms -= step
            await self._calm(page)

    async def _calm(self, page: Page) -> None:
        """Wait until no call is open and none started while the page ran a few tasks
        (bounded: a page that never calms down is noted and the replay goes on)."""
        deadline = time.monotonic() + QUIET_SECONDS
        while True:
            await self._wait(self._loaded, "a page still loading")
            await self._wait(self._quiet, f"{self.pending} calls still open")
            started = self.started
            try:
                open_calls = await page.evaluate(YIELD)
            except Exception:  # a document was replaced meanwhile: look again
                open_calls = -1
            if open_calls == 0 and self.pending == 0 and self.started == started:
                return
            if time.monotonic() > deadline:
                self.notes.append(f"the page did not calm down at {self.virtual_ms} ms; went on")
                return

    async def _wait(self, ready: asyncio.Event, what: str) -> None:
        try:
            await asyncio.wait_for(ready.wait(), min(QUIET_SECONDS, self._left_ms() / 1000))
        except TimeoutError:
            self.notes.append(f"{what} at {self.virtual_ms} ms; went on")

    # ---- events ---------------------------------------------------------------------------

    async def _target(self, page: Page, event: Event) -> Any:
        for selector in event.selectors:
            try:
                found = page.locator(selector).first
                if await found.count() > 0:
                    return found
            except Exception:  # a selector this browser cannot parse: try the next one
                continue
        return None

    async def play(self, page: Page, index: int, event: Event) -> None:
        self.note("user", event.describe())
        target = await self._target(page, event) if event.selectors else None
        timeout = min(ACTION_MS, self._left_ms())
        try:
            if event.type == "click":
                if target is not None:
                    await target.click(timeout=timeout)
                elif event.box is not None:
                    x = event.box.x + event.box.width / 2
                    y = event.box.y + event.box.height / 2
                    self.note("error", f"event {index}: no element matched; clicked at {x:g},{y:g}")
                    await page.mouse.click(x, y)
                else:
                    self.note("error", f"event {index}: no element matched {event.selectors[0]}")
            elif event.type == "input":
                if target is None:
                    self.note("error", f"event {index}: no element matched {event.selectors[0]}")
                else:
                    await target.fill(event.value or "", timeout=timeout)
            elif event.type == "key":
                assert event.key is not None
                if target is not None:
                    await target.press(event.key, timeout=timeout)
                else:
                    await page.keyboard.press(event.key)
            elif event.type == "scroll":
                x, y = event.scroll or (0.0, 0.0)
                if target is not None:
                    await target.evaluate("(el, [x, y]) => el.scrollTo(x, y)", [x, y])
                else:
                    await page.evaluate("([x, y]) => window.scrollTo(x, y)", [x, y])
            elif event.type == "navigation":
                assert event.url is not None
                path = self._path(event.url)
                if self._path(page.url) != path:
                    await page.goto(urljoin(self.origin, path), wait_until="load", timeout=timeout)
        except CaptureFailed:
            raise
        except Exception as exc:
            first = str(getattr(exc, "message", exc)).splitlines()[0]
            self.note("error", f"event {index} ({event.type}) could not be played: {first}")

    # ---- screenshots ----------------------------------------------------------------------

    async def shoot(self, page: Page, cdp: CDPSession, name: str) -> None:
        png = await page.screenshot(animations="disabled", caret="hide", timeout=self._left_ms())
        # Two reads of a page that holds still (its clock paused, its calls answered), asked
        # for together; not beside the screenshot, whose styles would show in the DOM.
        normalised, taken = await asyncio.gather(
            page.evaluate(NORMALISE_DOM), cdp.send("Profiler.takePreciseCoverage")
        )
        dom = str(normalised)
        files = coverage.from_v8(taken.get("result", []), self.sources, self.origin)
        header = read_header(png, name="the screenshot")
        self.shots.append(
            ReplayShot(name, png, header.width, header.height, self.virtual_ms, dom, files)
        )
        self.note("screenshot", name)

    # ---- the whole replay -----------------------------------------------------------------

    async def run(self, browser: Browser) -> ReplayResult:
        rec = self.recording
        context = await browser.new_context(
            viewport={"width": rec.viewport[0], "height": rec.viewport[1]},
            device_scale_factor=1,
            reduced_motion="reduce",
            locale="en-US",
            timezone_id="UTC",
            service_workers="block",
            accept_downloads=False,
        )
        try:
            return await self._run(context)
        finally:
            try:
                await context.close()
            except Exception:  # the browser went away; the camera starts another
                pass

    async def _run(self, context: BrowserContext) -> ReplayResult:
        rec = self.recording
        await context.add_init_script(STEADY)
        # The page (and the recorder, which then records nothing) knows it is replayed.
        await context.add_init_script(REPLAY_INIT_SCRIPT)
        await context.add_init_script(QUIET)
        await context.add_init_script(COUNT_CALLS)
        await context.route("**/*", self.route)
        page = await context.new_page()
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_failed)
        page.on("load", lambda _page: self._loaded.set())
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self._on_error(str(exc)))
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))
        # Playwright's clock takes datetimes (a number would be read as seconds).
        await page.clock.install(time=EPOCH)
        await page.clock.pause_at(EPOCH + timedelta(seconds=1))
        cdp = await context.new_cdp_session(page)
        await cdp.send("Profiler.enable")
        await cdp.send("Profiler.startPreciseCoverage", {"callCount": True, "detailed": True})
        await self._seed(context, page)
        start = urljoin(self.origin, rec.start_path)
        response = await page.goto(start, wait_until="load", timeout=self._left_ms())
        if response is not None and response.status >= 400:
            self.notes.append(f"the start page answered HTTP {response.status}")
        events = sorted(rec.events, key=lambda e: e.seq)
        first_gap = int(min(events[0].t, MAX_GAP_MS)) if events else LOAD_MS
        await self.settle(page, max(first_gap, LOAD_MS))
        for index, event in enumerate(events):
            if self.stop_at is not None and time.monotonic() >= self.stop_at:
                self.stopped_after = index
                self.note("error", f"stopped after {index} of {len(events)} events: out of time")
                break
            await self.play(page, index, event)
            nxt = events[index + 1].t if index + 1 < len(events) else event.t + END_MS
            await self.settle(page, int(min(max(nxt - event.t, 1), MAX_GAP_MS)))
            await self.shoot(page, cdp, f"after-event-{index}")
        if self.stopped_after is None:
            await self.settle(page, END_MS)
            await self.shoot(page, cdp, "end-state")
        return ReplayResult(
            shots=tuple(self.shots),
            timeline=tuple(self.timeline),
            unrecorded=tuple(self.unrecorded),
            failed_requests=tuple(self.failed),
            console_errors=tuple(self.console_errors),
            exceptions=tuple(self.exceptions),
            notes=tuple(self.notes),
            steps=len(events) if self.stopped_after is None else self.stopped_after,
            stopped_after=self.stopped_after,
            coverage=coverage.merge(f for s in self.shots for f in s.coverage),
        )

    async def _seed(self, context: BrowserContext, page: Page) -> None:
        """Local and session storage and cookies as they were when the session began."""
        storage = self.recording.storage
        if not (storage.local or storage.session or storage.cookies):
            return
        await page.goto(urljoin(self.origin, SEED_PATH), timeout=self._left_ms())
        await page.evaluate(
            """([local, session]) => {
                for (const [k, v] of Object.entries(local)) localStorage.setItem(k, v);
                for (const [k, v] of Object.entries(session)) sessionStorage.setItem(k, v);
            }""",
            [storage.local, storage.session],
        )
        cookies: list[Any] = []
        for part in storage.cookies.split(";"):
            name, _, value = part.strip().partition("=")
            if name:
                cookies.append({"name": name, "value": value, "url": self.origin + "/"})
        if cookies:
            await context.add_cookies(cookies)

    def _on_console(self, message: Any) -> None:
        kind = message.type
        if kind in ("verbose", "debug"):
            return  # the browser's own advice, not the app's
        text = f"{kind}: {message.text}"
        self.note("console", text)
        if kind == "error" and not message.text.startswith("Failed to load resource"):
            self.console_errors.append(message.text)

    def _on_error(self, text: str) -> None:
        first = text.splitlines()[0] if text else "an error"
        self.exceptions.append(first)
        self.note("error", f"uncaught {first}")

    def _on_navigated(self, page: Page, frame: Any) -> None:
        if frame == page.main_frame and urlsplit(frame.url).path != SEED_PATH:
            self.note("urlChange", self._path(frame.url))


def runner(
    recording: Recording, base_url: str, seconds: float, stop_after: float | None = None
) -> Callable[[Spares], Awaitable[ReplayResult]]:
    """The work the camera runs: a replay in a fresh context of its live browser."""

    async def work(spares: Spares) -> ReplayResult:
        now = time.monotonic()
        stop_at = None if stop_after is None else now + stop_after
        player = Player(recording, base_url, deadline=now + seconds, stop_at=stop_at)
        try:
            return await player.run(spares.browser)
        except CaptureFailed:
            raise
        except Exception as exc:  # Playwright's errors: the deployment or the page failed
            first = str(getattr(exc, "message", exc)).splitlines()[0]
            raise CaptureFailed(f"the replay stopped: {first}") from None

    return work
