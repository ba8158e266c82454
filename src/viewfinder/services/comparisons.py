"""Comparisons: two stored images in; the engine's counts, regions and analysis out, with the
diff image kept as a blob. A comparison knows nothing of builds or baselines. It belongs to what
asked for it, its owner (a build's story, a push, a replay screenshot, or a caller comparing
two images directly), and each kind of owner registers how a finished comparison settles it.

Identical bytes are settled at once; everything else is computed by a worker ("compare" job),
which stores the result, marks its job done and settles the owner in one transaction."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder import imaging
from viewfinder.errors import InvalidInput, ViewfinderError
from viewfinder.ids import new_id
from viewfinder.imaging import Limits, Mask
from viewfinder.imaging.compare import check_unit
from viewfinder.imaging.masks import MaskLike, parse_masks
from viewfinder.jobs import queue as jobs
from viewfinder.jobs import registry
from viewfinder.services import permissions, scoping, storage, vision
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    MaskRecord,
    Record,
    RegionRecord,
    Verdict,
)
from viewfinder.services.shortreads import short_read
from viewfinder.services.urls import file_url
from viewfinder.services.waiting import Wait
from viewfinder.store.models import Comparison, Image, Project, utcnow


class ChangeRecord(Record):
    """One changed region as the analysis sees it, on the compared canvas."""

    x: int
    y: int
    width: int
    height: int
    kind: Literal["noise", "move", "color", "content", "size"]
    changed_pixels: int
    dx: int | None = Field(None, description="For a move: how far it moved right (px).")
    dy: int | None = Field(None, description="For a move: how far it moved down (px).")
    note: str | None = Field(
        None, description="inserted at the top, new content, vanished, pushed out of view..."
    )


class AnalysisRecord(Record):
    """What changed, in words and numbers: offline, perhaps refined by a vision model."""

    kind: Literal["identical", "noise", "layout_shift", "color", "content", "size"]
    noise: bool = Field(description="Every difference is rendering noise.")
    verdict: Verdict | None
    confidence: float = Field(ge=0, le=1)
    summary: str
    reasoning: str
    changes: list[ChangeRecord]
    source: Literal["offline", "vision"] = Field(
        "offline", description="vision: a vision model refined the verdict."
    )


class ComparisonResult(Record):
    """What the engine found, as every record of a comparison shows it."""

    state: Literal["requested", "done", "failed"]
    changed: bool | None
    identical: bool | None
    diff_ratio: float | None
    changed_pixels: int | None
    compared_pixels: int | None
    width: int | None
    height: int | None
    regions: list[RegionRecord]
    masks: list[MaskRecord]
    max_diff_ratio: float
    threshold: float
    failure_reason: str | None
    analysis: AnalysisRecord | None = Field(
        None, description="What changed; null until compared pixel by pixel, or when bytes matched."
    )
    requested_at: datetime
    completed_at: datetime | None


class ComparisonUrls(Record):
    """Signed, expiring links to the images (null when there is no such image)."""

    base: str | None = None
    candidate: str | None = None
    diff: str | None = None


class ComparisonRecord(ComparisonResult):
    """Two stored images compared, with no build or baseline involved."""

    id: str
    base_image_id: str | None
    image_id: str
    owner_kind: str = Field(description="What asked for it: images (directly), story, push ...")
    outcome: Literal["changed", "unchanged", "failed", "registered"] | None
    urls: ComparisonUrls


COMPARE_JOB = "compare"
DIRECT = "images"  # the owner kind of a comparison asked for directly, which settles nothing

# How a finished comparison settles its owner, by owner kind; runs in the result's transaction.
Settle = Callable[[Session, Comparison], None]


def _nothing(_s: Session, _row: Comparison) -> None:
    return None


@dataclass(frozen=True)
class Owner:
    """``settle`` carries the result into the owner's rows once the comparison's row is
    written. ``conclude`` may still set fields of the comparison's own row from what it reads
    (a decision it inherits): it runs before that row is written, so the row is written once."""

    settle: Settle
    conclude: Settle = _nothing


_OWNERS: dict[str, Owner] = {}


def register_owner(kind: str, settle: Settle, *, conclude: Settle = _nothing) -> None:
    """Declare a kind of owner and what settles it once its comparison is done or failed."""
    _OWNERS[kind] = Owner(settle, conclude)


register_owner(DIRECT, _nothing)


def new_row(
    actor: Actor,
    candidate: Image,
    *,
    owner_kind: str,
    owner_id: str,
    masks: tuple[Mask, ...] = (),
    max_diff_ratio: float = 0.0,
    threshold: float = 0.1,
) -> Comparison:
    """A comparison row of the candidate, not yet added to a session: its owner fills in what it
    keeps about it, then passes it to ``request`` (or ``settle_unpaired``)."""
    if owner_kind not in _OWNERS:
        raise ValueError(f"no owner kind {owner_kind!r} is registered")
    return Comparison(
        id=new_id("dif"),
        project_id=actor.project_id,
        image_id=candidate.id,
        owner_kind=owner_kind,
        owner_id=owner_id,
        name=candidate.name,
        variant=candidate.variant,
        masks=[{"x": m.x, "y": m.y, "width": m.width, "height": m.height} for m in masks],
        max_diff_ratio=max_diff_ratio,
        threshold=threshold,
        requested_at=utcnow(),
    )


def request(
    s: Session, row: Comparison, candidate: Image, base_image_id: str, base_sha: str
) -> None:
    """Compare the candidate with the base image: byte-identical files are settled at once, the
    rest is queued for a worker in the caller's transaction."""
    row.base_image_id = base_image_id
    s.add(row)
    if base_sha == candidate.sha256:
        # Most screenshots are byte for byte what they are compared with: no job, no decode.
        _finish(row, changed=False, identical=True)
        row.diff_ratio = 0.0
        row.changed_pixels = 0
        row.width, row.height = candidate.width, candidate.height
        row.compared_pixels = (candidate.width or 0) * (candidate.height or 0)
        return
    s.flush()
    jobs.enqueue(s, COMPARE_JOB, row.id)


