"""Comparisons ("diffs"): requested against the baseline current at that moment, computed by a
worker, then reviewed. The first compare of a name registers its image as the baseline."""

from __future__ import annotations

import time

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from viewfinder import imaging
from viewfinder.errors import NotFound, ViewfinderError
from viewfinder.ids import new_id
from viewfinder.imaging import Limits, Mask
from viewfinder.jobs import queue as jobs
from viewfinder.services import baselines, vision
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    AnalysisRecord,
    DiffRecord,
    MaskRecord,
    RegionRecord,
    Urls,
)
from viewfinder.services.urls import file_url
from viewfinder.store.models import (
    Baseline,
    Blob,
    Build,
    Comparison,
    Context,
    Image,
    Project,
    Story,
    Thread,
    utcnow,
)

COMPARE_JOB = "compare"
# Outcomes (and the story states named after them) a decision can be recorded on.
REVIEWABLE = ("changed", "failed")
# A story's place among its build's stories of the same state: likely regressions first.
RANKS = {"likely_regression": 0, "likely_intended": 1, "noise": 2}


def request(
    s: Session,
    actor: Actor,
    image: Image,
    *,
    context: Context | None,
    build_id: str | None = None,
    masks: tuple[Mask, ...] = (),
    max_diff_ratio: float = 0.0,
    threshold: float = 0.1,
    known: tuple[Baseline, str] | None | bool = False,
) -> Comparison:
    """Compare the image with its baseline. Without a baseline the image becomes one (done at
    once); a byte-identical baseline is settled at once too; otherwise a job is queued.
    ``known`` passes the baseline and its sha256 (or None for none) when the caller looked
    them up already, for many images at once."""
    if known is False:
        base = baselines.current(s, actor.project_id, image.name, image.variant, context)
        base_sha = s.scalar(select(Image.sha256).where(Image.id == base.image_id)) if base else None
    else:
        base, base_sha = known if isinstance(known, tuple) else (None, None)
    row = Comparison(
        id=new_id("dif"),
        project_id=actor.project_id,
        image_id=image.id,
        build_id=build_id,
        context_id=context.id if context else None,
        name=image.name,
        variant=image.variant,
        masks=[{"x": m.x, "y": m.y, "width": m.width, "height": m.height} for m in masks],
        max_diff_ratio=max_diff_ratio,
        threshold=threshold,
    )
    s.add(row)
    if base is None:
        baselines.replace(
            s,
            actor,
            name=image.name,
            variant=image.variant,
            context=context,
            image_id=image.id,
            source="registered",
            comparison_id=row.id,
            none_current=known is not False,
        )
        row.registered = True
        _finish(row, changed=False, identical=None)
        return row
    row.baseline_id = base.id
    row.baseline_image_id = base.image_id
    row.baseline_scope = base.scope
    if base_sha == image.sha256:
        # Most screenshots of a build are byte for byte their baseline: no job, no decode.
        _finish(row, changed=False, identical=True)
        row.diff_ratio = 0.0
        row.changed_pixels = 0
        row.width, row.height = image.width, image.height
        row.compared_pixels = (image.width or 0) * (image.height or 0)
        return row
    s.flush()
    jobs.enqueue(s, COMPARE_JOB, row.id)
    return row


def _finish(row: Comparison, *, changed: bool, identical: bool | None) -> None:
    row.state = "done"
    row.changed = changed
    row.identical = identical
    row.completed_at = utcnow()


def verdict(row: Comparison) -> str | None:
    """The analysis's verdict: noise, likely_intended, likely_regression; None without one."""
    value = (row.analysis or {}).get("verdict")
    return str(value) if value else None


def outcome(row: Comparison) -> str | None:
    if row.state == "failed":
        return "failed"
    if row.state != "done":
        return None
    if row.registered:
        return "registered"
    return "changed" if row.changed else "unchanged"


def story_state(row: Comparison) -> str:
    return {
        None: "pending",
        "failed": "failed",
        "registered": "new",
        "changed": "changed",
        "unchanged": "unchanged",
    }[outcome(row)]


