"""Comparing two stored images directly, with no build and no baseline involved."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import Field

from viewfinder.api.deps import ActorDep, EnvDep, op
from viewfinder.imaging.masks import MAX_COORD, MAX_MASKS
from viewfinder.plumbing.bodies import Body, JsonInt
from viewfinder.plumbing.offloop import call, wait_for
from viewfinder.services import comparisons
from viewfinder.services.comparisons import ComparisonRecord

router = APIRouter(tags=["comparisons"])


class MaskBody(Body):
    x: JsonInt = Field(json_schema_extra={"minimum": 0, "maximum": MAX_COORD})
    y: JsonInt = Field(json_schema_extra={"minimum": 0, "maximum": MAX_COORD})
    width: JsonInt = Field(json_schema_extra={"minimum": 1, "maximum": MAX_COORD})
    height: JsonInt = Field(json_schema_extra={"minimum": 1, "maximum": MAX_COORD})


class CompareBody(Body):
    base_image_id: str = Field(description="The image compared against (img_...).")
    image_id: str = Field(description="The candidate image (img_...).")
    masks: list[MaskBody] = Field(
        default_factory=list, max_length=MAX_MASKS, description="Rectangles left out, in pixels."
    )
    max_diff_ratio: float = Field(0.0, ge=0, le=1)
    threshold: float = Field(0.1, ge=0, le=1)


@router.post("/comparisons", status_code=201, **op("compare_images"))
async def compare_images(
    body: CompareBody,
    env: EnvDep,
    actor: ActorDep,
    wait: Annotated[float, Query(ge=0, le=30, description="Seconds to wait for the result.")] = 0,
) -> ComparisonRecord:
    """Compare two images of the project; identical bytes answer at once, the rest is computed
    by a worker (pass ``wait`` to wait for it, or poll GET /comparisons/{id})."""
    record = await call(
        comparisons.compare_images,
        env,
        actor,
        body.base_image_id,
        body.image_id,
        masks=tuple(m.model_dump() for m in body.masks),
        max_diff_ratio=body.max_diff_ratio,
        threshold=body.threshold,
    )
    if wait and record.state == "requested":
        record = await wait_for(comparisons.waiting(env, actor, record.id, timeout=wait))
    return record


@router.get("/comparisons/{comparison_id}", **op("get_comparison"))
async def get_comparison(comparison_id: str, env: EnvDep, actor: ActorDep) -> ComparisonRecord:
    return await call(comparisons.get_comparison, env, actor, comparison_id)
