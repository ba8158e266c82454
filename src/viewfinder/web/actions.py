"""What a person does from the dashboard, as small JSON endpoints under /ui/api for the pages'
scripts. Each one checks the session and its CSRF token, then calls the same service function
as the REST API; refusals come back in the REST API's error shape with the service's message."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import Field

from viewfinder.plumbing.bodies import Body
from viewfinder.plumbing.offloop import call
from viewfinder.plumbing.operations import operation
from viewfinder.services import baselines, contexts, reviews, threads
from viewfinder.services.baselines import BaselineRecord
from viewfinder.services.contexts import CloseResult
from viewfinder.services.reviews import AcceptBuildResult, ApproveResult, ReviewResult
from viewfinder.services.threads import ThreadRecord
from viewfinder.web.sessions import Viewer, writer

router = APIRouter(prefix="/ui/api", include_in_schema=False)
Writer = Annotated[Viewer, Depends(writer)]


class Decision(Body):
    decision: Literal["accept", "deny", "ignore"]


class NewThread(Body):
    body: str
    anchor: dict[str, Any] | None = None
    side: Literal["after", "before"] = "after"


class Text(Body):
    body: str


class Resolution(Body):
    resolved: bool = True


class Closing(Body):
    context_type: Literal["github_pr", "manual"]
    context_key: str = Field(max_length=300)
    reason: Literal["merged", "closed"]


@router.post("/diffs/{diff_id}/review", **operation("review_diff"))
async def review(diff_id: str, body: Decision, person: Writer) -> ReviewResult:
    return await call(reviews.review_diff, person.env, person.actor, diff_id, body.decision)


@router.post("/diffs/{diff_id}/approve", **operation("approve_diff"))
async def approve(diff_id: str, person: Writer) -> ApproveResult:
    return await call(reviews.approve_diff, person.env, person.actor, diff_id)


@router.post("/builds/{build_id}/accept", **operation("accept_build"))
async def accept_build(build_id: str, person: Writer) -> AcceptBuildResult:
    return await call(reviews.accept_build, person.env, person.actor, build_id=build_id)


@router.post("/diffs/{diff_id}/comments", status_code=201, **operation("comment"))
async def create_comment(diff_id: str, body: NewThread, person: Writer) -> ThreadRecord:
    return await call(
        threads.create_comment,
        person.env,
        person.actor,
        diff_id,
        body.body,
        anchor=body.anchor,
        side=body.side,
    )


@router.post("/comments/{comment_id}/replies", status_code=201, **operation("comment"))
async def reply(comment_id: str, body: Text, person: Writer) -> ThreadRecord:
    return await call(threads.reply, person.env, person.actor, comment_id, body.body)


@router.patch("/comments/{comment_id}", **operation("comment"))
async def edit(comment_id: str, body: Text, person: Writer) -> ThreadRecord:
    return await call(threads.update_comment, person.env, person.actor, comment_id, body.body)


@router.post("/comments/{comment_id}/resolve", **operation("resolve_comment"))
async def resolve(comment_id: str, body: Resolution, person: Writer) -> ThreadRecord:
    return await call(
        threads.resolve_comment,
        person.env,
        person.actor,
        comment_id,
        resolved=body.resolved,
    )


@router.delete("/comments/{comment_id}", **operation("delete_comment"))
async def delete_comment(comment_id: str, person: Writer) -> ThreadRecord:
    return await call(threads.delete_comment, person.env, person.actor, comment_id)


@router.delete("/baselines/{baseline_id}", **operation("delete_baseline"))
async def delete_baseline(baseline_id: str, person: Writer) -> BaselineRecord:
    return await call(baselines.delete_baseline, person.env, person.actor, baseline_id)


@router.post("/contexts/close", **operation("close_context"))
async def close_context(body: Closing, person: Writer) -> CloseResult:
    return await call(
        contexts.close_context,
        person.env,
        person.actor,
        context_key=body.context_key,
        context_type=body.context_type,
        reason=body.reason,
    )
