"""The dashboard's test-run page: each differing screenshot of a run with its before, after
and diff images, its DOM diff and its decision (a person accepts, rejects or ignores), and
each session's timeline changes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from viewfinder.plumbing.bodies import Body
from viewfinder.plumbing.offloop import call
from viewfinder.plumbing.operations import operation
from viewfinder.services.testruns import board, review
from viewfinder.web.present import page, render
from viewfinder.web.sessions import Viewer, env_of, viewer, writer

router = APIRouter(include_in_schema=False)
Writer = Annotated[Viewer, Depends(writer)]


@router.get("/test-runs/{test_run_id}")
@page
async def test_run_page(request: Request, test_run_id: str) -> Response:
    person = await viewer(request)
    view = await call(board.run_board, env_of(request), person.actor, test_run_id)
    return render("testrun.html", person, view=view, nav="builds")


class Decision(Body):
    decision: Literal["accept", "reject", "ignore"]


@router.post(
    "/ui/api/replay-diffs/{replay_diff_id}/screenshots/{screenshot_name}/decision",
    **operation("review_diff"),
)
async def decide(
    replay_diff_id: str, screenshot_name: str, body: Decision, person: Writer
) -> dict[str, Any]:
    return await call(
        review.decide, person.env, person.actor, replay_diff_id, screenshot_name, body.decision
    )