def run(env: Env, comparison_id: str, job_id: int | None = None) -> bool:
    """Compute a requested comparison (called by a worker). An unreadable image fails the
    comparison with the reason; other errors propagate, and the job is retried.

    The job (when given) is marked done in the same transaction as the result, so no crash can
    store one without the other. Returns whether it was."""
    with env.db.read() as s:
        row = s.get(Comparison, comparison_id)
        if row is None or row.state != "requested":
            return False  # done already: a retried job has nothing left to do
        candidate = s.get(Image, row.image_id)
        base = s.get(Image, row.baseline_image_id) if row.baseline_image_id else None
        assert candidate is not None and base is not None
        masks, ratio, threshold = list(row.masks), row.max_diff_ratio, row.threshold
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
            limits=limits,
        )
    except ViewfinderError as exc:  # unreadable or oversized image: a result, not a crash
        return _store_failure(env, comparison_id, exc, job_id)
    analysis = result.analysis.to_dict()
    if result.regions and vision.wanted(env.settings, analysis):
        analysis = vision.consult(
            env.settings, _largest_change(base_png, candidate_png, result), analysis
        )
    diff_sha = env.blobs.put(result.diff_png) if result.diff_png else None
    with env.db.write() as s:
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
        if diff_sha is not None and result.diff_png is not None:
            if s.get(Blob, diff_sha) is None:
                s.add(
                    Blob(
                        sha256=diff_sha,
                        size=len(result.diff_png),
                        width=result.width,
                        height=result.height,
                    )
                )
            row.diff_sha256 = diff_sha
        settle_story(s, row)
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


def _store_failure(env: Env, comparison_id: str, exc: Exception, job_id: int | None) -> bool:
    with env.db.write() as s:
        row = s.get(Comparison, comparison_id, with_for_update=True)
        if row is None or row.state != "requested":
            return False
        row.state = "failed"
        row.failure_reason = str(exc)
        row.completed_at = utcnow()
        settle_story(s, row)
        return _job_done(s, job_id)


def fail(env: Env, comparison_id: str, reason: str) -> None:
    """Give up on a comparison whose job failed every attempt."""
    _store_failure(env, comparison_id, RuntimeError(reason), None)


def settle_story(s: Session, row: Comparison) -> None:
    """Carry a finished comparison into its story and, when it was the last, its build."""
    story = s.scalar(select(Story).where(Story.comparison_id == row.id))
    if story is None:
        return
    story.state = story_state(row)
    story.rank = RANKS.get(verdict(row) or "", 1)
    build = s.get(Build, story.build_id, with_for_update=True)  # see builds._get_build
    if build is not None and build.status == "comparing":
        pending = s.scalar(
            select(func.count()).where(Story.build_id == build.id, Story.state == "pending")
        )
        if not pending:
            build.status = "done"
            build.completed_at = utcnow()


def get_row(s: Session, actor: Actor, diff_id: str) -> Comparison:
    row = s.get(Comparison, diff_id)
    if row is None or row.project_id != actor.project_id:
        raise NotFound(f"no diff {diff_id!r} in this project")
    return row


def open_threads(s: Session, comparison_id: str) -> int:
    return int(
        s.scalar(
            select(func.count()).where(
                Thread.comparison_id == comparison_id,
                Thread.parent_id.is_(None),
                Thread.status == "open",
            )
        )
        or 0
    )


def is_stale(s: Session, row: Comparison) -> bool:
    """The baseline this diff was compared with is no longer the one a new compare would use
    (and this diff's own approval is not what replaced it)."""
    if row.registered or row.baseline_id is None or row.approved_at is not None:
        return False
    context = s.get(Context, row.context_id) if row.context_id else None
    now = baselines.current(s, row.project_id, row.name, row.variant, context)
    return now is None or now.id != row.baseline_id


