"""Test runs over REST: trigger one, read its diffs, counts, DOM, timeline and coverage diffs,
review and discuss a screenshot diff, report custom checks, and send feedback. Field names are
Viewfinder's (snake_case) in requests; answers are the services' records."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import Field

from viewfinder.api import fields
from viewfinder.api.deps import ActorDep, EnvDep, op
from viewfinder.plumbing.bodies import Body
from viewfinder.plumbing.offloop import call
from viewfinder.services.testruns import checks, cover, review, runs
from viewfinder.services.testruns import feedback as fb
from viewfinder.services.testruns.checks import CheckResult
from viewfinder.services.testruns.feedback import FeedbackRecord
from viewfinder.services.testruns.runs import RunRecord, TriggerResult
from viewfinder.services.text import SHA_PATTERN

router = APIRouter(tags=["test runs"])
SHOT = "/replay-diffs/{replay_diff_id}/screenshots/{screenshot_name}"


class Trigger(Body):
    deployment_id: str | None = Field(None, max_length=40, description="The deployment to test.")
    commit_sha: str | None = Field(
        None,
        description="Or a commit: its latest deployment.",
        json_schema_extra={"pattern": SHA_PATTERN},
    )
    base_sha: fields.CommitSha
    git_diff_output: str | None = Field(
        None,
        description="`git diff` output: replay the sessions covering its lines.",
        json_schema_extra=fields.text(5_000_000),
    )
    session_ids: list[Annotated[str, Field(max_length=40)]] | None = Field(
        None,
        min_length=1,
        max_length=runs.MAX_SESSIONS,
        description="Default: the chosen sessions.",
    )
    max_duration_seconds: float | None = Field(None, ge=10, le=86400)
    pr_number: int | None = Field(
        None, ge=1, description="The pull request it tests: only its run's diffs can be rejected."
    )
    dry_run: bool = False


@router.post("/test-runs", status_code=202, **op("trigger_test_run"))
async def trigger(body: Trigger, env: EnvDep, actor: ActorDep) -> TriggerResult:
    """Start a test run; answers at once (202) while it is processing."""
    return await call(
        runs.trigger_test_run,
        env,
        actor,
        deployment_id=body.deployment_id,
        commit_sha=body.commit_sha,
        base_sha=body.base_sha,
        git_diff_output=body.git_diff_output,
        session_ids=body.session_ids,
        max_duration_seconds=body.max_duration_seconds,
        pr_number=body.pr_number,
        dry_run=body.dry_run,
    )


@router.get("/test-runs", **op("read_test_runs"))
async def for_commit(
    env: EnvDep, actor: ActorDep, commit_sha: Annotated[str, Query(json_schema_extra=fields.SHA)]
) -> RunRecord:
    """The latest test run of a commit."""
    return await call(runs.get_test_run_for_commit, env, actor, commit_sha)


@router.get("/test-runs/{test_run_id}", **op("read_test_runs"))
async def get_run(test_run_id: str, env: EnvDep, actor: ActorDep) -> RunRecord:
    return await call(runs.get_test_run, env, actor, test_run_id)


@router.post("/test-runs/{test_run_id}/complete-base", **op("trigger_test_run"))
async def complete_base(test_run_id: str, env: EnvDep, actor: ActorDep) -> RunRecord:
    """Replay on the run's base deployment the chosen sessions it has no replay of yet."""
    return await call(runs.complete_base_run, env, actor, test_run_id)


@router.get("/test-runs/{test_run_id}/diffs", **op("read_test_runs"))
async def diffs(
    test_run_id: str,
    env: EnvDep,
    actor: ActorDep,
    all_diffs: bool = False,
    only_unreviewed: bool = False,
    only_rejected: bool = False,
    only_with_comments: bool = False,
    include_reviews: bool = False,
    include_replay_ids: bool = False,
    include_mismatch_fraction: bool = False,
    include_dom_diff_ids: bool = False,
    order_by_replay_diffs: bool = False,
) -> dict[str, Any]:
    """{status: processing}, {status: failed, reason} or {status: complete, testRunId, diffs}."""
    return await call(
        review.get_test_run_diffs,
        env,
        actor,
        test_run_id=test_run_id,
        include_all_diffs=all_diffs,
        only_unreviewed=only_unreviewed,
        only_rejected=only_rejected,
        only_with_comments=only_with_comments,
        include_reviews=include_reviews,
        include_replay_ids=include_replay_ids,
        include_mismatch_fraction=include_mismatch_fraction,
        include_dom_diff_ids=include_dom_diff_ids,
        order_by_replay_diffs=order_by_replay_diffs,
    )


