"""Pushed images, contexts, baselines, PRs: the delivery side (the Miseru flow)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from viewfinder.api.deps import IMAGE_BODY, ActorDep, EnvDep, op, read_body
from viewfinder.api.fields import (
    NAME,
    REPO,
    SCALE,
    SHA,
    VIEWPORT,
    NameQuery,
    OwnerPath,
    PrPath,
    PrQuery,
    RepoNamePath,
    line,
)
from viewfinder.imaging.analysis.reach import MAX_SCALE, MIN_SCALE
from viewfinder.imaging.masks import MAX_MASKS
from viewfinder.plumbing.bodies import Body, JsonInt
from viewfinder.plumbing.offloop import call, wait_for
from viewfinder.services import baselines, contexts, diffs, images, prs, pushes
from viewfinder.services.baselines import BaselineRecord
from viewfinder.services.contexts import CloseResult, ContextRecord
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.images import ImageRecord
from viewfinder.services.prs import Changeset
from viewfinder.services.pushes import PushResult
from viewfinder.services.records import Page

router = APIRouter(tags=["delivery"])


@router.post("/images", status_code=201, **op("push", IMAGE_BODY))
async def push(
    request: Request,
    env: EnvDep,
    actor: ActorDep,
    name: Annotated[
        str,
        Query(description="Logical name, e.g. home or checkout@mobile.", json_schema_extra=NAME),
    ],
    context_key: Annotated[
        str | None, Query(description="owner/repo#N or any label.", json_schema_extra=line(300))
    ] = None,
    context_type: Literal["github_pr", "manual"] | None = None,
    context_label: Annotated[str | None, Query(json_schema_extra=line(300))] = None,
    pr_number: PrQuery = None,
    repo: Annotated[str | None, Query(json_schema_extra=REPO)] = None,
    commit_sha: Annotated[str | None, Query(json_schema_extra=SHA)] = None,
    viewport: Annotated[
        str | None, Query(description="WIDTHxHEIGHT, e.g. 1280x800.", json_schema_extra=VIEWPORT)
    ] = None,
    scale: Annotated[float | None, Query(description=SCALE, ge=MIN_SCALE, le=MAX_SCALE)] = None,
    tags: Annotated[
        list[str] | None, Query(json_schema_extra={"maxItems": 50, "items": line(100)})
    ] = None,
    compare: bool = False,
    max_diff_ratio: Annotated[float, Query(ge=0, le=1)] = 0.0,
    mask: Annotated[
        list[str] | None,
        Query(description=f"x,y,width,height in image pixels; up to {MAX_MASKS}."),
    ] = None,
    wait: Annotated[float, Query(ge=0, le=30, description="Seconds to wait for compare.")] = 30,
) -> PushResult:
    """Push one screenshot (the request body: PNG, JPEG or WebP) into a context."""
    data = await read_body(request, env.settings.push_max_bytes)
    pushed = await call(
        pushes.push,
        env,
        actor,
        data,
        name=name,
        context_key=context_key,
        context_type=context_type,
        context_label=context_label,
        pr_number=pr_number,
        repo=repo,
        commit_sha=commit_sha,
        viewport=viewport,
        scale=scale,
        tags=tags or [],
        compare=compare,
        max_diff_ratio=max_diff_ratio,
        masks=[_mask(m) for m in mask or []],
        wait_seconds=0,
    )
    return await wait_for(pushes.settling(env, actor, pushed, timeout=wait))


def _mask(text: str) -> list[int] | str:
    parts = text.split(",")
    try:
        return [int(p) for p in parts] if len(parts) == 4 else text
    except ValueError:
        return text


@router.get("/images/{image_id}", **op("get_image"))
async def get_image(image_id: str, env: EnvDep, actor: ActorDep) -> ImageRecord:
    return await call(images.get_image, env, actor, image_id)


class NoDiff(BaseModel):
    image_id: str
    state: Literal["none"] = "none"


@router.get("/images/{image_id}/diff", **op("get_diff"))
async def image_diff(image_id: str, env: EnvDep, actor: ActorDep) -> DiffRecord | NoDiff:
    """The newest comparison of a pushed image (state none when it was never compared)."""
    found = await call(diffs.latest_for_image, env, actor, image_id)
    return found if found is not None else NoDiff(image_id=image_id)


@router.post("/images/{image_id}/expire", **op("expire_image"))
async def expire_image(image_id: str, env: EnvDep, actor: ActorDep) -> ImageRecord:
    return await call(images.expire_image, env, actor, image_id)


@router.get("/contexts", **op("list_contexts"))
async def list_contexts(
    env: EnvDep, actor: ActorDep, status: Literal["open", "closed"] | None = None
) -> list[ContextRecord]:
    return await call(contexts.list_contexts, env, actor, status=status)


class CloseBody(Body):
    context_key: str | None = None
    context_type: Literal["github_pr", "manual"] | None = None
    pr_number: JsonInt | None = None
    repo: str | None = None
    reason: Literal["merged", "closed", "manual"] = Field(
        "manual", description="merged promotes the PR's baselines; closed/manual discard them."
    )


@router.post("/contexts/close", **op("close_context"))
async def close_context(body: CloseBody, env: EnvDep, actor: ActorDep) -> CloseResult:
    return await call(contexts.close_context, env, actor, **body.model_dump())


class PolicyBody(Body):
    context_key: str | None = None
    context_type: Literal["github_pr", "manual"] | None = None
    pr_number: JsonInt | None = None
    repo: str | None = None
    expire_policy: Literal["on_close", "ttl", "never"]
    ttl_seconds: JsonInt | None = Field(None, description="With ttl: seconds an image stays.")


@router.post("/contexts/policy", **op("set_policy"))
async def set_policy(body: PolicyBody, env: EnvDep, actor: ActorDep) -> ContextRecord:
    """When the context's images expire: on close (default), after a TTL, or never."""
    return await call(contexts.set_policy, env, actor, **body.model_dump())


@router.get("/baselines", **op("list_baselines"))
async def list_baselines(
    env: EnvDep,
    actor: ActorDep,
    cursor: str | None = None,
    limit: Annotated[int | None, Query(ge=1, le=200)] = None,
    name: NameQuery = None,
    history: bool = False,
) -> Page[BaselineRecord]:
    return await call(
        baselines.list_baselines,
        env,
        actor,
        cursor=cursor,
        limit=limit,
        name=name,
        history=history,
    )


@router.delete("/baselines/{baseline_id}", **op("delete_baseline"))
async def delete_baseline(baseline_id: str, env: EnvDep, actor: ActorDep) -> BaselineRecord:
    return await call(baselines.delete_baseline, env, actor, baseline_id)


@router.get("/prs/{owner}/{name}/{pr_number}/changeset", **op("get_pr_changeset"))
async def changeset(
    owner: OwnerPath,
    name: RepoNamePath,
    pr_number: PrPath,
    env: EnvDep,
    actor: ActorDep,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
) -> Changeset:
    return await call(
        prs.get_pr_changeset, env, actor, pr_number=pr_number, repo=f"{owner}/{name}", limit=limit
    )


class Markdown(BaseModel):
    markdown: str


@router.get("/prs/{owner}/{name}/{pr_number}/comment", **op("pr_comment"))
async def pr_comment(
    owner: OwnerPath, name: RepoNamePath, pr_number: PrPath, env: EnvDep, actor: ActorDep
) -> Markdown:
    """One comment body for every screenshot of the PR."""
    text = await call(prs.pr_comment, env, actor, pr_number=pr_number, repo=f"{owner}/{name}")
    return Markdown(markdown=text)
