"""Marks on a design checkup: the agent reports its fixes (resolve_marks); the person, signed
in by the token of their review link and by nothing else, marks, answers, verifies, reopens,
accepts hints and decides. No project key can verify or decide: those functions take the
link's token, never an Actor.

A mark is a thread of kind ``mark`` on its screenshot's image (services/threads.py keeps its
lifecycle: agents set in_progress and resolved, people verify and reopen); its checkup pin
keeps the number, the suggested copy, the answer, the agent's note and after-image.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder import capture
from viewfinder.errors import Conflict, InvalidInput, NotFound
from viewfinder.services import (
    checkup_shots,
    images,
    lifecycle,
    permissions,
    scoping,
    storage,
    webhooks,
)
from viewfinder.services import threads as thread_service
from viewfinder.services.checkup_next import status_of
from viewfinder.services.checkup_records import (
    LiveState,
    Pin,
    ResolveResult,
    ReviewRecord,
    Skipped,
    Updated,
)
from viewfinder.services.checkup_view import (
    lineage,
    live_state,
    number_of,
    pin_record,
    review_record,
)
from viewfinder.services.checkups import find_by_token, place
from viewfinder.services.env import Actor, Env
from viewfinder.services.text import check_text
from viewfinder.store.models import Checkup, CheckupPin, Thread, utcnow

MAX_RESOLVE = 50
AGENT_STATUSES = ("in_progress", "resolved")
NOTE_MAX = 2000
GUEST_CHOICES = ("7d", "14d", "never")


# ---- the agent's side -------------------------------------------------------------------------


def _after_images(env: Env, actor: Actor, raw: list[dict[str, Any]]) -> dict[int, str]:
    """Store the after-images given with resolved marks; image ids by position in ``raw``."""
    wanted = {i: m["after_image"] for i, m in enumerate(raw) if m.get("after_image")}
    if not wanted:
        return {}
    shots = capture.load_images(list(wanted.values()), policy=checkup_shots.policy(env))
    files = [images.check_png(env, shot.png, what="after_image") for shot in shots]
    claimed = storage.claim(env, actor.project_id, files)
    try:
        with env.db.write() as s:
            rows = images.insert_images(
                s,
                actor,
                [
                    (f, images.NewImage(name="after image", variant="", source="checkup"))
                    for f in files
                ],
            )
            return {i: row.id for i, row in zip(wanted, rows, strict=True)}
    except BaseException:
        storage.forget(env, claimed)
        raise


def _check_resolve_items(marks: Any) -> list[dict[str, Any]]:
    if not isinstance(marks, list) or not 1 <= len(marks) <= MAX_RESOLVE:
        raise InvalidInput(f"marks takes 1 to {MAX_RESOLVE} marks a call")
    checked = []
    for item in marks:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise InvalidInput(
                "each mark is {id, status?, note?, after_image?} with the id from "
                "work_packets.pins[].id"
            )
        unknown = set(item) - {"id", "status", "note", "after_image"}
        if unknown:
            raise InvalidInput(
                f"a mark takes id, status, note and after_image (not {', '.join(sorted(unknown))})"
            )
        note = item.get("note")
        if note is not None:
            note = check_text("a mark's note", note, maximum=NOTE_MAX)
        checked.append({**item, "status": item.get("status") or "resolved", "note": note})
    return checked


def _lineage_pins(s: Session, checkup: Checkup) -> dict[str, tuple[CheckupPin, Thread]]:
    ids = [c.id for c in lineage(s, checkup)] + [checkup.id]
    rows = s.execute(
        select(CheckupPin, Thread)
        .join(Thread, Thread.id == CheckupPin.thread_id)
        .where(CheckupPin.checkup_id.in_(ids))
    ).all()
    return {t.id: (p, t) for p, t in rows}


def resolve_marks(env: Env, actor: Actor, review_id: str, marks: Any) -> ResolveResult:
    """Report progress on the person's marks: each becomes in_progress or resolved, with the
    agent's note and an optional after-image. Works only while the review is
    changes_requested; answers what was updated and what was skipped, each with its reason.
    Raises InvalidInput, Conflict, NotFound."""
    permissions.require(actor, "resolve_marks")
    items = _check_resolve_items(marks)
    with env.db.read() as s:
        row = scoping.owned(s, Checkup, review_id, actor, "review")
        status = status_of(row)
    if status != "changes_requested":
        raise Conflict(
            f"resolve_marks works only while the review is changes_requested; review "
            f"{review_id} is {status}"
            + (": wait for the person's decision (poll get_review)" if status == "pending" else ""),
            review_id=review_id,
        )
    after = _after_images(env, actor, [i for i in items if i["status"] == "resolved"])
    resolved_items = [i for i in items if i["status"] == "resolved"]
    after_by_item = {id(resolved_items[k]): v for k, v in after.items()}
    updated: list[Updated] = []
    skipped: list[Skipped] = []
    with env.db.write() as s:
        checkup = s.get(Checkup, review_id, with_for_update=True)
        assert checkup is not None
        known = _lineage_pins(s, checkup)
        for item in items:
            found = known.get(item["id"])
            reason = _skip_reason(actor, item, found)
            if reason is not None or found is None:
                skipped.append(Skipped(id=item["id"], reason=reason or "no such mark"))
                continue
            pin, thread = found
            thread_service.move_in(s, actor, thread, item["status"])
            if item["note"] is not None:
                pin.note = item["note"]
            if id(item) in after_by_item:
                pin.after_image_id = after_by_item[id(item)]
            number = number_of(pin)
            updated.append(
                Updated(
                    id=thread.id,
                    number=number,
                    status=item["status"],
                    summary=f"{number} {item['status'].replace('_', ' ')}"
                    + (" with an after-image" if pin.after_image_id else "")
                    + "; the person verifies it on the next pass",
                )
            )
        if updated:
            checkup.updated_at = utcnow()
        s.flush()
        record = review_record(env, s, checkup)
    return ResolveResult(
        updated=updated, skipped=skipped, next_action=record.next_action, review=record
    )


def _skip_reason(
    actor: Actor, item: dict[str, Any], found: tuple[CheckupPin, Thread] | None
) -> str | None:
    if found is None:
        return f"no mark {item['id']} on this review or the passes before it"
    pin, thread = found
    number = number_of(pin)
    if pin.kind != "mark":
        return f"{number} is a hint, not a mark: hints need no resolving"
    if item["status"] not in AGENT_STATUSES:
        return (
            f"agents set only in_progress or resolved (got {item['status']!r}); "
            "verifying and reopening stay with the person"
        )
    if thread.severity == "keep":
        return f"{number} is a keep: leave it as it is"
    if thread.status == item["status"]:
        return f"{number} is already {thread.status}"
    if thread.status == "verified":
        return f"{number} was verified by the person; it needs nothing more"
    refused = lifecycle.refusal(actor, thread, item["status"])
    return refused.message if refused is not None else None


# ---- the person's side: the review link's token is their sign-in ------------------------------


def person(checkup: Checkup) -> Actor:
    """The person of a review link: not an agent, allowed to comment and resolve threads."""
    return Actor(
        project_id=checkup.project_id,
        key_id=f"person_{checkup.root_id}"[:40],
        name="reviewer",
        roles=frozenset({"review"}),
        is_agent=False,
    )


def _open_by_token(env: Env, token: str, what: str) -> Checkup:
    checkup = find_by_token(env, token)
    status = status_of(checkup)
    if status == "expired":
        raise Conflict(
            f"this review's link expired: {what} is no longer possible", review_id=checkup.id
        )
    return checkup


def view(env: Env, token: str) -> ReviewRecord:
    """The review a person's link shows. Raises NotFound."""
    checkup = find_by_token(env, token)
    with env.db.read() as s:
        row = s.get(Checkup, checkup.id)
        assert row is not None
        return review_record(env, s, row)


