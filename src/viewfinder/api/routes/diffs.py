from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import Field

from viewfinder.api.deps import ActorDep, EnvDep, op
from viewfinder.api.fields import CommentText
from viewfinder.plumbing.bodies import Body
from viewfinder.plumbing.offloop import call
from viewfinder.services import diffs, renders, reviews, threads
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.records import Anchor
from viewfinder.services.reviews import ApproveResult, ReviewResult
from viewfinder.services.threads import ThreadRecord

router = APIRouter(tags=["diffs"])


@router.get("/diffs/{diff_id}", **op("get_diff"))
async def get_diff(diff_id: str, env: EnvDep, actor: ActorDep) -> DiffRecord:
    return await call(diffs.get_diff, env, actor, diff_id)


class ReviewBody(Body):
    decision: Literal["accept", "deny", "ignore"]


@router.post("/diffs/{diff_id}/review", **op("review_diff"))
async def review_diff(diff_id: str, body: ReviewBody, env: EnvDep, actor: ActorDep) -> ReviewResult:
    return await call(reviews.review_diff, env, actor, diff_id, body.decision)


@router.post("/diffs/{diff_id}/approve", **op("approve_diff"))
async def approve_diff(diff_id: str, env: EnvDep, actor: ActorDep) -> ApproveResult:
    """Make the candidate the baseline it was compared with (needs the approve role)."""
    return await call(reviews.approve_diff, env, actor, diff_id)


PNG: dict[int | str, dict[str, Any]] = {
    200: {"content": {"image/png": {}}, "description": "A PNG image."}
}


@router.get("/diffs/{diff_id}/image", responses=PNG, response_class=Response, **op("render"))
async def diff_image(
    diff_id: str,
    env: EnvDep,
    actor: ActorDep,
    which: Literal["diff", "before", "after", "before_after"] = "diff",
    region: Annotated[int, Query(ge=1, description="before_after: which region (1-based).")] = 1,
    offset: Annotated[int | None, Query(ge=0)] = None,
    height: Annotated[int | None, Query(ge=1, le=20000)] = None,
) -> Response:
    """An image of the diff: the diff image, either side, or one before/after crop per region.
    offset/height page a tall image by pixels."""
    images = await call(
        renders.render_diff, env, actor, diff_id, which, offset=offset, height=height
    )
    chosen = images[min(region, len(images)) - 1]
    headers = {"X-Image-Count": str(len(images))}
    if chosen.note:
        headers["X-Image-Note"] = chosen.note
    return Response(chosen.png, media_type="image/png", headers=headers)


@router.get("/stories/{story_id}/image", responses=PNG, response_class=Response, **op("render"))
async def story_image(
    story_id: str,
    env: EnvDep,
    actor: ActorDep,
    offset: Annotated[int | None, Query(ge=0)] = None,
    height: Annotated[int | None, Query(ge=1, le=20000)] = None,
) -> Response:
    """A story's current image, unchanged stories included."""
    image = await call(renders.story_image, env, actor, story_id, offset=offset, height=height)
    return Response(image.png, media_type="image/png")


class NewComment(Body):
    body: CommentText
    anchor: Anchor | None = Field(
        None, description="Where on the image, in coordinates normalised 0 to 1."
    )
    side: Literal["after", "before"] = "after"


class CommentBody(Body):
    body: CommentText


@router.get("/diffs/{diff_id}/comments", **op("list_comments"))
async def list_comments(
    diff_id: str,
    env: EnvDep,
    actor: ActorDep,
    status: Literal["open", "resolved"] | None = None,
) -> list[ThreadRecord]:
    return await call(threads.list_comments, env, actor, diff_id, status=status)


@router.post("/diffs/{diff_id}/comments", status_code=201, **op("comment"))
async def create_comment(
    diff_id: str, body: NewComment, env: EnvDep, actor: ActorDep
) -> ThreadRecord:
    return await call(
        threads.create_comment,
        env,
        actor,
        diff_id,
        body.body,
        anchor=body.anchor.model_dump() if body.anchor else None,
        side=body.side,
    )


@router.post("/comments/{comment_id}/replies", status_code=201, **op("comment"))
async def reply(comment_id: str, body: CommentBody, env: EnvDep, actor: ActorDep) -> ThreadRecord:
    return await call(threads.reply, env, actor, comment_id, body.body)


@router.patch("/comments/{comment_id}", **op("comment"))
async def update_comment(
    comment_id: str, body: CommentBody, env: EnvDep, actor: ActorDep
) -> ThreadRecord:
    return await call(threads.update_comment, env, actor, comment_id, body.body)


@router.post("/comments/{comment_id}/resolve", **op("resolve_comment"))
async def resolve_comment(comment_id: str, env: EnvDep, actor: ActorDep) -> ThreadRecord:
    return await call(threads.resolve_comment, env, actor, comment_id)


@router.delete("/comments/{comment_id}", **op("delete_comment"))
async def delete_comment(comment_id: str, env: EnvDep, actor: ActorDep) -> ThreadRecord:
    return await call(threads.delete_comment, env, actor, comment_id)
