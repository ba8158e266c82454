"""The capture engine: pages, emails, PDFs and images turned into screenshots that know what
is on them, and a second opinion that measures those screenshots and points at the pixels.

Like ``viewfinder.imaging`` it knows nothing of the database: bytes and records in, bytes and
records out. It drives Debian's Chromium through Playwright (imported only when a page or an
email is captured) and renders PDFs with pypdfium2.

Sources, each returning a list of ``Shot`` (PNG bytes, size, label, scale, DOM snapshot JSON,
boxes of the laid-out elements, axe-core violations, requests blocked, notes)::

    capture_url(url, policy=, viewports=(DESKTOP, MOBILE), full_page=False)
        desktop 1280x800 at scale 1 and mobile 375x812 at device scale 2 (a 750x1624 image;
        boxes stay in CSS px), labels "desktop" and "mobile"
    capture_html(html, policy=, mobile=False)
        an email 600 px wide (375 at scale 2 with mobile), its scripts not run, whole length,
        labels "light" and "dark" (prefers-color-scheme)
    render_pdf(pdf, policy=, max_pages=5)      bytes, https URL, data URL or base64;
        "page-1".."page-5", 1280 px wide, text runs as boxes
    load_images(images, policy=)               https URLs, data URLs, base64 or bytes of
        PNG, JPEG or WebP; "image-1"...; stored as PNG
    read_source(source, policy=, what=)        the bytes behind such a source

Safety: ``Policy`` carries the ``Guard`` (public addresses only, plus an allow-list),
the time limit, the byte limit, the full-page height limit and the image limits; build it
from the application's settings with ``Policy.from_settings(settings)``. A URL to a refused
address raises ``AddressRefused`` before anything is fetched. Every request a page makes
goes through a per-capture proxy that asks the guard again and connects only to the checked
addresses (redirects and subresources included). ``Guard`` and ``fetch`` have no browser in
them: webhooks use them too (``Guard.check_url(url, https_only=True)``, then ``fetch(url,
guard=..., method="POST", follow_redirects=False, fail_on_status=False)``).

Failures: with ``on_failure="placeholder"`` (the default) a capture that fails after its
input was accepted (unreachable, too slow, too big, a redirect to a refused address, a page
that hangs or crashes) returns placeholder shots whose ``origin`` is ``"capture_failed"``,
whose ``reason`` says why, and whose pixels say it in words. ``on_failure="raise"`` raises
``CaptureFailed`` (code ``capture_failed``) or ``AddressRefused`` instead. Bad input (an
empty HTML, bytes that are not a PDF or an image, an image over the limits) always raises.

Second opinion::

    second_opinion(shots, review_type) -> list[Finding]
    check_shot(shot, review_type) -> list[Finding]

``review_type`` is "ui", "website", "presentation" or "email". A ``Finding`` has a severity
("suggestion", "a11y" or "polish"), a body, an ``Area`` (x, y, w, h as fractions 0-1 of its
screenshot, or None), the ``label`` of its shot and the ``rule`` that made it; findings are
hints, deduplicated, at most 8 per rule and shot.

Threads and processes: one warm Chromium per process, started on first use, restarted when
it died, driven from its own thread (Playwright's sync API cannot be shared across threads);
a fresh browser context per shot. Any thread may call the capture functions; calls in one
process take turns. A job worker or the CLI calls them directly. An async server must not
call them on its event loop: run them in a worker thread (``await
anyio.to_thread.run_sync(functools.partial(capture_url, url, policy=policy))``), or, better
under load, queue a job so that captures run in the worker processes, each with its browser.
"""

from viewfinder.capture.checks import check_shot, second_opinion
from viewfinder.capture.documents import load_images, read_source, render_pdf
from viewfinder.capture.fetch import Fetched, fetch
from viewfinder.capture.guard import Guard, Target, is_public
from viewfinder.capture.model import (
    REVIEW_TYPES,
    Area,
    Box,
    Finding,
    Origin,
    ReviewType,
    Severity,
    Shot,
    Violation,
    ViolationNode,
)
from viewfinder.capture.policy import CaptureSettings, Policy
from viewfinder.capture.shoot import Viewport
from viewfinder.capture.sources import (
    DESKTOP,
    EMAIL,
    EMAIL_MOBILE,
    MOBILE,
    OnFailure,
    capture_html,
    capture_url,
)

__all__ = [
    "DESKTOP",
    "EMAIL",
    "EMAIL_MOBILE",
    "MOBILE",
    "REVIEW_TYPES",
    "Area",
    "Box",
    "CaptureSettings",
    "Fetched",
    "Finding",
    "Guard",
    "OnFailure",
    "Origin",
    "Policy",
    "ReviewType",
    "Severity",
    "Shot",
    "Target",
    "Violation",
    "ViolationNode",
    "Viewport",
    "capture_html",
    "capture_url",
    "check_shot",
    "fetch",
    "is_public",
    "load_images",
    "read_source",
    "render_pdf",
    "second_opinion",
]
