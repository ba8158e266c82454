from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Request
from pydantic import ConfigDict

from viewfinder.api.deps import PNG_BODY, ActorDep, EnvDep, op, read_body, read_form
from viewfinder.api.fields import (
    NAME,
    REPO,
    SCALE,
    VIEWPORT,
    Branch,
    BranchQuery,
    CommitSha,
    PrNumber,
    PrQuery,
    Repo,
    line,
    text,
)
from viewfinder.errors import InvalidInput
from viewfinder.imaging.analysis.reach import MAX_SCALE, MIN_SCALE
from viewfinder.plumbing.bodies import Body
from viewfinder.plumbing.offloop import call
from viewfinder.services import builds, reviews
from viewfinder.services.builds.records import BuildDetail, BuildRecord, StoryList, StoryRecord
from viewfinder.services.records import Page
from viewfinder.services.reviews import AcceptBuildResult

router = APIRouter(tags=["builds"])


class NewBuild(Body):
    commit_sha: CommitSha
    branch: Branch = None
    repo: Repo = None
    pr_number: PrNumber = None

    model_config = ConfigDict(json_schema_extra={"dependentRequired": {"pr_number": ["repo"]}})


@router.post("/builds", status_code=201, **op("create_build"))
async def create_build(
    body: NewBuild,
    env: EnvDep,
    actor: ActorDep,
    idempotency_key: Annotated[
        str | None,
        Header(
            description="Any unique string: sending the same request again with it (after a "
            "lost answer) returns the build it opened instead of opening a second one.",
            json_schema_extra=line(100),
        ),
    ] = None,
) -> BuildRecord:
    """Open a build; upload its stories, then finalize it."""
    return await call(
        builds.create_build, env, actor, **body.model_dump(), idempotency_key=idempotency_key
    )


@router.get("/builds", **op("list_builds"))
async def list_builds(
    env: EnvDep,
    actor: ActorDep,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
    cursor: str | None = None,
    branch: BranchQuery = None,
    pr_number: PrQuery = None,
    status: Literal["uploading", "comparing", "done", "expired"] | None = None,
    verdict: Literal["pending", "unchanged", "changed", "failed"] | None = None,
) -> Page[BuildRecord]:
    """Builds, newest first (20 per page by default, at most 100), optionally of one branch,
    PR number, status or verdict."""
    return await call(
        builds.list_builds,
        env,
        actor,
        limit=limit,
        cursor=cursor,
        branch=branch,
        pr_number=pr_number,
        status=status,
        verdict=verdict,
    )


@router.get("/build", **op("get_build"))
async def find_build(
    env: EnvDep,
    actor: ActorDep,
    build_id: str | None = None,
    commit_sha: str | None = None,
    pr_number: int | None = None,
    repo: Annotated[
        str | None,
        Query(
            description="owner/name, with pr_number when that number is in several repos.",
            json_schema_extra=REPO,
        ),
    ] = None,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
) -> BuildDetail:
    """A build selected by exactly one of build_id, commit_sha and pr_number."""
    return await call(
        builds.get_build,
        env,
        actor,
        build_id=build_id,
        commit_sha=commit_sha,
        pr_number=pr_number,
        repo=repo,
        limit=limit,
    )


@router.get("/builds/{build_id}", **op("get_build"))
async def get_build(
    build_id: str,
    env: EnvDep,
    actor: ActorDep,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
) -> BuildDetail:
    return await call(builds.get_build, env, actor, build_id=build_id, limit=limit)