def fail_at_once(s: Session, row: Comparison, reason: str) -> None:
    """A comparison that cannot be made, said by whoever asked for it (the screenshot itself
    could not be taken): failed with the reason, no job, no baseline."""
    s.add(row)
    row.state = "failed"
    row.failure_reason = reason
    row.completed_at = max(utcnow(), row.requested_at or utcnow())


def settle_unpaired(s: Session, row: Comparison) -> None:
    """A comparison with nothing to compare with (a first image): done, unchanged."""
    s.add(row)
    _finish(row, changed=False, identical=None)


def _finish(row: Comparison, *, changed: bool, identical: bool | None) -> None:
    row.state = "done"
    row.changed = changed
    row.identical = identical
    row.completed_at = max(utcnow(), row.requested_at or utcnow())


def verdict(row: Comparison) -> str | None:
    """The analysis's verdict: noise, likely_intended, likely_regression; None without one."""
    value = (row.analysis or {}).get("verdict")
    return str(value) if value else None


def outcome(row: Comparison) -> str | None:
    """failed, changed or unchanged; None while computing; registered for a first image."""
    if row.state == "failed":
        return "failed"
    if row.state != "done":
        return None
    if row.registered:
        return "registered"
    return "changed" if row.changed else "unchanged"


def run(env: Env, comparison_id: str, job_id: int | None = None) -> bool:
    """Compute a requested comparison (the "compare" job). An unreadable image fails the
    comparison with the reason; other errors propagate, and the job is retried.

    The job (when given) is marked done in the same transaction as the result, so no crash can
    store one without the other. Returns whether it was."""
    with env.db.read() as s:
        row = s.get(Comparison, comparison_id)
        if row is None or row.state != "requested":
            return False  # done already: a retried job has nothing left to do
        candidate = s.get(Image, row.image_id)
        base = s.get(Image, row.base_image_id) if row.base_image_id else None
        assert candidate is not None and base is not None
        masks, ratio, threshold = list(row.masks), row.max_diff_ratio, row.threshold
        # The candidate's scale, else the base's: a pair is taken at one scale (or the sizes
        # differ and say so).
        scale = candidate.scale if candidate.scale is not None else base.scale
        candidate_sha, base_sha = candidate.sha256, base.sha256
        project = s.get(Project, row.project_id)
        ignore_noise = project.ignore_noise if project is not None else True
    limits = Limits(env.settings.max_image_bytes, env.settings.max_image_pixels)
    base_png, candidate_png = env.blobs.get(base_sha), env.blobs.get(candidate_sha)
    try:
        result = imaging.compare(
            base_png,
            candidate_png,
            threshold=threshold,
            masks=masks,
            max_diff_ratio=ratio,
            ignore_noise=ignore_noise,
            scale=scale,
            limits=limits,
        )
    except ViewfinderError as exc:  # unreadable or oversized image: a result, not a crash
        return _store_failure(env, comparison_id, str(exc), job_id)
    analysis = result.analysis.to_dict()
    if result.regions and vision.wanted(env.settings, analysis):
        analysis = vision.consult(
            env.settings, _largest_change(base_png, candidate_png, result), analysis
        )
    diff_sha = None
    if result.diff_png:
        diff_sha = hashlib.sha256(result.diff_png).hexdigest()
        storage.claim(env, None, [storage.Bytes(result.diff_png, diff_sha, "image/png")])
    with env.db.write() as s:
        # Lock the row first and write it once: the owner's rows are locked after it, in the
        # same order by every worker (see settle functions), so workers never deadlock.
        row = s.get(Comparison, comparison_id, with_for_update=True)
        if row is None or row.state != "requested":
            return False
        _finish(row, changed=result.changed, identical=result.identical)
        row.diff_ratio = result.diff_ratio
        row.changed_pixels = result.changed_pixels
        row.compared_pixels = result.compared_pixels
        row.width, row.height = result.width, result.height
        row.analysis = analysis
        row.regions = [
            {
                "x": r.x,
                "y": r.y,
                "width": r.width,
                "height": r.height,
                "changed_pixels": r.changed_pixels,
            }
            for r in result.regions
        ]
        row.diff_sha256 = diff_sha
        owner = _OWNERS[row.owner_kind]
        with s.no_autoflush:
            owner.conclude(s, row)
        s.flush()
        owner.settle(s, row)
        return _job_done(s, job_id)


