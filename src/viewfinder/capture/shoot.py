"""Taking one shot on the camera's loop: a fresh browser context (spares.py) whose only way
out is its own gate (gate.py), the page or email loaded and settled, read, checked by
axe-core and photographed; every failure turned into an error that says what happened in
words."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from viewfinder.capture import axe, page
from viewfinder.capture.camera import late
from viewfinder.capture.gate import REFUSED_HEADER, Gate
from viewfinder.capture.guard import default_port
from viewfinder.capture.model import Box, Origin, Shot, Violation
from viewfinder.capture.policy import Policy
from viewfinder.capture.spares import Fresh, Setup, Spares
from viewfinder.errors import AddressRefused, CaptureFailed, ViewfinderError
from viewfinder.imaging import read_header

if TYPE_CHECKING:
    from playwright.async_api import Page, Request, Response, Route

Scheme = Literal["light", "dark"]
# The address an email is shown at: never resolvable, so relative references load nothing.
EMAIL_URL = "http://email.viewfinder.invalid/"
# Mail clients run no scripts: the page's own are refused by policy, while the engine's
# (reading the DOM, axe-core) still run.
EMAIL_CSP = "script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"


@dataclass(frozen=True)
class Viewport:
    """A browser window: ``width`` x ``height`` CSS px at ``scale`` image px per CSS px."""

    label: str
    width: int
    height: int
    scale: float = 1.0
    mobile: bool = False


class Clock:
    """One capture's deadline, shared by its shots."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left; raises CaptureFailed once there are none."""
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise CaptureFailed(late(self.seconds))
        return remaining

    def left_ms(self) -> float:
        return self.left() * 1000


class Accessibility:
    """axe-core once per capture: the leading shot (desktop, light) runs it, and the others
    wait for its violations and place them on themselves. ``script`` is axe-core's source,
    "" when it is not installed, None when not wanted."""

    def __init__(self, script: str | None, leader: str) -> None:
        self.script = script
        self.leader = leader
        self._found: asyncio.Future[tuple[Violation, ...] | None] | None = None

    @property
    def missing(self) -> bool:
        return self.script == ""

    def _future(self) -> asyncio.Future[tuple[Violation, ...] | None]:
        if self._found is None:
            self._found = asyncio.get_running_loop().create_future()
        return self._found

    def release(self, label: str) -> None:
        """The leader is done, however it went: nobody waits for it any longer."""
        if label == self.leader and not self._future().done():
            self._future().set_result(None)

    async def check(self, tab: Page, label: str) -> tuple[Violation, ...]:
        if not self.script:
            return ()
        if label == self.leader:
            found = await page.accessibility(tab, self.script)
            if not self._future().done():
                self._future().set_result(found)
            return found
        led = await self._future()
        if led is None:  # the leader failed before it got there: run it here
            return await page.accessibility(tab, self.script)
        return await page.place(tab, led)


@dataclass(frozen=True)
class Job:
    """What a shot needs besides its viewport: the policy, the deadline, and axe-core."""

    policy: Policy
    clock: Clock
    accessibility: Accessibility


async def shoot_page(
    spares: Spares,
    url: str,
    viewport: Viewport,
    job: Job,
    full_page: bool,
    ready: str | None = None,
) -> Shot:
    """A page at one viewport (``ready``: see capture_url). Raises CaptureFailed, or
    AddressRefused for a redirect to a refused address."""
    from playwright.async_api import Error

    visited: list[str] = []
    broken: list[str] = []
    fresh = await _fresh(spares, viewport, "light", job)
    try:
        tab = fresh.tab
        tab.on("request", lambda r: _note_navigation(r, visited))
        tab.on("requestfailed", lambda r: _note_navigation(r, broken, r.failure))
        response = await tab.goto(url, wait_until="commit", timeout=job.clock.left_ms())
        notes = _document_notes(response, fresh.gate)
        await _wait_for_load(tab, fresh.gate, job.clock, broken)
        if ready is not None:
            failed = await tab.evaluate(ready)
            if failed:
                raise CaptureFailed(str(failed))
        return await _finish(fresh, viewport, job, "page", full_page, notes, "light")
    except Error as exc:
        raise _failure(exc, fresh.gate, visited, job.clock) from None
    finally:
        await fresh.close()


async def shoot_email(
    spares: Spares, html: str, viewport: Viewport, scheme: Scheme, job: Job
) -> Shot:
    """An email in one colour scheme, its whole length. Raises CaptureFailed."""
    from playwright.async_api import Error

    async def serve(route: Route) -> None:
        request = route.request
        if request.url == EMAIL_URL:
            headers = {
                "Content-Type": "text/html; charset=utf-8",
                "Content-Security-Policy": EMAIL_CSP,
            }
            await route.fulfill(body=html, headers=headers)
        elif request.is_navigation_request() and request.frame.parent_frame is None:
            await route.abort("blockedbyclient")  # a mail client does not navigate by itself
        else:
            await route.fallback()

    fresh = await _fresh(spares, viewport, scheme, job)
    try:
        await fresh.tab.route("**/*", serve)
        await fresh.tab.goto(EMAIL_URL, wait_until="load", timeout=job.clock.left_ms())
        shown = Viewport(scheme, viewport.width, viewport.height, viewport.scale, viewport.mobile)
        return await _finish(fresh, shown, job, "email", True, (), scheme)
    except Error as exc:
        raise _failure(exc, fresh.gate, [], job.clock) from None
    finally:
        await fresh.close()