@router.get("/test-runs/{test_run_id}/counts", **op("read_test_runs"))
async def counts(test_run_id: str, env: EnvDep, actor: ActorDep) -> dict[str, Any]:
    return await call(review.get_test_run_diffs_counts, env, actor, test_run_id=test_run_id)


@router.get("/test-runs/{test_run_id}/coverage", **op("read_test_runs"))
async def run_coverage(
    test_run_id: str,
    env: EnvDep,
    actor: ActorDep,
    glob: Annotated[str | None, Query(max_length=500)] = None,
    pr_diff_only: bool = False,
    ranges: bool = False,
) -> dict[str, Any]:
    """JavaScript coverage of the run's head replays, per file."""
    return await call(
        cover.get_test_run_js_coverage,
        env,
        actor,
        test_run_id=test_run_id,
        glob_filter=glob,
        pr_diff_only=pr_diff_only,
        include_executable_ranges=ranges,
    )


@router.get("/replays/{replay_id}/coverage", **op("read_test_runs"))
async def replay_coverage(
    replay_id: str,
    env: EnvDep,
    actor: ActorDep,
    screenshot: Annotated[str | None, Query(max_length=40)] = None,
    glob: Annotated[str | None, Query(max_length=500)] = None,
) -> dict[str, Any]:
    return await call(
        cover.get_replay_js_coverage,
        env,
        actor,
        replay_id,
        screenshot_name=screenshot,
        glob_filter=glob,
    )


@router.get("/replay-diffs/{replay_diff_id}/timeline-diff", **op("read_test_runs"))
async def timeline(replay_diff_id: str, env: EnvDep, actor: ActorDep) -> dict[str, Any]:
    return await call(review.get_timeline_diff, env, actor, replay_diff_id)


@router.get("/replay-diffs/{replay_diff_id}/coverage-diff", **op("read_test_runs"))
async def coverage_diff(
    replay_diff_id: str,
    env: EnvDep,
    actor: ActorDep,
    screenshot: Annotated[str | None, Query(max_length=40)] = None,
    glob: Annotated[str | None, Query(max_length=500)] = None,
) -> dict[str, Any]:
    return await call(
        cover.get_replay_diff_js_coverage_diff,
        env,
        actor,
        replay_diff_id,
        screenshot_name=screenshot,
        glob_filter=glob,
    )


@router.get(SHOT + "/images", **op("read_test_runs"))
async def images(
    replay_diff_id: str, screenshot_name: str, env: EnvDep, actor: ActorDep
) -> dict[str, Any]:
    """The outcome and signed links to before, after and diffImage."""
    return await call(review.get_image_urls, env, actor, replay_diff_id, screenshot_name)


@router.get(SHOT + "/dom-diff", **op("read_test_runs"))
async def dom_diff(
    replay_diff_id: str,
    screenshot_name: str,
    env: EnvDep,
    actor: ActorDep,
    context: Annotated[
        str,
        Query(
            description="Lines of context (0-1000), or full.",
            json_schema_extra={"pattern": "^([0-9]{1,3}|1000|full)$"},
        ),
    ] = "3",
) -> dict[str, Any]:
    lines: int | str = int(context) if context.isdigit() else context
    return await call(review.get_dom_diff, env, actor, replay_diff_id, screenshot_name, lines)


class Verdict(Body):
    reason: fields.CommentText
    x: float = Field(ge=0, le=1, strict=False)
    y: float = Field(ge=0, le=1, strict=False)


@router.post(SHOT + "/reject", **op("review_diff"))
async def reject(
    replay_diff_id: str, screenshot_name: str, body: Verdict, env: EnvDep, actor: ActorDep
) -> dict[str, Any]:
    """A rejected decision and a comment with the reason at x, y."""
    return await call(
        review.reject_diff, env, actor, replay_diff_id, screenshot_name, body.reason, body.x, body.y
    )


@router.post(SHOT + "/ignore", **op("comment"))
async def ignore(
    replay_diff_id: str, screenshot_name: str, body: Verdict, env: EnvDep, actor: ActorDep
) -> dict[str, Any]:
    """A comment only: people accept or ignore."""
    return await call(
        review.ignore_diff, env, actor, replay_diff_id, screenshot_name, body.reason, body.x, body.y
    )


class Decision(Body):
    decision: Literal["accept", "reject", "ignore"]