def _largest_change(base: bytes, candidate: bytes, result: imaging.Comparison) -> bytes:
    """Before and after, side by side, around the largest changed region: what a vision model
    is shown."""
    largest = max(result.regions, key=lambda r: r.changed_pixels)
    return imaging.crop_regions(base, candidate, [largest], padding=32)[0].side_by_side_png


def _job_done(s: Session, job_id: int | None) -> bool:
    if job_id is None:
        return False
    jobs.mark_done(s, job_id)
    return True


def _store_failure(env: Env, comparison_id: str, reason: str, job_id: int | None) -> bool:
    with env.db.write() as s:
        row = s.get(Comparison, comparison_id, with_for_update=True)
        if row is None or row.state != "requested":
            return False
        row.state = "failed"
        row.failure_reason = reason
        row.completed_at = max(utcnow(), row.requested_at)
        s.flush()
        _OWNERS[row.owner_kind].settle(s, row)
        return _job_done(s, job_id)


def give_up(env: Env, comparison_id: str, reason: str) -> None:
    """Fail a comparison whose job will not be tried again."""
    _store_failure(env, comparison_id, reason, None)


registry.register(
    registry.Kind(COMPARE_JOB, run=run, give_up=give_up, time_limit=120.0, final=(MemoryError,))
)


# ---- comparing two stored images directly ---------------------------------------------------


