"""The person's review page of a design checkup, `/r/{token}`, and its board, `/r/{token}/board`.
No sign-in: the token in the link is the person's sign-in, as in the hosted product. The page
acts through the REST routes of the same link (/api/v1/r/{token}/...), which read no key."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from viewfinder.plumbing.offloop import call
from viewfinder.services import checkup_guests, checkup_marks
from viewfinder.services.checkup_records import Pin, ReviewRecord
from viewfinder.web.present import page, render
from viewfinder.web.sessions import env_of

router = APIRouter(include_in_schema=False)
COLUMNS = (
    ("open", "Open"),
    ("in_progress", "In progress"),
    ("resolved", "Resolved"),
    ("verified", "Verified"),
)


def _marks(review: ReviewRecord) -> list[Pin]:
    packets = review.work_packets
    seen: dict[str, Pin] = {}
    for pin in [*packets.pins, *packets.awaiting_verification]:
        seen.setdefault(pin.id, pin)
    return list(seen.values())


@router.get("/r/{token}")
@page
async def review_page(request: Request, token: str) -> Response:
    review = await call(checkup_marks.view, env_of(request), token)
    live = await call(checkup_marks.live, env_of(request), token)
    marks = _marks(review)
    return render(
        "review.html",
        None,
        review=review,
        live=live,
        marks=marks,
        on_shot={
            s.index: [
                m for m in marks if m.review_id == review.id and m.screenshot_index == s.index
            ]
            for s in review.screenshots
        },
        hints_on_shot={
            s.index: [
                h
                for h in review.work_packets.second_opinion
                if h.screenshot_index == s.index and (h.area or h.point)
            ]
            for s in review.screenshots
        },
        open_review=review.status in ("pending", "changes_requested"),
    )


@router.get("/r/{token}/board")
@page
async def board_page(request: Request, token: str) -> Response:
    review = await call(checkup_marks.view, env_of(request), token)
    marks = _marks(review)
    return render(
        "board.html",
        None,
        review=review,
        columns=[(key, label, [m for m in marks if m.status == key]) for key, label in COLUMNS],
    )


@router.get("/g/{token}")
@page
async def guest_page(request: Request, token: str) -> Response:
    guest = await call(checkup_guests.view, env_of(request), token)
    return render("guest.html", None, guest=guest)