def live(env: Env, token: str) -> LiveState:
    """What the person's open page polls to show the agent's work without a reload: a version
    that changes with anything the page shows, and the next pass's link once it opened."""
    checkup = find_by_token(env, token)
    with env.db.read() as s:
        row = s.get(Checkup, checkup.id)
        assert row is not None
        return live_state(env, s, row)


def _pin_of(s: Session, checkup: Checkup, mark_id: str) -> tuple[CheckupPin, Thread]:
    found = _lineage_pins(s, checkup).get(mark_id)
    if found is None:
        raise NotFound(f"no mark {mark_id!r} on this review", mark_id=mark_id)
    return found


def _touch(s: Session, checkup_id: str) -> Checkup:
    row = s.get(Checkup, checkup_id, with_for_update=True)
    assert row is not None
    row.updated_at = utcnow()
    return row


def _pin_record(env: Env, s: Session, checkup: Checkup, thread_id: str) -> Pin:
    return pin_record(env, s, checkup, thread_id)


def add_mark(
    env: Env,
    token: str,
    *,
    screenshot_index: int,
    body: str,
    severity: str = "nit",
    area: Any = None,
    point: Any = None,
    suggested_copy: str | None = None,
    source: str = "human",
) -> Pin:
    """A person's mark on a screenshot: M1, M2 ... with a severity, an area (a rectangle, or
    a point) and the exact copy to use. Raises InvalidInput, Conflict, NotFound."""
    checkup = _open_by_token(env, token, "marking")
    if status_of(checkup) == "approved":
        raise Conflict(
            "this review is approved: open a new pass to mark more", review_id=checkup.id
        )
    if severity not in lifecycle.MARK_SEVERITIES:
        raise InvalidInput(f"a mark's severity is one of {', '.join(lifecycle.MARK_SEVERITIES)}")
    anchor = place(area, point)
    copy = (
        check_text("suggested_copy", suggested_copy, maximum=NOTE_MAX) if suggested_copy else None
    )
    actor = person(checkup)
    with env.db.write() as s:
        row = _touch(s, checkup.id)
        shots = checkup_shots.shot_rows(s, checkup.id)
        if isinstance(screenshot_index, bool) or not 0 <= screenshot_index < len(shots):
            raise InvalidInput(
                f"screenshot_index is 0 to {len(shots) - 1} on this review (got {screenshot_index})"
                if shots
                else "the review has no screenshots yet"
            )
        thread = thread_service.open_thread(
            s,
            actor,
            thread_service.On("image", shots[screenshot_index].image_id),
            body,
            anchor=anchor,
            kind="mark",
            severity=severity,
        )
        s.add(
            CheckupPin(
                thread_id=thread.id,
                project_id=checkup.project_id,
                checkup_id=checkup.id,
                kind="mark",
                number=checkup_shots.next_number(s, checkup.id, "mark"),
                screenshot_index=screenshot_index,
                source=source,
                suggested_copy=copy,
                reopened=0,
            )
        )
        s.flush()
        return _pin_record(env, s, row, thread.id)