def get_row(s: Session, actor: Actor, comparison_id: str) -> Comparison:
    return scoping.owned(s, Comparison, comparison_id, actor, "comparison")


def _image(s: Session, actor: Actor, image_id: str, what: str) -> Image:
    image = scoping.owned(s, Image, image_id, actor, "image")
    if image.media_type != "image/png":
        raise InvalidInput(f"image {image_id} is {image.media_type}; only PNGs are compared")
    return image


def compare_images(
    env: Env,
    actor: Actor,
    base_image_id: str,
    image_id: str,
    *,
    masks: tuple[MaskLike, ...] = (),
    max_diff_ratio: float = 0.0,
    threshold: float = 0.1,
) -> ComparisonRecord:
    """Compare two stored images of the project, with no build and no baseline involved.
    Raises NotFound, InvalidInput, Forbidden."""
    permissions.require(actor, "compare_images")
    mask_list = parse_masks(masks)
    ratio = check_unit("max_diff_ratio", max_diff_ratio)
    limit = check_unit("threshold", threshold)
    with env.db.write() as s:
        base = _image(s, actor, base_image_id, "the base")
        candidate = _image(s, actor, image_id, "the candidate")
        row = new_row(
            actor,
            candidate,
            owner_kind=DIRECT,
            owner_id=candidate.id,
            masks=mask_list,
            max_diff_ratio=ratio,
            threshold=limit,
        )
        request(s, row, candidate, base.id, base.sha256)
        s.flush()
        return comparison_record(env, s, row)


@short_read
def get_comparison(env: Env, actor: Actor, comparison_id: str) -> ComparisonRecord:
    with env.db.read() as s:
        return comparison_record(env, s, get_row(s, actor, comparison_id))


class HasState(Protocol):
    @property
    def state(self) -> str: ...


def waiting(
    env: Env, actor: Actor, comparison_id: str, *, timeout: float
) -> Wait[ComparisonRecord]:
    """A wait for the comparison to be computed (see services.waiting)."""
    return Wait(lambda: get_comparison(env, actor, comparison_id), computed, timeout)


def computed(record: HasState) -> bool:
    """Whether a comparison's record is final (computed, or failed)."""
    return record.state != "requested"


def result_fields(row: Comparison) -> dict[str, object]:
    """What every record of a comparison shows of its result."""
    return {
        "state": row.state,
        "changed": row.changed,
        "identical": row.identical,
        "diff_ratio": row.diff_ratio,
        "changed_pixels": row.changed_pixels,
        "compared_pixels": row.compared_pixels,
        "width": row.width,
        "height": row.height,
        "regions": [RegionRecord(**r) for r in row.regions],
        "masks": [MaskRecord(**m) for m in row.masks],
        "max_diff_ratio": row.max_diff_ratio,
        "threshold": row.threshold,
        "failure_reason": row.failure_reason,
        "analysis": AnalysisRecord.model_validate(row.analysis) if row.analysis else None,
        "requested_at": row.requested_at,
        "completed_at": row.completed_at,
    }


def image_shas(s: Session, row: Comparison) -> tuple[str | None, str | None]:
    """The sha256 of the base and of the candidate image."""
    ids = [i for i in (row.base_image_id, row.image_id) if i]
    shas = dict(s.execute(select(Image.id, Image.sha256).where(Image.id.in_(ids))).all())
    return shas.get(row.base_image_id or ""), shas.get(row.image_id)


def comparison_record(env: Env, s: Session, row: Comparison) -> ComparisonRecord:
    base_sha, candidate_sha = image_shas(s, row)
    return ComparisonRecord(
        id=row.id,
        base_image_id=row.base_image_id,
        image_id=row.image_id,
        owner_kind=row.owner_kind,
        outcome=outcome(row),
        **result_fields(row),
        urls=ComparisonUrls(
            base=file_url(env, base_sha) if base_sha else None,
            candidate=file_url(env, candidate_sha) if candidate_sha else None,
            diff=file_url(env, row.diff_sha256) if row.diff_sha256 else None,
        ),
    )
