"""Pages and emails, captured by the warm Chromium: a URL at desktop and mobile sizes, an HTML
email as a mail client shows it (about 600 px wide, no scripts, light and dark).

The shots of one capture are taken at the same time, each in a fresh browser context behind
its own gate (so the page and everything it loads are held to the guard and the byte limit),
and share one deadline. A shot that fails becomes a placeholder that says why; the others
are kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Literal

from viewfinder.capture import axe
from viewfinder.capture.camera import camera, late
from viewfinder.capture.model import Shot
from viewfinder.capture.placeholder import placeholder
from viewfinder.capture.policy import Policy
from viewfinder.capture.shoot import (
    Accessibility,
    Clock,
    Job,
    Scheme,
    Viewport,
    shoot_email,
    shoot_page,
)
from viewfinder.errors import AddressRefused, CaptureFailed, InvalidInput, ViewfinderError

if TYPE_CHECKING:
    from viewfinder.capture.spares import Spares

OnFailure = Literal["placeholder", "raise"]

DESKTOP = Viewport("desktop", 1280, 800)
# A phone at device scale 2: the image is 750 px wide, and boxes stay in CSS px.
MOBILE = Viewport("mobile", 375, 812, 2.0, mobile=True)
EMAIL = Viewport("email", 600, 800)
EMAIL_MOBILE = Viewport("email", 375, 812, 2.0, mobile=True)
SCHEMES: tuple[Scheme, ...] = ("light", "dark")
# The camera's own limit comes after the shots' (theirs say which shot was late).
_BACKSTOP = 5.0


def capture_url(
    url: str,
    *,
    policy: Policy | None = None,
    viewports: Sequence[Viewport] = (DESKTOP, MOBILE),
    full_page: bool = False,
    accessibility: bool = True,
    on_failure: OnFailure = "placeholder",
    ready: str | None = None,
) -> list[Shot]:
    """Screenshots of a web page, one per viewport (desktop 1280x800 and mobile 375x812 at
    device scale 2 by default), the whole page when ``full_page`` (cut at the policy's
    height), with DOM snapshot, boxes and (with ``accessibility``) axe-core's violations.

    ``ready``, a JavaScript function's source, is awaited in the page once it has loaded: it
    resolves to null when the page is ready to be photographed (an app that renders after
    load), or to a sentence saying why the page failed, which fails the shot with it.

    The URL is checked first: a refused address or a URL that is not one raises
    AddressRefused or InvalidInput whatever ``on_failure`` says. A shot that fails later
    (unreachable, too slow, too big, a redirect to a refused address, a crash) is a
    placeholder with ``origin`` ``capture_failed`` and the reason, or raises CaptureFailed
    (AddressRefused for a refused redirect) with ``on_failure="raise"``."""
    policy = policy or Policy()
    labels = [v.label for v in viewports]
    try:
        target = policy.guard.check_url(url, what="the page")
    except CaptureFailed as exc:
        return _failed(exc, labels, url, on_failure)
    script = _axe(policy, accessibility)

    def work(spares: Spares) -> Awaitable[list[Shot]]:
        job = Job(policy, Clock(policy.timeout), Accessibility(script, labels[0]))
        return _all(
            [
                (v.label, partial(shoot_page, spares, target.url, v, job, full_page, ready))
                for v in viewports
            ],
            job,
            target.url,
            on_failure,
        )

    return _run(work, policy, labels, target.url, on_failure)


def capture_html(
    html: str,
    *,
    policy: Policy | None = None,
    mobile: bool = False,
    accessibility: bool = True,
    on_failure: OnFailure = "placeholder",
) -> list[Shot]:
    """An HTML email as a mail client shows it: 600 CSS px wide (375 at device scale 2 with
    ``mobile``), its own scripts not run, its whole length (cut at the policy's height), in
    the light and the dark colour scheme (labels ``light`` and ``dark``). Its images and
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

    def work(spares: Spares) -> Awaitable[list[Shot]]:
        job = Job(policy, Clock(policy.timeout), Accessibility(script, SCHEMES[0]))
        return _all(
            [
                (scheme, partial(shoot_email, spares, html, viewport, scheme, job))
                for scheme in SCHEMES
            ],
            job,
            None,
            on_failure,
        )

    return _run(work, policy, list(SCHEMES), None, on_failure)


async def _all(
    shots: list[tuple[str, Callable[[], Awaitable[Shot]]]],
    job: Job,
    url: str | None,
    on_failure: OnFailure,
) -> list[Shot]:
    """Take the shots together; each one late or failed becomes a placeholder (or, with
    ``on_failure="raise"``, the first failure is raised and the others are cancelled)."""

    async def one(label: str, take: Callable[[], Awaitable[Shot]]) -> Shot:
        try:
            return await asyncio.wait_for(take(), job.clock.left())
        except TimeoutError:
            failure: ViewfinderError = CaptureFailed(late(job.clock.seconds))
        except (CaptureFailed, AddressRefused) as exc:
            failure = exc
        finally:
            job.accessibility.release(label)
        if on_failure == "raise":
            raise failure
        return placeholder(label, failure.message, url=url)

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(label, take)) for label, take in shots]
    except ExceptionGroup as failed:  # only with on_failure="raise": say the first failure
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


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
    work: Callable[[Spares], Awaitable[list[Shot]]],
    policy: Policy,
    labels: list[str],
    url: str | None,
    on_failure: OnFailure,
) -> list[Shot]:
    try:
        return camera(policy.chromium).run(work, seconds=policy.timeout + _BACKSTOP)
    except CaptureFailed as exc:  # the browser did not start, or did not come back
        return _failed(exc, labels, url, on_failure)
