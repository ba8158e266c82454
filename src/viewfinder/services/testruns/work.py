"""What the workers do for a test run, in three kinds of job:

``replay``          one session on one deployment (runs in parallel across workers); the last
                    replay of a run queues its comparing
``replay_compare``  pairs each session's base and head screenshots by name and asks for a
                    comparison of each pair (owner kind ``replay``); what needs no comparison
                    (missing, different size, identical bytes) is settled at once
``replay_finish``   once every pair is settled: each differing head screenshot is taken again
                    (a session replayed once more) and one that differs from itself is a flake;
                    screenshots are ranked, the representative ones marked, the built-in checks
                    written, and the run completes

A failure that retrying cannot fix fails the replay (its screenshots then count as missing) or
the run, with the reason."""

from __future__ import annotations

import hashlib
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder import imaging
from viewfinder.capture.camera import CONCURRENT
from viewfinder.errors import ViewfinderError
from viewfinder.ids import new_id
from viewfinder.imaging import Limits
from viewfinder.jobs import queue as jobs
from viewfinder.jobs import registry
from viewfinder.replay import ReplayResult, replay
from viewfinder.replay.diffs import dom_diff
from viewfinder.services import comparisons, diffs, images, storage
from viewfinder.services.env import Actor, Env
from viewfinder.services.testruns import checks, sources
from viewfinder.services.testruns.runs import COMPARE_JOB, FINISH_JOB, REPLAY_JOB
from viewfinder.store.models import Comparison, Image, Project, utcnow
from viewfinder.store.replay_models import (
    Replay,
    ReplayDiff,
    ReplayRun,
    ReplayScreenshot,
    ScreenshotDiff,
)

log = logging.getLogger("viewfinder.testruns")
OWNER = diffs.REPLAYED
REPLAY_SECONDS = 300.0
# Retakes at once: as many as the camera plays side by side.
RETAKES_AT_ONCE = CONCURRENT
ORDER = {"diff": 0, "different-size": 1, "missing-head": 2, "missing-base": 3, "flake": 4}
# What the representative subset shows: differences, and what could not be compared at all.
SHOWN = ("diff", "different-size", "missing-head", "missing-base")
VERDICT = {"likely_regression": 0, "likely_intended": 1, "noise": 2}


def run_actor(run: ReplayRun | Replay, key_id: str = "system") -> Actor:
    """The run acting on its own project (what its worker reads sessions and deployments as)."""
    return Actor(run.project_id, key_id, "test run", frozenset({"admin"}))


# ---- replay ---------------------------------------------------------------------------------


def play(
    env: Env, actor: Actor, session_id: str, deployment_id: str, stop_after: float | None = None
) -> ReplayResult:
    src = sources.current()
    recording = src.recording(env, actor, session_id)
    with src.open(env, deployment_id) as base_url:
        return replay(
            recording,
            base_url,
            chromium=env.settings.chromium,
            seconds=REPLAY_SECONDS,
            stop_after=stop_after,
        )