def _move(env: Env, token: str, mark_id: str, status: str, what: str) -> Pin:
    checkup = _open_by_token(env, token, what)
    actor = person(checkup)
    with env.db.write() as s:
        row = _touch(s, checkup.id)
        pin, thread = _pin_of(s, row, mark_id)
        if pin.kind != "mark":
            raise InvalidInput(f"{number_of(pin)} is a hint: accept it to make it a mark")
        thread_service.move_in(s, actor, thread, status)
        if status == "open":
            pin.reopened += 1
        s.flush()
        return _pin_record(env, s, row, thread.id)


def verify_mark(env: Env, token: str, mark_id: str) -> Pin:
    """The person confirms a resolved mark is fixed. Raises Conflict (not resolved)."""
    return _move(env, token, mark_id, "verified", "verifying")


def reopen_mark(env: Env, token: str, mark_id: str, note: str | None = None) -> Pin:
    """The person says a resolved (or verified) mark is not fixed: it is open again, and
    carried over into the next pass. ``note`` is added as a reply."""
    pin = _move(env, token, mark_id, "open", "reopening")
    if note:
        comment(env, token, mark_id, note)
    return pin


def comment(env: Env, token: str, mark_id: str, body: str) -> Pin:
    """A reply on a mark (the latest ones show in ``comments``)."""
    checkup = _open_by_token(env, token, "commenting")
    actor = person(checkup)
    with env.db.write() as s:
        row = _touch(s, checkup.id)
        _pin_of(s, row, mark_id)
    thread_service.reply(env, actor, mark_id, body)
    with env.db.read() as s:
        row2 = s.get(Checkup, checkup.id)
        assert row2 is not None
        return _pin_record(env, s, row2, mark_id)


