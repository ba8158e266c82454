"""Pages and emails, captured by the warm Chromium: a URL at desktop and mobile sizes, an HTML
email as a mail client shows it (about 600 px wide, no scripts, light and dark).

Each shot is taken in a fresh browser context whose only way out is the capture's gate
(gate.py), so the page and everything it loads are held to the guard and the byte limit. The
whole capture, every shot of it, shares one deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from viewfinder.capture import axe, page
from viewfinder.capture.camera import camera
from viewfinder.capture.gate import REFUSED_HEADER, Gate
from viewfinder.capture.guard import default_port
from viewfinder.capture.model import Box, Origin, Shot
from viewfinder.capture.placeholder import placeholder
from viewfinder.capture.policy import Policy
from viewfinder.errors import AddressRefused, CaptureFailed, InvalidInput, ViewfinderError
from viewfinder.imaging import read_header

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Request, Response

OnFailure = Literal["placeholder", "raise"]


@dataclass(frozen=True)
class Viewport:
    """A browser window: ``width`` x ``height`` CSS px at ``scale`` image px per CSS px."""

    label: str
    width: int
    height: int
    scale: float = 1.0
    mobile: bool = False


DESKTOP = Viewport("desktop", 1280, 800)
# A phone at device scale 2: the image is 750 px wide, and boxes stay in CSS px.
MOBILE = Viewport("mobile", 375, 812, 2.0, mobile=True)
EMAIL = Viewport("email", 600, 800)
EMAIL_MOBILE = Viewport("email", 375, 812, 2.0, mobile=True)
# The address an email is shown at: never resolvable, so relative references load nothing.
EMAIL_URL = "http://email.viewfinder.invalid/"
# Mail clients run no scripts: the page's own are refused by policy, while the engine's
# (reading the DOM, axe-core) still run.
EMAIL_CSP = "script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"


class _Clock:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left_ms(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise CaptureFailed(self.late())
        return left * 1000

    def late(self) -> str:
        return (
            f"the capture did not finish within {self.seconds:g} s (the page or what it loads "
            "is too slow); try again, or raise VIEWFINDER_CAPTURE_TIMEOUT_SECONDS"
        )


def capture_url(
    url: str,
    *,
    policy: Policy | None = None,
    viewports: Sequence[Viewport] = (DESKTOP, MOBILE),
    full_page: bool = False,
    accessibility: bool = True,
    on_failure: OnFailure = "placeholder",
) -> list[Shot]:
    """Screenshots of a web page, one per viewport (desktop 1280x800 and mobile 375x812 at
    device scale 2 by default), the whole page when ``full_page`` (cut at the policy's
    height), with DOM snapshot, boxes and (with ``accessibility``) axe-core's violations.

    The URL is checked first: a refused address or a URL that is not one raises
    AddressRefused or InvalidInput whatever ``on_failure`` says. A capture that fails later
    (unreachable, too slow, too big, a redirect to a refused address, a crash) gives a
    placeholder shot per viewport with ``origin`` ``capture_failed`` and the reason, or raises
    CaptureFailed (AddressRefused for a refused redirect) with ``on_failure="raise"``."""
    policy = policy or Policy()
    try:
        target = policy.guard.check_url(url, what="the page")
    except CaptureFailed as exc:
        return _failed(exc, [v.label for v in viewports], url, on_failure)
    script = _axe(policy, accessibility)

    def work(browser: Browser) -> list[Shot]:
        clock = _Clock(policy.timeout)
        shots = []
        for viewport in viewports:
            try:
                shots.append(
                    _shoot_page(browser, target.url, viewport, policy, clock, full_page, script)
                )
            except (CaptureFailed, AddressRefused) as exc:
                if on_failure == "raise":
                    raise
                shots.append(placeholder(viewport.label, exc.message, url=target.url))
        return shots

    return _run(work, policy, [v.label for v in viewports], target.url, on_failure)


def capture_html(
    html: str,
    *,
    policy: Policy | None = None,
    mobile: bool = False,
    accessibility: bool = True,
    on_failure: OnFailure = "placeholder",
) -> list[Shot]:
    """An HTML email as a mail client shows it: 600 CSS px wide (375 at device scale 2 with
    ``mobile``), its own scripts not run, the whole length (cut at the policy's height), in
    the light and then the dark colour scheme (labels ``light`` and ``dark``). Its images and
    styles load through the guard like a page's. Raises InvalidInput for empty or oversized
    HTML; a failure while rendering gives placeholders or CaptureFailed, as capture_url."""
    policy = policy or Policy()
    if not isinstance(html, str) or not html.strip():
        raise InvalidInput("the HTML is empty: send the email's whole HTML document")
    size = len(html.encode("utf-8", "surrogatepass"))
    if size > policy.max_bytes:
        raise InvalidInput(
            f"the HTML is {size:,} bytes; at most {policy.max_bytes:,} are rendered "
            "(VIEWFINDER_CAPTURE_MAX_BYTES)"
        )
    script = _axe(policy, accessibility)
    viewport = EMAIL_MOBILE if mobile else EMAIL

    def work(browser: Browser) -> list[Shot]:
        clock = _Clock(policy.timeout)
        shots = []
        for scheme in ("light", "dark"):
            try:
                shots.append(_shoot_email(browser, html, viewport, scheme, policy, clock, script))
            except (CaptureFailed, AddressRefused) as exc:
                if on_failure == "raise":
                    raise
                shots.append(placeholder(scheme, exc.message))
        return shots

    return _run(work, policy, ["light", "dark"], None, on_failure)


def _axe(policy: Policy, wanted: bool) -> str | None:
    """axe-core's source when wanted: "" when it is not installed, None when not wanted."""
    return (axe.source(policy.axe_path) or "") if wanted else None


def _failed(
    exc: ViewfinderError, labels: list[str], url: str | None, on_failure: OnFailure
) -> list[Shot]:
    if on_failure == "raise":
        raise exc
    return [placeholder(label, exc.message, url=url) for label in labels]


def _run(
    work: Callable[[Browser], list[Shot]],
    policy: Policy,
    labels: list[str],
    url: str | None,
    on_failure: OnFailure,
) -> list[Shot]:
    try:
        return camera(policy.chromium).run(work, seconds=policy.timeout)
    except CaptureFailed as exc:  # the browser did not start, or did not come back
        return _failed(exc, labels, url, on_failure)


def _context(
    browser: Browser, viewport: Viewport, gate: Gate, scheme: Literal["light", "dark"]
) -> BrowserContext:
    context = browser.new_context(
        viewport={"width": viewport.width, "height": viewport.height},
        device_scale_factor=viewport.scale,
        is_mobile=viewport.mobile,
        has_touch=viewport.mobile,
        color_scheme=scheme,
        reduced_motion="reduce",
        locale="en-US",
        timezone_id="UTC",
        service_workers="block",
        accept_downloads=False,
        proxy={"server": gate.server},
    )
    context.add_init_script(page.STEADY)
    return context


def _shoot_page(
    browser: Browser,
    url: str,
    viewport: Viewport,
    policy: Policy,
    clock: _Clock,
    full_page: bool,
    script: str | None,
) -> Shot:
    from playwright.sync_api import Error

    visited: list[str] = []
    broken: list[str] = []
    with Gate(policy.guard, max_bytes=policy.max_bytes, timeout=policy.timeout) as gate:
        context = _context(browser, viewport, gate, "light")
        try:
            tab = context.new_page()
            tab.on("request", lambda r: _note_navigation(r, visited))
            tab.on("requestfailed", lambda r: _note_navigation(r, broken, r.failure))
            response = tab.goto(url, wait_until="commit", timeout=clock.left_ms())
            notes = _document_notes(response, gate)
            _wait_for_load(tab, gate, clock, broken)
            return _finish(tab, gate, viewport, policy, clock, script, "page", full_page, notes)
        except Error as exc:
            raise _failure(exc, gate, visited, clock) from None
        finally:
            _close(context)


def _shoot_email(
    browser: Browser,
    html: str,
    viewport: Viewport,
    scheme: Literal["light", "dark"],
    policy: Policy,
    clock: _Clock,
    script: str | None,
) -> Shot:
    from playwright.sync_api import Error, Route

    def serve(route: Route) -> None:
        request = route.request
        if request.url == EMAIL_URL:
            route.fulfill(
                body=html,
                headers={
                    "Content-Type": "text/html; charset=utf-8",
                    "Content-Security-Policy": EMAIL_CSP,
                },
            )
        elif request.is_navigation_request() and request.frame.parent_frame is None:
            route.abort("blockedbyclient")  # a mail client does not navigate away by itself
        else:
            route.fallback()

    with Gate(policy.guard, max_bytes=policy.max_bytes, timeout=policy.timeout) as gate:
        context = _context(browser, viewport, gate, scheme)
        try:
            tab = context.new_page()
            tab.route("**/*", serve)
            tab.goto(EMAIL_URL, wait_until="load", timeout=clock.left_ms())
            shown = Viewport(
                scheme, viewport.width, viewport.height, viewport.scale, viewport.mobile
            )
            return _finish(tab, gate, shown, policy, clock, script, "email", True, (), scheme)
        except Error as exc:
            raise _failure(exc, gate, [], clock) from None
        finally:
            _close(context)


def _finish(
    tab: Page,
    gate: Gate,
    viewport: Viewport,
    policy: Policy,
    clock: _Clock,
    script: str | None,
    origin: Origin,
    full_page: bool,
    notes: tuple[str, ...],
    scheme: Literal["light", "dark"] = "light",
) -> Shot:
    """Settle the page, read it, check it (``script`` is axe-core's source, "" when it is
    missing, None when not wanted) and photograph it."""
    page.settle(tab)
    reading = page.read(tab)
    violations = page.accessibility(tab, script) if script else ()
    if script == "":
        notes = (*notes, axe.MISSING)
    width = max(viewport.width, round(reading.content_width)) if full_page else viewport.width
    height = viewport.height
    if full_page:
        height = min(max(round(reading.content_height), viewport.height), policy.max_height)
        if reading.content_height > policy.max_height:
            notes = (
                *notes,
                f"the page is {reading.content_height:.0f} px tall; the shot stops at "
                f"{policy.max_height} px (VIEWFINDER_CAPTURE_MAX_HEIGHT)",
            )
    png = page.photograph(
        tab, full_page=full_page, width=width, height=height, timeout_ms=clock.left_ms()
    )
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


def _wait_for_load(tab: Page, gate: Gate, clock: _Clock, broken: list[str]) -> None:
    """Wait for the load event, but not for one that will never come: Chromium does not fire
    it when the document's own response is cut short (as the gate does past the byte limit)."""
    from playwright.sync_api import TimeoutError as Late

    while True:
        try:
            tab.wait_for_load_state("load", timeout=min(250.0, clock.left_ms()))
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


def _failure(exc: Exception, gate: Gate, visited: list[str], clock: _Clock) -> ViewfinderError:
    """The error to report for a Playwright error during a capture."""
    message = str(getattr(exc, "message", exc)).splitlines()[0]
    if gate.over_limit:
        return CaptureFailed(gate.limit_reason())
    for url in reversed(visited):
        parts = urlsplit(url)
        port = parts.port or default_port(parts.scheme)
        refusal = gate.refusal_for(parts.hostname or "", port)
        if refusal is not None and refusal.kind == "refused":
            return AddressRefused(f"the page led to {url}: {refusal.reason}", url=url)
        if refusal is not None:
            return CaptureFailed(f"the page could not be loaded: {refusal.reason}", url=url)
    if time.monotonic() >= clock.end or "Timeout" in message:
        return CaptureFailed(clock.late())
    if "crashed" in message or "closed" in message:
        return CaptureFailed(f"the page crashed while it was captured ({message})")
    return CaptureFailed(f"the page could not be loaded: {message}")


def _close(context: BrowserContext) -> None:
    try:
        context.close()
    except Exception:  # the browser went away; the camera starts a new one next time
        pass