def run_replay(env: Env, replay_id: str, job_id: int | None = None) -> bool:
    with env.db.read() as s:
        row = s.get(Replay, replay_id)
        if row is None or row.state != "pending":
            return False
        actor = run_actor(row)
        run = s.get(ReplayRun, row.test_run_id)
        # What is left of the run's maxDurationSeconds: the replay stops there, keeping what
        # it took (a replay of a long session could otherwise outlive the run's limit).
        limit = left = None
        if run is not None and run.max_duration is not None:
            limit = run.max_duration
            left = limit - (utcnow() - run.created_at).total_seconds()
        session_id, deployment_id, project_id = row.session_id, row.deployment_id, row.project_id
    if left is not None and left <= 0:
        return _fail_replay(
            env, replay_id, "not replayed: the run's maxDurationSeconds had passed", job_id
        )
    started = time.monotonic()
    try:
        result = play(env, actor, session_id, deployment_id, stop_after=left)
    except ViewfinderError as exc:  # the deployment or the browser failed: a result
        return _fail_replay(env, replay_id, exc.message, job_id)
    files = [
        storage.Bytes(shot.png, hashlib.sha256(shot.png).hexdigest(), "image/png")
        for shot in result.shots
    ]
    storage.claim(env, project_id, files)
    with env.db.write() as s:
        row = s.get(Replay, replay_id, with_for_update=True)
        if row is None or row.state != "pending":
            return False
        checked = [
            (
                images.CheckedFile(f.data, f.sha256, f.media_type, shot.width, shot.height),
                images.NewImage(name=f"{session_id}/{shot.name}", variant="", source="replay"),
            )
            for f, shot in zip(files, result.shots, strict=True)
        ]
        rows = images.insert_images(s, actor, checked)
        for position, (shot, image) in enumerate(zip(result.shots, rows, strict=True)):
            s.add(
                ReplayScreenshot(
                    id=new_id("rsh"),
                    replay_id=replay_id,
                    name=shot.name,
                    position=position,
                    image_id=image.id,
                    time_ms=shot.time_ms,
                    dom=shot.dom,
                    coverage=[f.to_json() for f in shot.coverage],
                )
            )
        row.state = "done"
        if result.stopped_after is not None:
            row.state = "stopped"
            row.reason = (
                f"stopped after {result.stopped_after} events: the run's maxDurationSeconds "
                f"({limit or 0:g} s) passed; the screenshots taken before are kept"
            )
        row.timeline = [e.to_json() for e in result.timeline]
        row.facts = {
            "unrecorded": list(result.unrecorded),
            "failedRequests": list(result.failed_requests),
            "consoleErrors": list(result.console_errors),
            "exceptions": list(result.exceptions),
            "notes": list(result.notes),
        }
        row.coverage = [f.to_json() for f in result.coverage]
        row.steps = result.steps
        row.seconds = round(time.monotonic() - started, 3)
        row.completed_at = utcnow()
        s.flush()
        _advance(s, row.test_run_id)
        return _done(s, job_id)


def _fail_replay(env: Env, replay_id: str, reason: str, job_id: int | None) -> bool:
    with env.db.write() as s:
        row = s.get(Replay, replay_id, with_for_update=True)
        if row is None or row.state != "pending":
            return False
        row.state = "failed"
        row.reason = reason
        row.completed_at = utcnow()
        s.flush()
        _advance(s, row.test_run_id)
        return _done(s, job_id)


def _advance(s: Session, run_id: str) -> None:
    """Queue the comparing once no replay of the run is pending (the run row is locked, so
    of two replays finishing together exactly one queues it)."""
    run = s.get(ReplayRun, run_id, with_for_update=True)
    if run is None or run.phase != "replaying":
        return
    pending = s.scalar(
        select(Replay.id).where(Replay.test_run_id == run_id, Replay.state == "pending").limit(1)
    )
    if pending is None:
        run.phase = "comparing"
        jobs.enqueue(s, COMPARE_JOB, run_id)


def _done(s: Session, job_id: int | None) -> bool:
    if job_id is None:
        return False
    jobs.mark_done(s, job_id)
    return True


def give_up_replay(env: Env, replay_id: str, reason: str) -> None:
    _fail_replay(env, replay_id, reason, None)


# ---- compare --------------------------------------------------------------------------------


def _shots(s: Session, replay_id: str | None) -> dict[str, ReplayScreenshot]:
    if replay_id is None:
        return {}
    return {
        r.name: r
        for r in s.scalars(
            select(ReplayScreenshot)
            .where(ReplayScreenshot.replay_id == replay_id)
            .order_by(ReplayScreenshot.position)
        )
    }


def dom_key(base: str, head: str) -> tuple[int, str | None]:
    """How many independent DOM changes there are, and a key naming them (the same change on
    several screenshots has the same key)."""
    text = dom_diff(base, head, 0)
    if not text:
        return 0, None
    body = "\n".join(line for line in text.splitlines() if not line.startswith(("[diff ", "@@")))
    return text.count("[diff "), hashlib.sha256(body.encode()).hexdigest()


def run_compare(env: Env, run_id: str, job_id: int | None = None) -> bool:
    with env.db.write() as s:
        run = s.get(ReplayRun, run_id, with_for_update=True)
        if run is None or run.phase != "comparing":
            return False
        if run.kind == "base":
            _complete(s, run)
            return _done(s, job_id)
        actor = run_actor(run, run.created_by)
        for diff in s.scalars(select(ReplayDiff).where(ReplayDiff.test_run_id == run_id)):
            _pair(s, actor, run, diff)
        run.phase = "settling"
        s.flush()
        _maybe_finish(s, run)
        return _done(s, job_id)