@router.post(SHOT + "/decision", **op("review_diff"))
async def decide(
    replay_diff_id: str, screenshot_name: str, body: Decision, env: EnvDep, actor: ActorDep
) -> dict[str, Any]:
    """A person accepts, rejects or ignores a screenshot diff (agents: reject only)."""
    return await call(review.decide, env, actor, replay_diff_id, screenshot_name, body.decision)


class NewComment(Body):
    text: fields.CommentText
    x: float = Field(ge=0, le=1, strict=False)
    y: float = Field(ge=0, le=1, strict=False)


@router.post(SHOT + "/comments", status_code=201, **op("comment"))
async def comment(
    replay_diff_id: str, screenshot_name: str, body: NewComment, env: EnvDep, actor: ActorDep
) -> dict[str, Any]:
    return await call(
        review.create_diff_comment,
        env,
        actor,
        replay_diff_id,
        screenshot_name,
        body.text,
        body.x,
        body.y,
    )


@router.get(SHOT + "/comments", **op("list_comments"))
async def comments(
    replay_diff_id: str,
    screenshot_name: str,
    env: EnvDep,
    actor: ActorDep,
    include_resolved: bool = False,
) -> dict[str, Any]:
    return await call(
        review.get_diff_comments, env, actor, replay_diff_id, screenshot_name, include_resolved
    )


@router.get("/test-runs/{test_run_id}/checks", **op("read_test_runs"))
async def check_ids(test_run_id: str, env: EnvDep, actor: ActorDep) -> dict[str, list[str]]:
    """The checks that have reported so far, by type."""
    return await call(checks.available_ids, env, actor, test_run_id)


@router.get("/test-runs/{test_run_id}/checks/{check_type}/{check_id}", **op("read_test_runs"))
async def get_check(
    test_run_id: str,
    check_type: Literal["builtin", "custom"],
    check_id: str,
    env: EnvDep,
    actor: ActorDep,
) -> CheckResult:
    return await call(checks.get_check, env, actor, test_run_id, check_id, check_type)


class Expected(Body):
    check_ids: list[
        Annotated[str, Field(json_schema_extra={"pattern": checks.CHECK_ID.pattern})]
    ] = Field(max_length=100)


@router.post("/test-runs/{test_run_id}/checks", **op("report_check"))
async def expect(
    test_run_id: str, body: Expected, env: EnvDep, actor: ActorDep
) -> dict[str, list[str]]:
    """Declare the custom checks CI will report (processing until reported)."""
    return {"expected": await call(checks.expect_checks, env, actor, test_run_id, body.check_ids)}


class Report(Body):
    text: str | None = Field(
        None, description="The Markdown report.", json_schema_extra=fields.text(1_000_000)
    )
    failed_reason: str | None = Field(
        None, description="Or why it failed.", json_schema_extra=fields.text(2000)
    )


@router.put("/test-runs/{test_run_id}/checks/custom/{check_id}", **op("report_check"))
async def report(
    test_run_id: str, check_id: str, body: Report, env: EnvDep, actor: ActorDep
) -> CheckResult:
    return await call(
        checks.report_check,
        env,
        actor,
        test_run_id,
        check_id,
        text=body.text,
        failed_reason=body.failed_reason,
    )


class NewFeedback(Body):
    message: str = Field(json_schema_extra=fields.text(10_000))
    outcome: Literal["helped", "neutral", "hindered"] | None = None
    test_run_id: str | None = Field(None, json_schema_extra=fields.line(100))
    skill: str | None = Field(None, json_schema_extra=fields.line(100))
    agent_name: str | None = Field(None, json_schema_extra=fields.line(100))
    agent_model: str | None = Field(None, json_schema_extra=fields.line(100))


@router.post("/feedback", status_code=201, **op("submit_feedback"))
async def feedback(body: NewFeedback, env: EnvDep, actor: ActorDep) -> dict[str, str]:
    """Feedback about Viewfinder for the server's admins."""
    return await call(
        fb.submit_feedback,
        env,
        actor,
        body.message,
        outcome=body.outcome,
        test_run_id=body.test_run_id,
        skill=body.skill,
        agent_name=body.agent_name,
        agent_model=body.agent_model,
    )


@router.get("/feedback", **op("list_feedback"))
async def list_feedback(
    env: EnvDep, actor: ActorDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[FeedbackRecord]:
    """The feedback sent to this project, newest first (admins)."""
    return await call(fb.list_feedback, env, actor, limit=limit)
