"""Triggering a test run and reading where it stands.

A run replays the chosen sessions on the head deployment and on the base commit's deployment
and compares each screenshot pair. ``trigger_test_run`` only writes the run and queues its
work (work.py), so it returns at once; the run moves processing -> complete | failed.

Sessions are chosen by id, by the project's chosen set (the default), or, with a git diff,
as the sessions of the chosen set whose recorded coverage touches a changed line."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.ids import new_id, well_formed
from viewfinder.jobs import queue as jobs
from viewfinder.replay import ENGINE_VERSION
from viewfinder.services import contexts, permissions, scoping
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.testruns import sources
from viewfinder.store.replay_models import Replay, ReplayDiff, ReplayRun, ScreenshotDiff

REPLAY_JOB = "replay"
COMPARE_JOB = "replay_compare"
FINISH_JOB = "replay_finish"
MAX_SESSIONS = 500
SHA = re.compile(r"^[0-9a-fA-F]{4,64}$")


class TriggerResult(Record):
    testRunId: str  # noqa: N815 - the reference's field names
    status: Literal["processing", "complete", "failed"]
    sessionIds: list[str]  # noqa: N815
    baseDeploymentId: str | None = Field(  # noqa: N815
        None, description="The base commit's deployment; null when it has none."
    )
    selection: str = Field(description="ids, chosen, or coverage (selected by the git diff).")
    dryRun: bool = False  # noqa: N815


class RunRecord(Record):
    testRunId: str  # noqa: N815
    status: Literal["processing", "complete", "failed"]
    reason: str | None = None
    kind: Literal["head", "base"]
    commitSha: str  # noqa: N815
    baseSha: str | None  # noqa: N815
    deploymentId: str  # noqa: N815
    baseDeploymentId: str | None  # noqa: N815
    prNumber: int | None = None  # noqa: N815 - the pull request it tests (null: a branch's)
    sessionIds: list[str]  # noqa: N815
    createdAt: datetime  # noqa: N815
    completedAt: datetime | None  # noqa: N815


def check_sha(value: Any, what: str) -> str:
    if not isinstance(value, str) or not SHA.match(value):
        raise InvalidInput(f"{what} must be a git commit sha (4 to 64 hex digits)", field=what)
    return value.lower()


def parse_git_diff(text: Any) -> dict[str, list[int]]:
    """The lines a unified diff (``git diff`` output) adds or changes, by file (new paths,
    the new file's line numbers). Raises InvalidInput for text that has no file in it."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("gitDiffOutput must be the text of `git diff` (unified format)")
    changed: dict[str, list[int]] = {}
    path: str | None = None
    line = 0
    for raw in text.splitlines():
        if raw.startswith("+++ "):
            target = raw[4:].strip()
            path = None if target == "/dev/null" else re.sub(r"^b/", "", target)
            continue
        hunk = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
        if hunk:
            line = int(hunk.group(1))
            continue
        if path is None or raw.startswith(("---", "diff ", "index ")):
            continue
        if raw.startswith("+"):
            changed.setdefault(path, []).append(line)
            line += 1
        elif raw.startswith("-"):
            changed.setdefault(path, [])
        elif raw.startswith(" ") or raw == "":
            line += 1
    if not changed:
        raise InvalidInput(
            "gitDiffOutput names no changed file: pass the output of `git diff BASE...HEAD`"
        )
    return changed


def touches(coverage: list[dict[str, Any]], changed: dict[str, list[int]]) -> bool:
    """Whether coverage (FileCoverage dicts) covers a changed line. Paths are matched by
    their ends: a deployment serves ``assets/app.js`` built from ``web/assets/app.js``."""
    for entry in coverage:
        served = str(entry["path"])
        for path, lines in changed.items():
            if not (path.endswith("/" + served) or served.endswith("/" + path) or path == served):
                continue
            for first, last in entry["covered"]:
                if any(first <= n <= last for n in lines):
                    return True
    return False


def _latest_coverage(s: Session, actor: Actor, session_id: str) -> list[dict[str, Any]] | None:
    replay = s.scalar(
        select(Replay)
        .where(
            Replay.project_id == actor.project_id,
            Replay.session_id == session_id,
            Replay.state == "done",
        )
        .order_by(Replay.completed_at.desc())
        .limit(1)
    )
    return None if replay is None else list(replay.coverage)


def _select(
    env: Env,
    actor: Actor,
    session_ids: Any,
    changed: dict[str, list[int]] | None,
) -> tuple[list[str], str]:
    src = sources.current()
    if session_ids is not None:
        if not isinstance(session_ids, list) or not all(isinstance(i, str) for i in session_ids):
            raise InvalidInput("sessionIds must be a list of session ids", field="sessionIds")
        if not session_ids:
            raise InvalidInput(
                "sessionIds is empty: name at least one session, or leave it out to replay "
                "the project's chosen sessions",
                field="sessionIds",
            )
        if len(session_ids) > MAX_SESSIONS:
            raise InvalidInput(f"at most {MAX_SESSIONS} sessions are replayed in one run")
        for session_id in session_ids:
            src.recording(env, actor, session_id)  # NotFound names the one that is not there
        return list(dict.fromkeys(session_ids)), "ids"
    chosen = src.chosen_sessions(env, actor)[:MAX_SESSIONS]
    if changed is None:
        return chosen, "chosen"
    with env.db.read() as s:
        known = {sid: _latest_coverage(s, actor, sid) for sid in chosen}
    if all(v is None for v in known.values()):
        return chosen, "chosen"  # nothing replayed yet: no coverage to choose by
    return [sid for sid, cov in known.items() if cov is not None and touches(cov, changed)], (
        "coverage"
    )


def trigger_test_run(
    env: Env,
    actor: Actor,
    *,
    deployment_id: str | None = None,
    commit_sha: str | None = None,
    base_sha: str,
    git_diff_output: str | None = None,
    session_ids: list[str] | None = None,
    max_duration_seconds: float | None = None,
    pr_number: int | None = None,
    dry_run: bool = False,
) -> TriggerResult:
    """Start a run of the chosen sessions on a deployment against a base commit; returns at
    once. ``pr_number`` is the pull request the deployment is the head of: only its run's
    diffs can be rejected. Raises InvalidInput, NotFound, Forbidden, Unavailable."""
    permissions.require(actor, "trigger_test_run")
    src = sources.current()
    base = check_sha(base_sha, "baseSha")
    pr = contexts.check_pr(pr_number)
    if deployment_id is None and commit_sha is None:
        raise InvalidInput(
            "name the deployment to test (deploymentId), or a commit whose latest deployment "
            "to test (commitSha)"
        )
    if deployment_id is None:
        sha = check_sha(commit_sha, "commitSha")
        deployment_id = src.deployment_for_commit(env, actor, sha)
        if deployment_id is None:
            raise NotFound(
                f"commit {sha} has no deployment: upload its build first "
                "(request_asset_upload, then register_asset_build)",
                commit_sha=sha,
            )
    head_sha = src.deployment_commit(env, actor, deployment_id)
    if max_duration_seconds is not None and not (
        isinstance(max_duration_seconds, int | float) and 10 <= max_duration_seconds <= 86400
    ):
        raise InvalidInput("maxDurationSeconds must be between 10 and 86400")
    changed = parse_git_diff(git_diff_output) if git_diff_output is not None else None
    chosen, selection = _select(env, actor, session_ids, changed)
    if not chosen:
        raise InvalidInput(
            "no session to replay: "
            + (
                "none of the chosen sessions runs code the git diff changes"
                if selection == "coverage"
                else "the project has no recorded sessions yet (add the recorder to the app)"
            )
        )
    base_deployment = src.deployment_for_commit(env, actor, base)
    run_id = new_id("trn")
    if dry_run:
        return TriggerResult(
            testRunId=run_id,
            status="processing",
            sessionIds=chosen,
            baseDeploymentId=base_deployment,
            selection=selection,
            dryRun=True,
        )
    with env.db.write() as s:
        run = ReplayRun(
            id=run_id,
            project_id=actor.project_id,
            kind="head",
            deployment_id=deployment_id,
            commit_sha=head_sha,
            base_sha=base,
            base_deployment_id=base_deployment,
            pr_number=pr,
            session_ids=chosen,
            selection=selection,
            changed_lines=changed,
            max_duration=max_duration_seconds,
            engine_version=ENGINE_VERSION,
            created_by=actor.key_id,
        )
        s.add(run)
        s.flush()
        plan(s, run)
    return TriggerResult(
        testRunId=run_id,
        status="processing",
        sessionIds=chosen,
        baseDeploymentId=base_deployment,
        selection=selection,
    )


def _reusable(s: Session, run: ReplayRun, session_id: str, deployment_id: str) -> Replay | None:
    """A done replay of that session on that deployment by this engine version."""
    return s.scalar(
        select(Replay)
        .where(
            Replay.project_id == run.project_id,
            Replay.deployment_id == deployment_id,
            Replay.session_id == session_id,
            Replay.engine_version == run.engine_version,
            Replay.state == "done",
        )
        .order_by(Replay.completed_at.desc())
        .limit(1)
    )


def _replay_for(s: Session, run: ReplayRun, session_id: str, deployment_id: str) -> Replay:
    found = _reusable(s, run, session_id, deployment_id)
    if found is not None:
        return found
    replay = Replay(
        id=new_id("rpl"),
        project_id=run.project_id,
        test_run_id=run.id,
        session_id=session_id,
        deployment_id=deployment_id,
        engine_version=run.engine_version,
    )
    s.add(replay)
    s.flush()
    jobs.enqueue(s, REPLAY_JOB, replay.id)
    return replay


def plan(s: Session, run: ReplayRun) -> None:
    """The replays a run needs (reusing done ones) and its replay diffs; queues what is left
    to replay, or the comparing when nothing is."""
    waiting = False
    for session_id in run.session_ids:
        head = _replay_for(s, run, session_id, run.deployment_id)
        waiting |= head.state == "pending"
        base = None
        if run.kind == "head" and run.base_deployment_id is not None:
            base = _replay_for(s, run, session_id, run.base_deployment_id)
            waiting |= base.state == "pending"
        if run.kind == "head":
            s.add(
                ReplayDiff(
                    id=new_id("rdf"),
                    project_id=run.project_id,
                    test_run_id=run.id,
                    session_id=session_id,
                    base_replay_id=base.id if base else None,
                    head_replay_id=head.id,
                )
            )
    if not waiting:
        run.phase = "comparing"
        jobs.enqueue(s, COMPARE_JOB, run.id)


def get_run_row(s: Session, actor: Actor, test_run_id: str) -> ReplayRun:
    return scoping.owned(s, ReplayRun, test_run_id, actor, "test run")


def run_record(run: ReplayRun) -> RunRecord:
    return RunRecord(
        testRunId=run.id,
        status=run.state,
        reason=run.reason,
        kind=run.kind,
        commitSha=run.commit_sha,
        baseSha=run.base_sha,
        deploymentId=run.deployment_id,
        baseDeploymentId=run.base_deployment_id,
        prNumber=run.pr_number,
        sessionIds=list(run.session_ids),
        createdAt=run.created_at,
        completedAt=run.completed_at,
    )


def resolve_run(
    s: Session, actor: Actor, test_run_id: str | None, commit_sha: str | None
) -> ReplayRun:
    """The run named, or the latest head run of a commit (a full sha or a prefix). Raises
    InvalidInput, NotFound."""
    if test_run_id is not None:
        return get_run_row(s, actor, test_run_id)
    if commit_sha is None:
        raise InvalidInput("name the test run (testRunId) or its commit (commitSha)")
    sha = check_sha(commit_sha, "commitSha")
    run = s.scalar(
        select(ReplayRun)
        .where(
            ReplayRun.project_id == actor.project_id,
            ReplayRun.kind == "head",
            ReplayRun.commit_sha.startswith(sha),
        )
        .order_by(ReplayRun.created_at.desc(), ReplayRun.id.desc())
        .limit(1)
    )
    if run is None:
        raise NotFound(
            f"no test run for commit {sha} in this project: trigger one (trigger_test_run)",
            commit_sha=sha,
        )
    return run


def get_test_run(env: Env, actor: Actor, test_run_id: str) -> RunRecord:
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        return run_record(get_run_row(s, actor, test_run_id))


def get_test_run_for_commit(env: Env, actor: Actor, commit_sha: str) -> RunRecord:
    """The latest test run of a commit. Raises NotFound, InvalidInput."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        return run_record(resolve_run(s, actor, None, commit_sha))


def complete_base_run(env: Env, actor: Actor, test_run_id: str) -> RunRecord:
    """Replay, on a run's base deployment, the chosen sessions it has no base replay of yet
    (a ``base`` run), so later runs against that base reuse them. Raises NotFound,
    Conflict, Forbidden."""
    permissions.require(actor, "trigger_test_run")
    src = sources.current()
    with env.db.read() as s:
        run = get_run_row(s, actor, test_run_id)
        deployment = run.base_deployment_id if run.kind == "head" else run.deployment_id
        base_sha = run.base_sha if run.kind == "head" else run.commit_sha
    if deployment is None or base_sha is None:
        raise NotFound(
            f"test run {test_run_id} has no base deployment: upload the base commit's build "
            "first (request_asset_upload, register_asset_build)"
        )
    chosen = src.chosen_sessions(env, actor)[:MAX_SESSIONS]
    with env.db.write() as s:
        todo = [
            sid
            for sid in chosen
            if s.scalar(
                select(Replay.id)
                .where(
                    Replay.project_id == actor.project_id,
                    Replay.deployment_id == deployment,
                    Replay.session_id == sid,
                    Replay.engine_version == ENGINE_VERSION,
                    Replay.state.in_(("done", "pending")),
                )
                .limit(1)
            )
            is None
        ]
        base_run = ReplayRun(
            id=new_id("trn"),
            project_id=actor.project_id,
            kind="base",
            deployment_id=deployment,
            commit_sha=base_sha,
            session_ids=todo,
            selection="chosen",
            engine_version=ENGINE_VERSION,
            created_by=actor.key_id,
        )
        s.add(base_run)
        s.flush()
        plan(s, base_run)
        return run_record(base_run)


def shot_diffs(s: Session, run: ReplayRun) -> list[ScreenshotDiff]:
    return list(
        s.scalars(
            select(ScreenshotDiff)
            .where(ScreenshotDiff.test_run_id == run.id)
            .order_by(ScreenshotDiff.rank, ScreenshotDiff.id)
        )
    )


def check_id(value: Any, what: str) -> str:
    if not well_formed(value):
        raise NotFound(f"no {what} {value!r} in this project")
    return str(value)