def _pair(s: Session, actor: Actor, run: ReplayRun, diff: ReplayDiff) -> None:
    base_replay = s.get(Replay, diff.base_replay_id) if diff.base_replay_id else None
    kept = base_replay is not None and base_replay.state in ("done", "stopped")
    base = _shots(s, diff.base_replay_id if kept else None)
    head = _shots(s, diff.head_replay_id)
    names = list(head) + [n for n in base if n not in head]
    for position, name in enumerate(names):
        b, h = base.get(name), head.get(name)
        row = ScreenshotDiff(
            id=new_id("rsd"),
            project_id=run.project_id,
            test_run_id=run.id,
            replay_diff_id=diff.id,
            name=name,
            position=position,
            base_shot_id=b.id if b else None,
            head_shot_id=h.id if h else None,
        )
        s.add(row)
        if b is None or h is None:
            row.outcome = "missing-base" if b is None else "missing-head"
            continue
        row.dom_changes, row.dom_key = dom_key(b.dom, h.dom)
        base_image, head_image = s.get(Image, b.image_id), s.get(Image, h.image_id)
        assert base_image is not None and head_image is not None
        if (base_image.width, base_image.height) != (head_image.width, head_image.height):
            row.outcome = "different-size"
            continue
        comparison = comparisons.new_row(actor, head_image, owner_kind=OWNER, owner_id=row.id)
        comparison.name = f"{diff.session_id}/{name}"
        s.flush()
        comparisons.request(s, comparison, head_image, base_image.id, base_image.sha256)
        row.comparison_id = comparison.id
        if comparison.state == "done":  # identical bytes: settled without a job
            row.outcome = "no-diff"
            row.mismatch = 0.0


def settle(s: Session, comparison: Comparison) -> None:
    """A screenshot pair was compared: its outcome, then the run's finishing when it was the
    last one."""
    row = s.scalar(select(ScreenshotDiff).where(ScreenshotDiff.comparison_id == comparison.id))
    if row is None:
        return
    run = s.get(ReplayRun, row.test_run_id, with_for_update=True)
    row.outcome = "diff" if comparison.state == "failed" or comparison.changed else "no-diff"
    row.mismatch = comparison.diff_ratio
    s.flush()
    if run is not None:
        _maybe_finish(s, run)


def _maybe_finish(s: Session, run: ReplayRun) -> None:
    if run.phase != "settling":
        return
    open_one = s.scalar(
        select(ScreenshotDiff.id)
        .where(ScreenshotDiff.test_run_id == run.id, ScreenshotDiff.outcome.is_(None))
        .limit(1)
    )
    if open_one is None:
        run.phase = "finishing"
        jobs.enqueue(s, FINISH_JOB, run.id)


comparisons.register_owner(OWNER, settle)


# ---- finish ---------------------------------------------------------------------------------


def run_finish(env: Env, run_id: str, job_id: int | None = None) -> bool:
    with env.db.read() as s:
        run = s.get(ReplayRun, run_id)
        if run is None or run.phase != "finishing":
            return False
        actor = run_actor(run, run.created_by)
        project = s.get(Project, run.project_id)
        ignore_noise = project.ignore_noise if project is not None else True
        differing: dict[str, list[tuple[str, str, str]]] = {}  # session -> (row, name, sha)
        for row, diff in s.execute(
            select(ScreenshotDiff, ReplayDiff)
            .join(ReplayDiff, ReplayDiff.id == ScreenshotDiff.replay_diff_id)
            .where(ScreenshotDiff.test_run_id == run_id, ScreenshotDiff.outcome == "diff")
        ).all():
            head = s.get(ReplayScreenshot, row.head_shot_id) if row.head_shot_id else None
            image = s.get(Image, head.image_id) if head else None
            if image is not None:
                differing.setdefault(diff.session_id, []).append((row.id, row.name, image.sha256))
        deployment_id = run.deployment_id
    flakes = _retake(env, actor, deployment_id, differing, ignore_noise)
    with env.db.write() as s:
        run = s.get(ReplayRun, run_id, with_for_update=True)
        if run is None or run.phase != "finishing":
            return False
        for row_id, retake_id in flakes.items():
            flaky = s.get(ScreenshotDiff, row_id)
            if flaky is not None:
                flaky.outcome = "flake"
                flaky.retake_image_id = retake_id
        _rank(s, run)
        checks.write_builtin(s, run)
        _complete(s, run)
        return _done(s, job_id)