async def _fresh(spares: Spares, viewport: Viewport, scheme: Scheme, job: Job) -> Fresh:
    """A fresh context for the shot, its gate armed with the capture's guard and limits."""
    from playwright.async_api import Error

    setup = Setup(viewport.width, viewport.height, viewport.scale, viewport.mobile, scheme)
    try:
        fresh = await spares.take(setup)
    except Error as exc:
        raise CaptureFailed(f"the browser could not open a page: {exc.message}") from None
    fresh.gate.arm(job.policy.guard, max_bytes=job.policy.max_bytes, timeout=job.clock.seconds)
    return fresh


async def _finish(
    fresh: Fresh,
    viewport: Viewport,
    job: Job,
    origin: Origin,
    full_page: bool,
    notes: tuple[str, ...],
    scheme: Scheme,
) -> Shot:
    """Settle the page, read it, check it and photograph it."""
    policy, tab, gate = job.policy, fresh.tab, fresh.gate
    await page.settle(tab)
    reading = await page.read(tab)
    if job.accessibility.missing:
        notes = (*notes, axe.MISSING)
    width, height = viewport.width, viewport.height
    if full_page:
        width = max(width, round(reading.content_width))
        height = min(max(round(reading.content_height), height), policy.max_height)
        if reading.content_height > policy.max_height:
            notes = (
                *notes,
                f"the page is {reading.content_height:.0f} px tall; the shot stops at "
                f"{policy.max_height} px (VIEWFINDER_CAPTURE_MAX_HEIGHT)",
            )
    png = await page.photograph(
        tab, full_page=full_page, width=width, height=height, timeout_ms=job.clock.left_ms()
    )
    # After the photograph: a shot that places the leader's violations waits for them, and
    # its photograph need not wait too.
    violations = await job.accessibility.check(tab, viewport.label)
    if gate.over_limit:
        raise CaptureFailed(gate.limit_reason())
    try:
        header = read_header(png, policy.limits, name="the screenshot")
    except ViewfinderError as exc:
        raise CaptureFailed(exc.message) from None
    return Shot(
        png=png,
        width=header.width,
        height=header.height,
        label=viewport.label,
        origin=origin,
        scale=viewport.scale,
        viewport=(viewport.width, viewport.height),
        mobile=viewport.mobile,
        color_scheme=scheme,
        url=None if origin == "email" else tab.url,
        dom=reading.dom,
        boxes=_within(reading.boxes, width, height),
        violations=violations,
        blocked=tuple(
            f"{r.host}:{r.port} {r.kind}: {r.reason}" for r in gate.refusals if r.kind != "limit"
        ),
        notes=notes,
    )


def _note_navigation(request: Request, into: list[str], what: str | None = None) -> None:
    if request.is_navigation_request() and request.frame.parent_frame is None:
        into.append(what or request.url)


async def _wait_for_load(tab: Page, gate: Gate, clock: Clock, broken: list[str]) -> None:
    """Wait for the load event, but not for one that will never come: Chromium does not fire
    it when the document's own response is cut short (as the gate does past the byte limit)."""
    from playwright.async_api import TimeoutError as Late

    while True:
        try:
            await tab.wait_for_load_state("load", timeout=min(250.0, clock.left_ms()))
            return
        except Late:
            if gate.over_limit:
                raise CaptureFailed(gate.limit_reason()) from None
            if broken:
                raise CaptureFailed(f"the page could not be loaded: {broken[0]}") from None


def _within(boxes: tuple[Box, ...], width: float, height: float) -> tuple[Box, ...]:
    """The boxes that show in a shot of width x height CSS px."""
    return tuple(
        b for b in boxes if b.x < width and b.y < height and b.x + b.w > 0 and b.y + b.h > 0
    )


def _document_notes(response: Response | None, gate: Gate) -> tuple[str, ...]:
    """Refuse a page whose document (after redirects) the gate did not carry; note an error
    status the site itself answered."""
    if response is None:
        return ()
    refused = response.headers.get(REFUSED_HEADER.lower())
    if refused is not None:
        parts = urlsplit(response.url)
        refusal = gate.refusal_for(parts.hostname or "", parts.port or default_port(parts.scheme))
        if refusal is not None and refusal.kind == "refused":
            raise AddressRefused(f"the page led to {response.url}: {refusal.reason}")
        raise CaptureFailed(f"the page could not be loaded: {refused}")
    if response.status >= 400:
        return (f"the page answered HTTP {response.status}",)
    return ()


def _failure(exc: Exception, gate: Gate, visited: list[str], clock: Clock) -> ViewfinderError:
    """The error to report for a Playwright error during a capture."""
    message = str(getattr(exc, "message", exc)).splitlines()[0]
    if gate.over_limit:
        return CaptureFailed(gate.limit_reason())
    for url in reversed(visited):
        parts = urlsplit(url)
        refusal = gate.refusal_for(parts.hostname or "", parts.port or default_port(parts.scheme))
        if refusal is not None and refusal.kind == "refused":
            return AddressRefused(f"the page led to {url}: {refusal.reason}", url=url)
        if refusal is not None:
            return CaptureFailed(f"the page could not be loaded: {refusal.reason}", url=url)
    if time.monotonic() >= clock.end or "Timeout" in message:
        return CaptureFailed(late(clock.seconds))
    if "crashed" in message or "closed" in message:
        return CaptureFailed(f"the page crashed while it was captured ({message})")
    return CaptureFailed(f"the page could not be loaded: {message}")