@router.put("/builds/{build_id}/stories", status_code=201, **op("add_stories", PNG_BODY))
async def upload_story(
    build_id: str,
    request: Request,
    env: EnvDep,
    actor: ActorDep,
    name: Annotated[
        str,
        Query(description="The story's name, e.g. checkout/empty-cart.", json_schema_extra=NAME),
    ],
    variant: Annotated[
        str | None, Query(description="Viewport WIDTHxHEIGHT.", json_schema_extra=VIEWPORT)
    ] = None,
    failure: Annotated[
        str | None,
        Query(
            description="The screenshot could not be taken, and this says why: the body is a "
            "placeholder image, and the story is failed with this reason instead of compared.",
            json_schema_extra=text(builds.FAILURE_MAX),
        ),
    ] = None,
    scale: Annotated[float | None, Query(description=SCALE, ge=MIN_SCALE, le=MAX_SCALE)] = None,
) -> StoryRecord:
    """Upload one story's PNG (the request body) and request its comparison."""
    data = await read_body(request, env.settings.max_image_bytes)
    return await call(
        builds.add_story,
        env,
        actor,
        build_id,
        name=name,
        variant=variant,
        data=data,
        failure=failure,
        scale=scale,
    )


BATCH_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": builds.MAX_BATCH,
                            "items": {"type": "string", "format": "binary"},
                            "description": "PNG files; each part's filename is the story name.",
                        },
                        "variant": {
                            "type": "string",
                            "description": "Viewport WIDTHxHEIGHT.",
                            **VIEWPORT,
                        },
                        "scale": {
                            "type": "number",
                            "minimum": MIN_SCALE,
                            "maximum": MAX_SCALE,
                            "description": SCALE,
                        },
                    },
                }
            }
        },
    }
}


@router.post(
    "/builds/{build_id}/stories",
    status_code=201,
    **op("add_stories", BATCH_BODY),
)
async def upload_stories(
    build_id: str, request: Request, env: EnvDep, actor: ActorDep
) -> list[StoryRecord]:
    """Upload up to 200 stories in one request (multipart, one `file` part per story, named by
    its filename): all are stored or none. Much faster than one request per story."""
    form = await read_form(
        request, max_files=builds.MAX_BATCH, max_part=env.settings.max_image_bytes
    )
    try:
        variant = form.get("variant")
        scale = _form_scale(form.get("scale"))
        uploads = []
        for part in form.getlist("file"):
            if isinstance(part, str) or not part.filename:
                raise InvalidInput("each `file` part needs a filename: the story's name")
            uploads.append(
                builds.StoryUpload(
                    part.filename,
                    variant if isinstance(variant, str) else None,
                    await part.read(),
                    scale=scale,
                )
            )
    finally:
        await form.close()
    return await call(builds.add_stories, env, actor, build_id, uploads)


def _form_scale(value: object) -> float | None:
    """The form's ``scale`` field as a number (its range is checked with the upload)."""
    if value is None or value == "":
        return None
    try:
        return float(str(value))
    except ValueError:
        raise InvalidInput(
            f"scale {value!r} is not a number: give the device scale, such as 2 or 3"
        ) from None


@router.post("/builds/{build_id}/finalize", **op("finalize_build"))
async def finalize_build(build_id: str, env: EnvDep, actor: ActorDep) -> BuildRecord:
    """No more uploads: baselines without a story are reported removed."""
    return await call(builds.finalize_build, env, actor, build_id)


@router.get("/builds/{build_id}/stories", **op("list_build_stories"))
async def list_build_stories(
    build_id: str,
    env: EnvDep,
    actor: ActorDep,
    state: Literal["changed", "new", "removed", "failed", "unchanged", "pending"] = "changed",
    cursor: str | None = None,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
) -> StoryList:
    return await call(
        builds.list_build_stories, env, actor, build_id, state=state, cursor=cursor, limit=limit
    )


@router.post("/builds/{build_id}/accept", **op("accept_build"))
async def accept_build(build_id: str, env: EnvDep, actor: ActorDep) -> AcceptBuildResult:
    """Accept every pending change, or nothing while a story has an open comment thread."""
    return await call(reviews.accept_build, env, actor, build_id=build_id)


@router.get("/stories/{story_id}", **op("get_story"))
async def get_story(story_id: str, env: EnvDep, actor: ActorDep) -> StoryRecord:
    return await call(builds.get_story, env, actor, story_id)