def _retake(
    env: Env,
    actor: Actor,
    deployment_id: str,
    differing: dict[str, list[tuple[str, str, str]]],
    ignore_noise: bool,
) -> dict[str, str]:
    """Replay each session with a differing screenshot once more on the head deployment;
    the rows whose screenshot then differs from the first head one, with the retake's image.
    The camera plays RETAKES_AT_ONCE replays side by side, so they are asked for from as many
    threads; each is compared as it comes back, in order."""
    limits = Limits(env.settings.max_image_bytes, env.settings.max_image_pixels)
    flakes: dict[str, str] = {}

    def take(session_id: str) -> ReplayResult | None:
        try:
            return play(env, actor, session_id, deployment_id)
        except ViewfinderError as exc:
            log.warning("could not take session %s again: %s", session_id, exc.message)
            return None

    with ThreadPoolExecutor(RETAKES_AT_ONCE, thread_name_prefix="retake") as pool:
        taken = zip(differing.items(), pool.map(take, differing), strict=True)
        for (session_id, rows), again in taken:
            if again is not None:
                flakes.update(_flaky(env, actor, session_id, rows, again, ignore_noise, limits))
    return flakes


def _flaky(
    env: Env,
    actor: Actor,
    session_id: str,
    rows: list[tuple[str, str, str]],
    again: ReplayResult,
    ignore_noise: bool,
    limits: Limits,
) -> dict[str, str]:
    """The rows of one session whose retaken screenshot differs from the first, with the
    retake's stored image."""
    flakes: dict[str, str] = {}
    for row_id, name, first_sha in rows:
        shot = again.shot(name)
        if shot is None or hashlib.sha256(shot.png).hexdigest() == first_sha:
            continue
        first = env.blobs.get(first_sha)
        result = imaging.compare(
            first, shot.png, ignore_noise=ignore_noise, diff_image=False, limits=limits
        )
        if not result.changed:
            continue
        sha = hashlib.sha256(shot.png).hexdigest()
        storage.claim(env, actor.project_id, [storage.Bytes(shot.png, sha, "image/png")])
        with env.db.write() as s:
            [image] = images.insert_images(
                s,
                actor,
                [
                    (
                        images.CheckedFile(shot.png, sha, "image/png", shot.width, shot.height),
                        images.NewImage(
                            name=f"{session_id}/{name}", variant="retake", source="replay"
                        ),
                    )
                ],
            )
            flakes[row_id] = image.id
    return flakes


def _rank(s: Session, run: ReplayRun) -> None:
    """Order a run's screenshots (likely regressions first) and mark one representative per
    distinct DOM change among those that differ."""
    rows = list(s.scalars(select(ScreenshotDiff).where(ScreenshotDiff.test_run_id == run.id)))
    verdicts: dict[str, int] = {}
    for row in rows:
        if row.comparison_id:
            comparison = s.get(Comparison, row.comparison_id)
            verdict = comparisons.verdict(comparison) if comparison else None
            verdicts[row.id] = VERDICT.get(verdict or "", 3)
    rows.sort(
        key=lambda r: (
            ORDER.get(r.outcome or "", 9),
            verdicts.get(r.id, 3),
            -(r.mismatch or 0.0),
            r.replay_diff_id,
            r.position,
        )
    )
    seen: set[str] = set()
    for rank, row in enumerate(rows):
        row.rank = rank
        # Differences the DOM does not show (pixels only) stand for one change per session.
        key = row.dom_key or f"pixels:{row.replay_diff_id}"
        row.representative = row.outcome in SHOWN and key not in seen
        if row.representative:
            seen.add(key)


def _complete(s: Session, run: ReplayRun) -> None:
    run.state = "complete"
    run.phase = "complete"
    run.completed_at = utcnow()


def fail_run(env: Env, run_id: str, reason: str) -> None:
    with env.db.write() as s:
        run = s.get(ReplayRun, run_id, with_for_update=True)
        if run is None or run.state != "processing":
            return
        run.state = "failed"
        run.phase = "failed"
        run.reason = reason
        run.completed_at = utcnow()


registry.register(
    registry.Kind(REPLAY_JOB, run=run_replay, give_up=give_up_replay, time_limit=600.0)
)
registry.register(registry.Kind(COMPARE_JOB, run=run_compare, give_up=fail_run, time_limit=300.0))
registry.register(registry.Kind(FINISH_JOB, run=run_finish, give_up=fail_run, time_limit=1800.0))
