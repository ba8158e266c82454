"""Design checkups (ReviseMy's reviews): an agent sends a page, an email, a deck or
screenshots; a person marks what is wrong and decides; the agent fixes, reports each fix and
opens the next pass; the person verifies and approves.

This module opens, lists and reads reviews and adds screenshots and hints; the marks and the
person's side are in checkup_marks.py, the screenshots in checkup_shots.py, the review object
in checkup_view.py, credits in credits.py and the webhook in webhooks.py.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from viewfinder import capture
from viewfinder.capture import Area as FindingArea
from viewfinder.capture import Finding
from viewfinder.errors import CaptureFailed, Conflict, Forbidden, InvalidInput, NotFound
from viewfinder.ids import new_id
from viewfinder.jobs import queue
from viewfinder.services import checkup_shots, credits, permissions, scoping
from viewfinder.services.checkup_next import status_of
from viewfinder.services.checkup_records import FindingsResult, ReviewList, ReviewRecord
from viewfinder.services.checkup_view import review_record, summary_record
from viewfinder.services.env import Actor, Env
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_text
from viewfinder.services.waiting import Wait
from viewfinder.store.models import Checkup, CheckupPin, utcnow

SOURCES = ("images", "capture_url", "pdf", "html")
TYPES = capture.REVIEW_TYPES
DEFAULT_TYPE = {"images": "ui", "capture": "website", "pdf": "presentation", "html": "email"}
MAX_IMAGES = 5
MAX_FINDINGS = 20
TITLE_MAX = 160
CONTEXT_MAX = 4000
RULES_MAX = 20_000
URL_MAX = 2000
LIST_LIMIT = 50
SOURCES_HINT = (
    "provide exactly one source: images (1-5 screenshots as data URLs, base64 or https URLs), "
    "capture_url with page_url (a public website), pdf (slides) or html (an email)"
)


@dataclass(frozen=True)
class NewReview:
    """What create_review takes (the reference's argument names)."""

    title: str
    context: str | None = None
    type: str | None = None
    page_url: str | None = None
    webhook_url: str | None = None
    parent_id: str | None = None
    images: list[str] | None = None
    capture_url: bool = False
    pdf: str | None = None
    html: str | None = None
    design_rules: str | None = None
    full_page: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _optional(what: str, value: str | None, maximum: int) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return check_text(what, value, maximum=maximum)


def _source(new: NewReview) -> str:
    given = [
        name
        for name, present in (
            ("images", bool(new.images)),
            ("capture_url", new.capture_url),
            ("pdf", bool(new.pdf)),
            ("html", bool(new.html)),
        )
        if present
    ]
    if len(given) != 1:
        what = "none" if not given else " and ".join(given)
        raise InvalidInput(f"{SOURCES_HINT}; this call gave {what}", sources=list(SOURCES))
    if new.images is not None and not 1 <= len(new.images) <= MAX_IMAGES:
        raise InvalidInput(
            f"images takes 1 to {MAX_IMAGES} screenshots; this call sent {len(new.images)}: "
            "send the rest with add_screenshot, or open one review per screen"
        )
    return "capture" if given[0] == "capture_url" else given[0]


def _check_webhook(env: Env, url: str) -> str:
    guard = checkup_shots.policy(env).guard
    try:
        guard.check_url(url, what="webhook_url", https_only=True)
    except CaptureFailed as exc:
        raise InvalidInput(f"webhook_url cannot be used: {exc.message}") from None
    return url.strip()


def _check_page(env: Env, url: str) -> str:
    try:
        checkup_shots.policy(env).guard.check_url(url, what="page_url")
    except CaptureFailed:
        pass  # an address that does not resolve now: the capture tries, and says why it failed
    return url.strip()


def _parent(env: Env, actor: Actor, parent_id: str) -> Checkup:
    with env.db.read() as s:
        parent = scoping.owned(s, Checkup, parent_id, actor, "review")
        status = status_of(parent)
        if status != "changes_requested":
            advice = {
                "pending": "the person has not decided it yet: poll get_review until its "
                "next_action is open_next_pass",
                "approved": "the person approved it: nothing is left to fix",
                "expired": "its link expired: open a new review without parent_id",
            }[status]
            raise Conflict(
                f"the next pass opens after changes_requested; review {parent_id} is {status}: "
                f"{advice}",
                review_id=parent_id,
            )
        child = s.scalar(select(Checkup.id).where(Checkup.parent_id == parent_id))
        if child is not None:
            raise Conflict(
                f"pass {parent.pass_number + 1} ({child}) already follows review {parent_id}: "
                "continue from that one",
                review_id=child,
            )
        s.expunge(parent)
        return parent


def create_review(env: Env, actor: Actor, new: NewReview) -> ReviewRecord:
    """Open a review (a pass of a design checkup) from exactly one source. Images are stored
    at once; pages, emails and PDFs are captured by a job (see wait_for_capture). Raises
    InvalidInput (sources, fields), AddressRefused, Conflict (parent not ready),
    InsufficientCredits, Forbidden, NotFound (parent)."""
    permissions.require(actor, "create_review")
    source = _source(new)
    title = check_text("title", new.title, maximum=TITLE_MAX, multiline=False)
    context = _optional("context", new.context, CONTEXT_MAX)
    rules = _optional("design_rules", new.design_rules, RULES_MAX)
    if new.type is not None and new.type not in TYPES:
        raise InvalidInput(f"type is one of {', '.join(TYPES)} (got {new.type!r})")
    parent = _parent(env, actor, new.parent_id) if new.parent_id else None
    page_url = _optional("page_url", new.page_url, URL_MAX) or (parent.page_url if parent else None)
    if source == "capture":
        if not page_url:
            raise InvalidInput("capture_url needs page_url: the public address to capture")
        page_url = _check_page(env, page_url)
    webhook_url = _optional("webhook_url", new.webhook_url, URL_MAX)
    if webhook_url:
        webhook_url = _check_webhook(env, webhook_url)
    elif parent is not None:
        webhook_url = parent.webhook_url
    if source == "html" and len((new.html or "").encode()) > env.settings.capture_max_bytes:
        raise InvalidInput(
            f"html is over {env.settings.capture_max_bytes:,} bytes: send the email's HTML "
            "without inlined images, or screenshots as images"
        )
    # Given images are read and checked before anything is written (a bad one changes nothing).
    shots = (
        capture.load_images(new.images, policy=checkup_shots.policy(env))
        if source == "images" and new.images
        else []
    )
    review_type = new.type or (parent.type if parent else DEFAULT_TYPE[source])
    now = utcnow()
    checkup_id = new_id("rev")
    request: dict[str, Any] | None = None
    if source != "images":
        value = {"capture": page_url, "html": new.html, "pdf": new.pdf}[source]
        request = {"kind": source, "value": value, "full_page": new.full_page}
    with env.db.write() as s:
        cost = credits.spend(s, actor, checkup_id, source)
        inherited_secret = (
            parent.webhook_secret if parent and parent.webhook_url == webhook_url else None
        )
        s.add(
            Checkup(
                id=checkup_id,
                project_id=actor.project_id,
                parent_id=parent.id if parent else None,
                root_id=parent.root_id if parent else checkup_id,
                pass_number=parent.pass_number + 1 if parent else 1,
                title=title,
                context=context,
                type=review_type,
                source=source,
                page_url=page_url,
                design_rules=rules or (parent.design_rules if parent else None),
                status="pending",
                token=secrets.token_urlsafe(24),
                guest_token=secrets.token_urlsafe(24),
                guest_expires_at=now + timedelta(days=7),
                expires_at=now + timedelta(days=env.settings.checkup_expiry_days),
                capture_state="queued" if request else "none",
                capture_request=request,
                webhook_url=webhook_url,
                webhook_secret=(inherited_secret or secrets.token_hex(32)) if webhook_url else None,
                # The same webhook carries its count of failures in a row (and its pause) on;
                # a new address starts afresh.
                webhook_failures=parent.webhook_failures if inherited_secret and parent else 0,
                webhook_paused_at=parent.webhook_paused_at if inherited_secret and parent else None,
                credits=cost,
                created_by=actor.key_id,
                created_at=now,
                updated_at=now,
            )
        )
        if request:
            s.flush()
            queue.enqueue(s, checkup_shots.CAPTURE_JOB, checkup_id)
    if shots:
        checkup_shots.store_shots(env, actor, checkup_id, shots)
    return get_review(env, actor, checkup_id)


def _row(env: Env, actor: Actor, review_id: str) -> Checkup:
    with env.db.read() as s:
        row = scoping.owned(s, Checkup, review_id, actor, "review")
        s.expunge(row)
        return row


@short_read
def get_review(env: Env, actor: Actor, review_id: str) -> ReviewRecord:
    """The review object. Raises NotFound."""
    permissions.require(actor, "get_review")
    with env.db.read() as s:
        return review_record(env, s, scoping.owned(s, Checkup, review_id, actor, "review"))


def capture_waiting(
    env: Env, actor: Actor, review_id: str, *, timeout: float
) -> Wait[ReviewRecord]:
    """A wait for the review's capture job to be over (see services.waiting)."""
    return Wait(
        lambda: get_review(env, actor, review_id), lambda r: r.capture.state != "queued", timeout
    )


def wait_for_capture(env: Env, actor: Actor, review_id: str, *, timeout: float) -> ReviewRecord:
    """The review once its capture job is over, or as it stands after ``timeout`` seconds."""
    return capture_waiting(env, actor, review_id, timeout=timeout).block()


@short_read
def list_reviews(env: Env, actor: Actor, *, limit: int = LIST_LIMIT) -> ReviewList:
    """The reviews this key opened, newest first: pass, status, next action and counts."""
    permissions.require(actor, "list_reviews")
    if isinstance(limit, bool) or not 1 <= limit <= LIST_LIMIT:
        raise InvalidInput(f"limit is 1 to {LIST_LIMIT}")
    with env.db.read() as s:
        rows = s.scalars(
            select(Checkup)
            .where(Checkup.project_id == actor.project_id, Checkup.created_by == actor.key_id)
            .order_by(Checkup.id.desc())
            .limit(limit)
        )
        return ReviewList(reviews=[summary_record(env, s, row) for row in rows])


def _open_for_agent(env: Env, actor: Actor, review_id: str, what: str) -> Checkup:
    row = _row(env, actor, review_id)
    status = status_of(row)
    if status in ("approved", "expired"):
        raise Conflict(
            f"{what} works on an open review; review {review_id} is {status}", review_id=review_id
        )
    return row


def add_screenshot(env: Env, actor: Actor, review_id: str, image: str) -> ReviewRecord:
    """Append a screenshot while the review still waits for the person (after a failed
    capture, the page added by hand). Raises Conflict once the person decided, InvalidImage,
    InvalidInput, AddressRefused."""
    permissions.require(actor, "add_screenshot")
    row = _row(env, actor, review_id)
    if status_of(row) != "pending":
        raise Conflict(
            f"add_screenshot works while the review waits for the person; review {review_id} is "
            f"{status_of(row)}: open the next pass with parent_id for new screenshots",
            review_id=review_id,
        )
    shots = capture.load_images([image], policy=checkup_shots.policy(env))
    with env.db.read() as s:
        count = len(checkup_shots.shot_rows(s, review_id))
    shots = [type(shot)(**{**shot.__dict__, "label": f"image-{count + 1}"}) for shot in shots]
    checkup_shots.store_shots(env, actor, review_id, shots)
    return get_review(env, actor, review_id)


def _finding(raw: Any, screenshots: int) -> tuple[int, Finding, str | None]:
    if not isinstance(raw, dict):
        raise InvalidInput(
            "each finding is an object {severity?, body, area?, screenshot_index?, related_pin?}"
        )
    severity = raw.get("severity") or "suggestion"
    if severity not in ("suggestion", "a11y", "polish"):
        raise InvalidInput(
            f"a finding's severity is suggestion, a11y or polish (got {severity!r}): never "
            "must-fix, which only the person's marks are"
        )
    body = check_text("a finding's body", raw.get("body"), maximum=4000)
    index = raw.get("screenshot_index", 0)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < screenshots:
        raise InvalidInput(
            f"screenshot_index is 0 to {screenshots - 1} on this review (got {index!r})"
        )
    area = normalise_area(raw.get("area"))
    related = raw.get("related_pin")
    if related is not None and (not isinstance(related, str) or len(related) > 40):
        raise InvalidInput("related_pin is a mark's number (M3) or id")
    area_value = FindingArea(area["x"], area["y"], area["w"], area["h"]) if area else None
    return index, Finding(severity, body, area_value, str(index), "agent"), related  # type: ignore[arg-type]


def normalise_area(area: Any) -> dict[str, float] | None:
    """An area {x, y, w, h} as fractions 0-1: percentages (any value over 1) are divided by
    100, a rectangle drawn past an edge is clipped, and one under 0.01 of the width or height
    is dropped (None), as the reference does. Raises InvalidInput for anything else."""
    if area is None:
        return None
    keys = ("x", "y", "w", "h")
    if not isinstance(area, dict) or set(area) - set(keys) or not all(k in area for k in keys):
        raise InvalidInput(
            "an area is {x, y, w, h}: fractions 0-1 (or percentages) of the screenshot"
        )
    values = [area[k] for k in keys]
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        raise InvalidInput("an area's x, y, w and h are numbers")
    if any(v < 0 or v > 100 for v in values):
        raise InvalidInput("an area's x, y, w and h are 0 to 1 (or 0 to 100 percent)")
    if any(v > 1 for v in values):
        values = [v / 100 for v in values]
    x, y, w, h = (float(v) for v in values)
    w, h = min(w, 1 - x), min(h, 1 - y)
    if w < 0.01 or h < 0.01:
        return None
    return {"x": x, "y": y, "w": w, "h": h}


def normalise_point(point: Any) -> dict[str, float]:
    """A point {x, y} as fractions 0-1 of the screenshot. Raises InvalidInput."""
    if not isinstance(point, dict) or set(point) != {"x", "y"}:
        raise InvalidInput("a point is {x, y}: fractions 0-1 of the screenshot")
    values = [point["x"], point["y"]]
    numbers = all(not isinstance(v, bool) and isinstance(v, int | float) for v in values)
    if not numbers or not all(0 <= v <= 1 for v in values):
        raise InvalidInput("a point's x and y are numbers 0 to 1 (fractions of the screenshot)")
    return {"x": float(values[0]), "y": float(values[1])}


def place(area: Any, point: Any) -> dict[str, Any] | None:
    """Where a mark or a suggestion sits, as its thread's anchor: a rectangle, a point, or
    nothing (the whole screenshot; also an area too small to keep, as the reference drops
    it). Raises InvalidInput, also for both at once."""
    if area is not None and point is not None:
        raise InvalidInput("give an area or a point, not both")
    if point is not None:
        return {"type": "point", **normalise_point(point)}
    rect = normalise_area(area)
    return {"type": "rect", **rect} if rect else None


def add_findings(env: Env, actor: Actor, review_id: str, findings: list[Any]) -> FindingsResult:
    """An agent's hints beside the person's marks (suggestion, a11y, polish; up to 20 a
    call). They never change the review's status. Raises InvalidInput, Conflict."""
    permissions.require(actor, "add_findings")
    if not isinstance(findings, list) or not 1 <= len(findings) <= MAX_FINDINGS:
        raise InvalidInput(f"findings takes 1 to {MAX_FINDINGS} findings a call")
    row = _open_for_agent(env, actor, review_id, "add_findings")
    with env.db.read() as s:
        count = len(checkup_shots.shot_rows(s, review_id))
    if count == 0:
        raise Conflict(
            "the review has no screenshots yet: wait for its capture (get_review)",
            review_id=review_id,
        )
    parsed = [_finding(f, count) for f in findings]
    with env.db.write() as s:
        checkup = s.get(Checkup, row.id, with_for_update=True)
        assert checkup is not None
        pins = checkup_shots.add_hints(
            s,
            actor,
            checkup,
            [(i, f) for i, f, _ in parsed],
            source="agent",
            related={n: related for n, (_, _, related) in enumerate(parsed)},
        )
        checkup.updated_at = utcnow()
        s.flush()
        ids = [p.thread_id for p in pins]
        record = review_record(env, s, checkup)
    added = [p for p in record.work_packets.second_opinion if p.id in ids]
    return FindingsResult(added=added, review=record)


def request_second_opinion(
    env: Env, actor: Actor, review_id: str, screenshot_index: int | None = None
) -> ReviewRecord:
    """Measure the screenshots again (one, or all) and add the hints found. Hints never
    change the review's status. Raises InvalidInput, Conflict, NotFound."""
    permissions.require(actor, "second_opinion")
    row = _open_for_agent(env, actor, review_id, "request_second_opinion")
    with env.db.read() as s:
        count = len(checkup_shots.shot_rows(s, review_id))
    if screenshot_index is not None and (
        isinstance(screenshot_index, bool) or not 0 <= screenshot_index < max(count, 1)
    ):
        raise InvalidInput(f"screenshot_index is 0 to {count - 1} on this review")
    checkup_shots.rerun_second_opinion(env, row.id, screenshot_index)
    return get_review(env, actor, review_id)


def find_by_token(env: Env, token: str) -> Checkup:
    """The review a person's link names. Raises NotFound for a link that names none, and
    Forbidden for a guest link: guests suggest, and only the reviewer marks, verifies,
    reopens and decides."""
    usable = isinstance(token, str) and 16 <= len(token) <= 64
    with env.db.read() as s:
        row = s.scalar(select(Checkup).where(Checkup.token == token)) if usable else None
        if row is None:
            if usable and s.scalar(select(Checkup.id).where(Checkup.guest_token == token)):
                raise Forbidden(
                    "this is a guest link, which leaves suggestions only (POST "
                    "/api/v1/g/{token}/suggestions, or the guest page /g/{token}): marking, "
                    "verifying, reopening and deciding are the reviewer's, on their own "
                    "review link"
                )
            raise NotFound("no review at this link: ask the agent for the current review_url")
        s.expunge(row)
        return row


def pin_numbers(env: Env, review_id: str) -> dict[str, str]:
    """Mark numbers (M1 ...) by thread id, for messages."""
    with env.db.read() as s:
        pins = s.scalars(select(CheckupPin).where(CheckupPin.checkup_id == review_id))
        return {p.thread_id: f"M{p.number}" for p in pins if p.kind == "mark"}
