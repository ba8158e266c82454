"""The review object of a design checkup, read from its rows: screenshots, marks sorted into
work packets, loop counts, next action and guidance. One function builds it for every reader
(agents, scripts, the person's page and the webhook body), so they never disagree."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from viewfinder.services.checkup_next import GUIDANCE, next_action, status_of
from viewfinder.services.checkup_records import (
    Area,
    CaptureRecord,
    DeliveryRecord,
    LiveState,
    Loop,
    PassDiff,
    Pin,
    PinComment,
    ReviewRecord,
    ReviewSummary,
    Screenshot,
    ShotDiff,
    WebhookRecord,
    WorkPackets,
)
from viewfinder.services.env import Env
from viewfinder.services.urls import file_url
from viewfinder.store.models import (
    Checkup,
    CheckupPin,
    CheckupShot,
    Comparison,
    Image,
    Thread,
    WebhookDelivery,
    utcnow,
)

TWEAKS = ("wording", "spacing", "size", "color", "alignment")
UNRESOLVED = ("open", "in_progress")
COMMENTS_SHOWN = 5


def lineage(s: Session, checkup: Checkup) -> list[Checkup]:
    """The passes before this one, oldest first."""
    chain: list[Checkup] = []
    parent_id = checkup.parent_id
    while parent_id is not None:
        parent = s.get(Checkup, parent_id)
        if parent is None:
            break
        chain.append(parent)
        parent_id = parent.parent_id
    return list(reversed(chain))


def next_pass(s: Session, checkup_id: str) -> Checkup | None:
    return s.scalar(select(Checkup).where(Checkup.parent_id == checkup_id).limit(1))


def review_url(env: Env, checkup: Checkup) -> str:
    return f"{env.settings.public_url}/r/{checkup.token}"


@dataclass(frozen=True)
class _Shots:
    rows: list[CheckupShot]
    images: dict[str, Image]


def _shots(s: Session, checkup_ids: Sequence[str]) -> _Shots:
    rows = list(
        s.scalars(
            select(CheckupShot)
            .where(CheckupShot.checkup_id.in_(checkup_ids))
            .order_by(CheckupShot.checkup_id, CheckupShot.position)
        )
    )
    ids = [r.image_id for r in rows]
    found = {i.id: i for i in s.scalars(select(Image).where(Image.id.in_(ids)))} if ids else {}
    return _Shots(rows, found)


def _area(anchor: dict[str, Any] | None) -> tuple[Area | None, Area | None]:
    if not anchor:
        return None, None
    if anchor.get("type") == "rect":
        return Area(x=anchor["x"], y=anchor["y"], w=anchor["w"], h=anchor["h"]), None
    if anchor.get("type") == "point":
        return None, Area(x=anchor["x"], y=anchor["y"], w=0, h=0)
    return None, None


def overlaps(a: Area, b: Area) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


def number_of(pin: CheckupPin) -> str:
    if pin.kind == "finding":
        return f"{'G' if pin.source == 'guest' else 'S'}{pin.number}"
    return f"M{pin.number}"


def area_changed(comparison: Comparison, area: Area | None, base: Image) -> bool:
    """Whether the comparison found a change inside the area (fractions of the base image);
    with no area, whether anything changed."""
    if not comparison.changed:
        return False
    if area is None or not base.width or not base.height:
        return True
    if (comparison.width, comparison.height) != (base.width, base.height):
        return True  # the page changed size: everything below moved
    x0, y0 = area.x * base.width, area.y * base.height
    x1, y1 = x0 + area.w * base.width, y0 + area.h * base.height
    for r in comparison.regions:
        if r["x"] < x1 and x0 < r["x"] + r["width"] and r["y"] < y1 and y0 < r["y"] + r["height"]:
            return True
    return False


class _Reader:
    """Reads everything one review object needs in a few queries."""

    def __init__(self, env: Env, s: Session, checkup: Checkup) -> None:
        self.env, self.s, self.checkup = env, s, checkup
        self.before = lineage(s, checkup)
        self.passes = {c.id: c for c in [*self.before, checkup]}
        self.child = next_pass(s, checkup.id)
        ids = list(self.passes)
        self.shots = _shots(s, [*ids, *([self.child.id] if self.child else [])])
        pins = list(s.scalars(select(CheckupPin).where(CheckupPin.checkup_id.in_(ids))))
        self.pins = {p.thread_id: p for p in pins}
        threads = (
            list(s.scalars(select(Thread).where(Thread.id.in_(list(self.pins))))) if pins else []
        )
        self.threads = {t.id: t for t in threads}
        replies = (
            list(
                s.scalars(
                    select(Thread).where(Thread.parent_id.in_(list(self.pins))).order_by(Thread.id)
                )
            )
            if pins
            else []
        )
        self.replies: dict[str, list[Thread]] = {}
        for r in replies:
            if r.parent_id:
                self.replies.setdefault(r.parent_id, []).append(r)
        compared = [r.comparison_id for r in self.shots.rows if r.comparison_id]
        self.comparisons = (
            {c.id: c for c in s.scalars(select(Comparison).where(Comparison.id.in_(compared)))}
            if compared
            else {}
        )
        after = [p.after_image_id for p in pins if p.after_image_id]
        self.after = (
            {i.id: i for i in s.scalars(select(Image).where(Image.id.in_(after)))} if after else {}
        )

    def shot_rows(self, checkup_id: str) -> list[CheckupShot]:
        return [r for r in self.shots.rows if r.checkup_id == checkup_id]

    def _pass_diff(self, pin: CheckupPin, thread: Thread, area: Area | None) -> PassDiff | None:
        if thread.status not in ("resolved", "verified"):
            return None
        made_on = self.passes[pin.checkup_id]
        following = (
            self.child
            if made_on.id == self.checkup.id
            else next((c for c in self.passes.values() if c.parent_id == made_on.id), None)
        )
        if following is None:
            return None
        own = self.shot_rows(made_on.id)
        if pin.screenshot_index >= len(own):
            return None
        base = own[pin.screenshot_index]
        number = number_of(pin)
        verb = "verified" if thread.status == "verified" else "resolved"
        later = next(
            (
                r
                for r in self.shot_rows(following.id)
                if r.comparison_id and self._base_of(r.comparison_id) == base.image_id
            ),
            None,
        )
        p0, p1 = made_on.pass_number, following.pass_number
        if later is None or later.comparison_id is None:
            return PassDiff(
                state="pending" if following.capture_state == "queued" else "failed",
                from_pass=p0,
                to_pass=p1,
                comparison_id=None,
                summary=f"{number} {verb}; pass {p1} has no screenshot matching "
                f"'{base.label}' to compare"
                if following.capture_state != "queued"
                else f"{number} {verb}; pass {p1} is still being captured",
            )
        comparison = self.comparisons[later.comparison_id]
        if comparison.state == "requested":
            state, summary = "pending", f"{number} {verb}; the passes are still being compared"
        elif comparison.state == "failed":
            state = "failed"
            summary = f"{number} {verb}; the passes could not be compared"
        elif area_changed(comparison, area, self.shots.images[base.image_id]):
            state = "changed"
            summary = f"{number} {verb}; its area changed between pass {p0} and pass {p1}"
        else:
            state = "identical"
            summary = f"{number} {verb}, but its area is identical to the last pass"
        return PassDiff(
            state=state, from_pass=p0, to_pass=p1, comparison_id=comparison.id, summary=summary
        )

    def _base_of(self, comparison_id: str) -> str | None:
        found = self.comparisons.get(comparison_id)
        return found.base_image_id if found else None

    def pin(self, pin: CheckupPin) -> Pin:
        thread = self.threads[pin.thread_id]
        area, point = _area(thread.anchor)
        after = self.after.get(pin.after_image_id or "")
        return Pin(
            id=thread.id,
            number=number_of(pin),
            kind="finding" if pin.kind == "finding" else "mark",
            severity=thread.severity or "nit",
            body=thread.body,
            area=area,
            point=point,
            screenshot_index=pin.screenshot_index,
            suggested_copy=pin.suggested_copy,
            question_answer=pin.question_answer,
            status=thread.status,
            comments=[
                PinComment(
                    id=r.id,
                    body=r.body,
                    author=r.author_name,
                    is_agent=r.author_is_agent,
                    created_at=r.created_at,
                )
                for r in self.replies.get(thread.id, [])[-COMMENTS_SHOWN:]
            ],
            source=pin.source,
            rule=pin.rule,
            note=pin.note,
            after_image_url=file_url(self.env, after.sha256) if after else None,
            related_pin=pin.related_pin,
            accepted_as=pin.accepted_as,
            review_id=pin.checkup_id,
            pass_number=self.passes[pin.checkup_id].pass_number,
            reopened=pin.reopened,
            pass_diff=self._pass_diff(pin, thread, area),
            created_at=thread.created_at,
            updated_at=thread.updated_at,
        )

    def screenshots(self) -> list[Screenshot]:
        listed = []
        parent_rows = self.shot_rows(self.checkup.parent_id) if self.checkup.parent_id else []
        for index, row in enumerate(self.shot_rows(self.checkup.id)):
            image = self.shots.images[row.image_id]
            diff = None
            comparison = self.comparisons.get(row.comparison_id or "")
            if comparison is not None:
                base_index = next(
                    (
                        i
                        for i, p in enumerate(parent_rows)
                        if p.image_id == comparison.base_image_id
                    ),
                    -1,
                )
                base_image = self.shots.images.get(comparison.base_image_id or "")
                diff = ShotDiff(
                    comparison_id=comparison.id,
                    parent_screenshot_index=base_index,
                    state=comparison.state,
                    changed=comparison.changed,
                    diff_ratio=comparison.diff_ratio,
                    diff_url=file_url(self.env, comparison.diff_sha256)
                    if comparison.diff_sha256
                    else None,
                    before_url=file_url(self.env, base_image.sha256) if base_image else None,
                )
            listed.append(
                Screenshot(
                    index=index,
                    label=row.label,
                    url=file_url(self.env, image.sha256),
                    width=image.width or 0,
                    height=image.height or 0,
                    meta=dict(row.meta) | {"origin": row.origin},
                    diff=diff,
                )
            )
        return listed


def _packets(reader: _Reader) -> tuple[WorkPackets, Loop]:
    own, carried, waiting, hints, settled = [], [], [], [], []
    for pin in sorted(reader.pins.values(), key=lambda p: (p.checkup_id, p.kind, p.number)):
        thread = reader.threads[pin.thread_id]
        mine = pin.checkup_id == reader.checkup.id
        if pin.kind == "finding":
            if mine and pin.accepted_as is None and thread.status == "open":
                hints.append(reader.pin(pin))
            continue
        record = reader.pin(pin)
        if mine:
            own.append(record)
        elif thread.status in UNRESOLVED and thread.severity != "keep":
            carried.append(record)
        if thread.status == "resolved":
            waiting.append(record)
        elif thread.status == "verified" and pin.checkup_id == reader.checkup.parent_id:
            settled.append(record)  # the pass before's fixes the person confirmed
    _relate(hints, own)
    pins = own + carried + [w for w in waiting if w.review_id != reader.checkup.id] + settled
    open_pins = [p for p in own + carried if p.status in UNRESOLVED]
    must_fix = [p for p in open_pins if p.severity == "must-fix"]
    nits = [p for p in open_pins if p.severity == "nit"]
    questions = [p for p in open_pins if p.severity == "question"]
    tweaks = [p for p in open_pins if p.severity in TWEAKS]
    keeps = [p for p in own if p.severity == "keep"]
    outstanding = [p for p in open_pins if p.severity != "keep"]
    packets = WorkPackets(
        pins=pins,
        must_fix=must_fix,
        nits=nits,
        questions=questions,
        tweaks=tweaks,
        keeps=keeps,
        awaiting_verification=waiting,
        carried_over=carried,
        second_opinion=hints,
    )
    loop = Loop(
        must_fix=len(must_fix),
        nits=len(nits),
        questions=len(questions),
        outstanding=len(outstanding),
        awaiting_verification=len(waiting),
    )
    return packets, loop


def _relate(hints: list[Pin], marks: list[Pin]) -> None:
    """A hint that overlaps a mark on the same screenshot names it (unless it names one)."""
    for i, hint in enumerate(hints):
        if hint.related_pin is not None or hint.area is None:
            continue
        for mark in marks:
            spot = mark.area or mark.point
            if (
                mark.screenshot_index == hint.screenshot_index
                and spot is not None
                and overlaps(hint.area, spot)
            ):
                hints[i] = hint.model_copy(update={"related_pin": mark.number})
                break


def webhook_record(s: Session, checkup: Checkup) -> WebhookRecord | None:
    if not checkup.webhook_url or not checkup.webhook_secret:
        return None
    last = s.scalar(
        select(WebhookDelivery)
        .where(WebhookDelivery.checkup_id == checkup.id)
        .order_by(WebhookDelivery.id.desc())
        .limit(1)
    )
    return WebhookRecord(
        url=checkup.webhook_url,
        state="paused" if checkup.webhook_paused_at else "active",
        failures=checkup.webhook_failures,
        secret=checkup.webhook_secret,
        last_delivery=DeliveryRecord(
            state=last.state,
            attempts=last.attempts,
            last_status=last.last_status,
            last_error=last.last_error,
            created_at=last.created_at,
            delivered_at=last.delivered_at,
        )
        if last
        else None,
    )


def review_record(env: Env, s: Session, checkup: Checkup) -> ReviewRecord:
    reader = _Reader(env, s, checkup)
    packets, loop = _packets(reader)
    status = status_of(checkup)
    action = next_action(checkup, status, loop, reader.child)
    base = env.settings.public_url
    guest_live = checkup.guest_token and (
        checkup.guest_expires_at is None or checkup.guest_expires_at > utcnow()
    )
    return ReviewRecord(
        id=checkup.id,
        status=status,
        title=checkup.title,
        context=checkup.context,
        type=checkup.type,
        source=checkup.source,
        page_url=checkup.page_url,
        design_rules=checkup.design_rules,
        pass_number=checkup.pass_number,
        parent_id=checkup.parent_id,
        next_pass_id=reader.child.id if reader.child else None,
        review_url=review_url(env, checkup),
        board_url=f"{base}/r/{checkup.token}/board",
        guest_share_url=f"{base}/g/{checkup.guest_token}" if guest_live else None,
        guest_expires_at=checkup.guest_expires_at if guest_live else None,
        next_action=action,
        guidance=GUIDANCE[action.action],
        work_packets=packets,
        loop=loop,
        screenshots=reader.screenshots(),
        capture=CaptureRecord(
            state=checkup.capture_state,
            reason=checkup.capture_reason,
        ),
        decision_note=checkup.decision_note,
        decided_at=checkup.decided_at,
        webhook=webhook_record(s, checkup),
        credits=checkup.credits,
        created_at=checkup.created_at,
        updated_at=checkup.updated_at,
        expires_at=checkup.expires_at,
    )


def summary_record(env: Env, s: Session, checkup: Checkup) -> ReviewSummary:
    full = review_record(env, s, checkup)
    return ReviewSummary(
        id=full.id,
        title=full.title,
        status=full.status,
        pass_number=full.pass_number,
        type=full.type,
        next_action=full.next_action,
        outstanding=full.loop.outstanding,
        awaiting_verification=full.loop.awaiting_verification,
        review_url=full.review_url,
        updated_at=full.updated_at,
    )


def pin_record(env: Env, s: Session, checkup: Checkup, thread_id: str) -> Pin:
    """One mark or hint of this review or the passes before it, as readers see it."""
    reader = _Reader(env, s, checkup)
    return reader.pin(reader.pins[thread_id])


def live_state(env: Env, s: Session, checkup: Checkup) -> LiveState:
    """A few small queries rather than the whole review object: the page polls this, and the
    object's signed image links change with time even when nothing else does."""
    ids = [c.id for c in lineage(s, checkup)] + [checkup.id]
    threads = s.execute(
        select(func.count(Thread.id), func.max(Thread.updated_at))
        .join(CheckupPin, CheckupPin.thread_id == Thread.id)
        .where(CheckupPin.checkup_id.in_(ids))
    ).one()
    replies = s.scalar(
        select(func.count(Thread.id))
        .join(CheckupPin, CheckupPin.thread_id == Thread.parent_id)
        .where(CheckupPin.checkup_id.in_(ids))
    )
    compared = s.scalars(
        select(Comparison.state)
        .join(CheckupShot, CheckupShot.comparison_id == Comparison.id)
        .where(CheckupShot.checkup_id == checkup.id)
        .order_by(CheckupShot.position)
    ).all()
    shots = s.scalar(select(func.count(CheckupShot.id)).where(CheckupShot.checkup_id == checkup.id))
    child = next_pass(s, checkup.id)
    status = status_of(checkup)
    parts = [
        checkup.updated_at.isoformat(),
        status,
        checkup.capture_state,
        child.id if child else "",
        str(shots),
        ",".join(compared),
        f"{threads[0]}:{threads[1].isoformat() if threads[1] else ''}:{replies}",
    ]
    return LiveState(
        version=hashlib.sha256("|".join(parts).encode()).hexdigest()[:20],
        status=status,
        updated_at=checkup.updated_at,
        next_pass_url=review_url(env, child) if child else None,
    )
