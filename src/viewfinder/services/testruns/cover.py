"""JavaScript coverage of test runs, replays and screenshots, and base vs head coverage diffs
of a replay diff, as per-file rows keyed by ``repoFilePath`` (the script's path on the
deployment)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import NotFound
from viewfinder.replay import coverage
from viewfinder.replay.model import FileCoverage
from viewfinder.services import permissions, scoping
from viewfinder.services.env import Actor, Env
from viewfinder.services.testruns.runs import resolve_run
from viewfinder.store.replay_models import (
    Replay,
    ReplayDiff,
    ReplayRun,
    ReplayScreenshot,
)


def _files(raw: Iterable[dict[str, Any]]) -> list[FileCoverage]:
    return [FileCoverage.from_json(f) for f in raw]


def _rows(
    files: Iterable[FileCoverage],
    *,
    glob_filter: str | None,
    include_ranges: bool,
    include_percentage: bool,
    only: dict[str, list[int]] | None = None,
) -> list[dict[str, Any]]:
    kept = list(files)
    if only is not None:
        kept = [
            f
            for f in kept
            if any(
                p == f.path or p.endswith("/" + f.path) or f.path.endswith("/" + p) for p in only
            )
        ]
    return coverage.to_rows(
        kept,
        glob=glob_filter,
        include_ranges=include_ranges,
        include_percentage=include_percentage,
    )


def _run_files(s: Session, run: ReplayRun) -> tuple[FileCoverage, ...]:
    if run.kind == "head":
        ids = s.scalars(select(ReplayDiff.head_replay_id).where(ReplayDiff.test_run_id == run.id))
        replays = [s.get(Replay, i) for i in ids]
    else:
        replays = list(s.scalars(select(Replay).where(Replay.test_run_id == run.id)))
    return coverage.merge(
        f for r in replays if r is not None and r.state == "done" for f in _files(r.coverage)
    )


def get_test_run_js_coverage(
    env: Env,
    actor: Actor,
    *,
    test_run_id: str | None = None,
    commit_sha: str | None = None,
    glob_filter: str | None = None,
    pr_diff_only: bool = False,
    include_executable_ranges: bool = False,
    include_coverage_percentage: bool = True,
    test_run_ids: list[str] | None = None,
) -> dict[str, Any]:
    """Coverage of a run's head replays (or the union over ``test_run_ids``)."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        runs = [resolve_run(s, actor, test_run_id, commit_sha)]
        runs.extend(resolve_run(s, actor, other, None) for other in test_run_ids or [])
        if any(r.state == "processing" for r in runs):
            return {"status": "processing"}
        files = coverage.merge(f for r in runs for f in _run_files(s, r))
        only = runs[0].changed_lines if pr_diff_only else None
        return {
            "status": "complete",
            "testRunId": runs[0].id,
            "files": _rows(
                files,
                glob_filter=glob_filter,
                include_ranges=include_executable_ranges,
                include_percentage=include_coverage_percentage,
                only=only if pr_diff_only else None,
            ),
        }


def get_project_js_coverage(
    env: Env, actor: Actor, *, glob_filter: str | None = None, include_ranges: bool = False
) -> dict[str, Any]:
    """Coverage of the project's latest complete run."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        run = s.scalar(
            select(ReplayRun)
            .where(
                ReplayRun.project_id == actor.project_id,
                ReplayRun.kind == "head",
                ReplayRun.state == "complete",
            )
            .order_by(ReplayRun.completed_at.desc())
            .limit(1)
        )
        if run is None:
            raise NotFound("this project has no complete test run yet: trigger one first")
        files = _run_files(s, run)
        return {
            "testRunId": run.id,
            "files": _rows(
                files,
                glob_filter=glob_filter,
                include_ranges=include_ranges,
                include_percentage=True,
            ),
        }


def _replay_files(
    s: Session, replay: Replay | None, screenshot_name: str | None
) -> tuple[FileCoverage, ...]:
    if replay is None:
        return ()
    if screenshot_name is None:
        return tuple(_files(replay.coverage))
    shot = s.scalar(
        select(ReplayScreenshot).where(
            ReplayScreenshot.replay_id == replay.id, ReplayScreenshot.name == screenshot_name
        )
    )
    if shot is None:
        raise NotFound(f"replay {replay.id} has no screenshot {screenshot_name!r}")
    return tuple(_files(shot.coverage))


def get_replay_js_coverage(
    env: Env,
    actor: Actor,
    replay_id: str,
    *,
    screenshot_name: str | None = None,
    glob_filter: str | None = None,
    include_ranges: bool = False,
) -> dict[str, Any]:
    """Coverage of one replay, or of one screenshot of it (the code that ran since the
    screenshot before)."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        replay = scoping.owned(s, Replay, replay_id, actor, "replay")
        files = _replay_files(s, replay, screenshot_name)
        return {
            "replayId": replay.id,
            "files": _rows(
                files,
                glob_filter=glob_filter,
                include_ranges=include_ranges,
                include_percentage=True,
            ),
        }


def get_replay_diff_js_coverage_diff(
    env: Env,
    actor: Actor,
    replay_diff_id: str,
    *,
    screenshot_name: str | None = None,
    glob_filter: str | None = None,
) -> dict[str, Any]:
    """Base vs head coverage of a replay diff (or one screenshot), by file and function."""
    permissions.require(actor, "read_test_runs")
    import fnmatch

    with env.db.read() as s:
        diff = scoping.owned(s, ReplayDiff, replay_diff_id, actor, "replay diff")
        base = s.get(Replay, diff.base_replay_id) if diff.base_replay_id else None
        head = s.get(Replay, diff.head_replay_id)
        rows = coverage.diff(
            _replay_files(s, base, screenshot_name), _replay_files(s, head, screenshot_name)
        )
        if glob_filter:
            rows = [r for r in rows if fnmatch.fnmatch(r["repoFilePath"], glob_filter)]
        return {"replayDiffId": diff.id, "files": rows}