def _next_step(row: Comparison, stale: bool, threads: int, closed: bool) -> str:
    result = outcome(row)
    if result is None:
        return "The comparison is still computing: ask again in a moment."
    if result == "failed":
        return f"The comparison failed ({row.failure_reason}): fix the image and push it again."
    if result == "registered":
        return "No baseline existed: this image is now the baseline. Nothing to review."
    if result == "unchanged":
        return "Nothing changed beyond max_diff_ratio. Nothing to review."
    if row.approved_at is not None:
        return "Approved: this image is the baseline now."
    if stale:
        return "The baseline changed after this comparison: push the screenshot again to compare."
    if closed:
        return "The context is closed; this diff can no longer be approved."
    if threads:
        return f"Resolve the {threads} open comment thread(s), then accept or deny."
    return (
        "Look at the diff image; accept (or approve) if the change is intended, deny it and fix "
        "the code if not."
    )


def record(env: Env, s: Session, row: Comparison) -> DiffRecord:
    stale = is_stale(s, row)
    threads = open_threads(s, row.id)
    context = s.get(Context, row.context_id) if row.context_id else None
    candidate_sha = s.scalar(select(Image.sha256).where(Image.id == row.image_id))
    baseline_sha = (
        s.scalar(select(Image.sha256).where(Image.id == row.baseline_image_id))
        if row.baseline_image_id
        else None
    )
    story_id = s.scalar(select(Story.id).where(Story.comparison_id == row.id))
    return DiffRecord(
        id=row.id,
        image_id=row.image_id,
        build_id=row.build_id,
        story_id=story_id,
        context_id=row.context_id,
        name=row.name,
        variant=row.variant,
        state=row.state,
        outcome=outcome(row),
        baseline_id=row.baseline_id,
        baseline_image_id=row.baseline_image_id,
        baseline_scope=row.baseline_scope,
        changed=row.changed,
        identical=row.identical,
        diff_ratio=row.diff_ratio,
        changed_pixels=row.changed_pixels,
        compared_pixels=row.compared_pixels,
        width=row.width,
        height=row.height,
        regions=[RegionRecord(**r) for r in row.regions],
        masks=[MaskRecord(**m) for m in row.masks],
        max_diff_ratio=row.max_diff_ratio,
        threshold=row.threshold,
        failure_reason=row.failure_reason,
        analysis=AnalysisRecord.model_validate(row.analysis) if row.analysis else None,
        stale=stale,
        decision=row.decision,
        decided_by=row.decided_by,
        decided_at=row.decided_at,
        approved_by=row.approved_by,
        approved_at=row.approved_at,
        open_threads=threads,
        requested_at=row.requested_at,
        completed_at=row.completed_at,
        urls=Urls(
            baseline=file_url(env, baseline_sha) if baseline_sha else None,
            candidate=file_url(env, candidate_sha) if candidate_sha else None,
            diff=file_url(env, row.diff_sha256) if row.diff_sha256 else None,
        ),
        next_step=_next_step(
            row, stale, threads, context is not None and context.status == "closed"
        ),
    )


def get_diff(env: Env, actor: Actor, diff_id: str) -> DiffRecord:
    with env.db.read() as s:
        return record(env, s, get_row(s, actor, diff_id))


def latest_for_image(env: Env, actor: Actor, image_id: str) -> DiffRecord | None:
    """The newest comparison of an image, or None when it was never compared."""
    from viewfinder.services.images import get_image_row

    with env.db.read() as s:
        get_image_row(s, actor, image_id)
        row = s.scalar(
            select(Comparison)
            .where(Comparison.image_id == image_id)
            .order_by(Comparison.id.desc())
            .limit(1)
        )
        return record(env, s, row) if row is not None else None


def wait_for(env: Env, actor: Actor, diff_id: str, *, timeout: float) -> DiffRecord:
    """The diff once computed, or as it stands after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        record_now = get_diff(env, actor, diff_id)
        if record_now.state != "requested" or time.monotonic() >= deadline:
            return record_now
        time.sleep(min(delay, max(deadline - time.monotonic(), 0)))
        delay = min(delay * 1.5, 0.5)