def answer_question(env: Env, token: str, mark_id: str, answer: str) -> Pin:
    """The person's answer to a question mark, kept as ``question_answer``."""
    text = check_text("answer", answer, maximum=NOTE_MAX)
    checkup = _open_by_token(env, token, "answering")
    with env.db.write() as s:
        row = _touch(s, checkup.id)
        pin, thread = _pin_of(s, row, mark_id)
        if thread.severity != "question":
            raise InvalidInput(f"{number_of(pin)} is a {thread.severity}, not a question")
        pin.question_answer = text
        s.flush()
        return _pin_record(env, s, row, thread.id)


def accept_hint(env: Env, token: str, hint_id: str, severity: str = "nit") -> Pin:
    """Turn a hint into the person's mark (its source says where it came from)."""
    checkup = _open_by_token(env, token, "accepting a hint")
    with env.db.read() as s:
        row = s.get(Checkup, checkup.id)
        assert row is not None
        pin, thread = _pin_of(s, row, hint_id)
        if pin.kind != "finding":
            raise InvalidInput(f"{number_of(pin)} is a mark already")
        if pin.accepted_as:
            raise Conflict(f"{number_of(pin)} was accepted already", mark_id=pin.accepted_as)
        anchor, index, body = thread.anchor, pin.screenshot_index, thread.body
        source = pin.source if pin.source in ("guest", "vision", "agent") else "checklist"
    kind = anchor.get("type") if anchor else None
    area = {k: anchor[k] for k in ("x", "y", "w", "h")} if anchor and kind == "rect" else None
    point = {k: anchor[k] for k in ("x", "y")} if anchor and kind == "point" else None
    mark = add_mark(
        env,
        token,
        screenshot_index=index,
        body=body,
        severity=severity,
        area=area,
        point=point,
        source=source,
    )
    with env.db.write() as s:
        found = s.get(CheckupPin, hint_id, with_for_update=True)
        assert found is not None
        found.accepted_as = mark.id
        hint = s.get(Thread, hint_id)
        if hint is not None and hint.status == "open":
            thread_service.move_in(s, person(checkup), hint, "resolved")
    return mark


def decide(
    env: Env,
    token: str,
    decision: Literal["approved", "changes_requested"],
    note: str | None = None,
) -> ReviewRecord:
    """The person's decision on a pass, with a note. Sends review.decided to the review's
    webhook. Raises InvalidInput, Conflict."""
    if decision not in ("approved", "changes_requested"):
        raise InvalidInput("decide with approved or changes_requested")
    text = check_text("note", note, maximum=NOTE_MAX) if note else None
    checkup = _open_by_token(env, token, "deciding")
    with env.db.write() as s:
        row = _touch(s, checkup.id)
        if row.status == "approved":
            raise Conflict("this pass is approved already", review_id=row.id)
        if row.capture_state == "queued":
            raise Conflict(
                "this pass is still being captured: decide once its screenshots are there",
                review_id=row.id,
            )
        row.status = decision
        row.decision_note = text
        row.decided_at = utcnow()
        s.flush()
        record = review_record(env, s, row)
        webhooks.queue_decided(s, row, record)
        return record


def regenerate_guest_link(env: Env, token: str, expires: str | datetime = "7d") -> ReviewRecord:
    """A new guest link (the old one stops working), expiring in 7 days, 14 days, never, or
    at a given time."""
    import secrets

    checkup = _open_by_token(env, token, "sharing")
    now = utcnow()
    if isinstance(expires, datetime):
        if expires.tzinfo is None or expires <= now:
            raise InvalidInput("a guest link's expiry is a time in the future, with its zone")
        until: datetime | None = expires
    elif expires in GUEST_CHOICES:
        until = None if expires == "never" else now + timedelta(days=int(expires[:-1]))
    else:
        raise InvalidInput("a guest link expires in 7d, 14d, never, or at a date")
    with env.db.write() as s:
        row = _touch(s, checkup.id)
        row.guest_token = secrets.token_urlsafe(24)
        row.guest_expires_at = until
        s.flush()
        return review_record(env, s, row)
