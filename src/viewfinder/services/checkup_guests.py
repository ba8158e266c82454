"""Guests of a design checkup: people the reviewer shared the guest link with. They see the
screenshots and leave suggestions (G1, G2 ...), which are hints beside the person's marks until
the person accepts one. The guest link expires (7 days by default; 14 days, never or a date
when the person makes a new one, which also stops the old one) and never reveals the person's
own link."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field
from sqlalchemy import func, select

from viewfinder.errors import Conflict, InvalidInput, NotFound
from viewfinder.services import checkup_shots
from viewfinder.services import threads as thread_service
from viewfinder.services.checkup_next import status_of
from viewfinder.services.checkup_records import Pin, Screenshot
from viewfinder.services.checkup_view import review_record
from viewfinder.services.checkups import place
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.text import check_text
from viewfinder.store.models import Checkup, CheckupPin, utcnow

NAME_MAX = 60


class GuestView(Record):
    title: str
    context: str | None
    type: str
    status: str
    screenshots: list[Screenshot]
    suggestions: list[Pin] = Field(description="What guests suggested so far (G1, G2 ...).")
    expires_at: datetime | None = Field(description="When this guest link stops working.")


def _guest_row(env: Env, token: str) -> Checkup:
    with env.db.read() as s:
        row = (
            s.scalar(select(Checkup).where(Checkup.guest_token == token))
            if isinstance(token, str) and 16 <= len(token) <= 64
            else None
        )
        if row is None or (row.guest_expires_at is not None and row.guest_expires_at <= utcnow()):
            raise NotFound(
                "no review at this guest link: it expired or was replaced; ask the reviewer "
                "for a new one"
            )
        s.expunge(row)
        return row


def view(env: Env, token: str) -> GuestView:
    """What a guest sees. Raises NotFound for an expired or replaced link."""
    row = _guest_row(env, token)
    with env.db.read() as s:
        checkup = s.get(Checkup, row.id)
        assert checkup is not None
        review = review_record(env, s, checkup)
    return GuestView(
        title=review.title,
        context=review.context,
        type=review.type,
        status=review.status,
        screenshots=review.screenshots,
        suggestions=[p for p in review.work_packets.second_opinion if p.source == "guest"],
        expires_at=row.guest_expires_at,
    )


def _guest(checkup: Checkup, name: str | None) -> Actor:
    return Actor(
        project_id=checkup.project_id,
        key_id=f"guest_{checkup.root_id}"[:40],
        name=f"guest {name}" if name else "guest",
        roles=frozenset({"review"}),
        is_agent=False,
    )


def suggest(
    env: Env,
    token: str,
    *,
    screenshot_index: int,
    body: str,
    area: Any = None,
    point: Any = None,
    name: str | None = None,
) -> GuestView:
    """A guest's suggestion (G#) on a screenshot, on an area, a point or the whole of it. It
    is a hint, as the reference has it ("suggestions rather than marks"): it never counts as
    a mark, and only the reviewer accepts it, verifies or decides. Raises NotFound,
    InvalidInput, Conflict."""
    row = _guest_row(env, token)
    if status_of(row) not in ("pending", "changes_requested"):
        raise Conflict(f"this review is {status_of(row)}: it takes no more suggestions")
    text = check_text("a suggestion", body, maximum=thread_service.BODY_MAX)
    who = check_text("name", name, maximum=NAME_MAX, multiline=False) if name else None
    anchor = place(area, point)
    with env.db.write() as s:
        checkup = s.get(Checkup, row.id, with_for_update=True)
        assert checkup is not None
        shots = checkup_shots.shot_rows(s, checkup.id)
        if isinstance(screenshot_index, bool) or not 0 <= screenshot_index < len(shots):
            raise InvalidInput(f"screenshot_index is 0 to {len(shots) - 1} on this review")
        thread = thread_service.open_thread(
            s,
            _guest(checkup, who),
            thread_service.On("image", shots[screenshot_index].image_id),
            text,
            anchor=anchor,
            kind="finding",
            severity="suggestion",
        )
        number = s.scalar(
            select(func.coalesce(func.max(CheckupPin.number), 0)).where(
                CheckupPin.checkup_id == checkup.id, CheckupPin.source == "guest"
            )
        )
        s.add(
            CheckupPin(
                thread_id=thread.id,
                project_id=checkup.project_id,
                checkup_id=checkup.id,
                kind="finding",
                number=int(number or 0) + 1,
                screenshot_index=screenshot_index,
                source="guest",
                reopened=0,
            )
        )
        checkup.updated_at = utcnow()
    return view(env, token)
