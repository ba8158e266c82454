"""The Meticulous profile: Meticulous's 29 tool names, arguments and results over Viewfinder's
session replays (services/testruns, services/sessions, services/deployments), for agents and
skills written against Meticulous. It renames and reshapes; every rule stays in the services.
Its arguments are in meticulous_args.py, its session and deployment tools' code in
meticulous_deploy.py.

The four identity tools (whoami, list_projects, get_project, set_project) are the people and
projects ones (mcp/identity.py), under the same names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from viewfinder.mcp import identity
from viewfinder.mcp import meticulous_deploy as deploy
from viewfinder.mcp.meticulous_args import (
    CheckArgs,
    CommentArgs,
    CommentsArgs,
    CommitArg,
    CoverageFilters,
    DiffsArgs,
    DomDiffArgs,
    FeedbackArgs,
    Out,
    ProjectArg,
    RegisterAssets,
    RegisterContainer,
    ReplayCoverageArgs,
    ReplayDiffArg,
    ReplayDiffCoverageArgs,
    ReplyArgs,
    RunArg,
    RunCoverageArgs,
    RunSelector,
    ScreenshotArg,
    SessionArg,
    SessionsArgs,
    TriggerArgs,
    VerdictArgs,
    check_project,
    shaped,
    shaped_record,
)
from viewfinder.mcp.tooling import Call, Result, TextResult, ToolSpec
from viewfinder.services.testruns import checks, cover, review, runs
from viewfinder.services.testruns import feedback as fb

# ---- runs and diffs -------------------------------------------------------------------------


def _scoped(run: Callable[[Call, Any], Result]) -> Callable[[Call, Any], Result]:
    def scoped(call: Call, args: Any) -> Result:
        check_project(call, args)
        return run(call, args)

    return scoped


def _run_for_commit(call: Call, a: CommitArg) -> Out:
    found = runs.get_test_run_for_commit(call.env, call.actor, a.commitSha)
    out = {"testRunId": found.testRunId, "status": found.status}
    if found.reason:
        out["reason"] = found.reason
    return shaped(out)


def _diffs(call: Call, a: DiffsArgs) -> Out:
    return shaped(
        review.get_test_run_diffs(
            call.env,
            call.actor,
            test_run_id=a.testRunId,
            commit_sha=a.commitSha,
            include_all_diffs=a.includeAllDiffs,
            only_unreviewed=a.onlyUnreviewed,
            only_rejected=a.onlyRejected,
            only_with_comments=a.onlyWithComments,
            include_reviews=a.includeReviews,
            include_replay_ids=a.includeReplayIds,
            include_mismatch_fraction=a.includeMismatchFraction,
            include_dom_diff_ids=a.includeDomDiffIds,
            order_by_replay_diffs=a.orderByReplayDiffs,
        )
    )


def _dom_diff(call: Call, a: DomDiffArgs) -> TextResult:
    found = review.get_dom_diff(call.env, call.actor, a.replayDiffId, a.screenshotName, a.context)
    text = found["diff"] or "(no DOM difference at this screenshot)"
    return TextResult([text], shaped(found))


def _coverage_of_run(call: Call, a: RunCoverageArgs) -> Out:
    return shaped(
        cover.get_test_run_js_coverage(
            call.env,
            call.actor,
            test_run_id=a.testRunId,
            commit_sha=a.commitSha,
            glob_filter=a.globFilter,
            pr_diff_only=a.prDiffOnly,
            include_executable_ranges=a.includeExecutableRanges,
            include_coverage_percentage=a.includeCoveragePercentage,
            test_run_ids=(a.headPlusTestRunIds or []) + (a.testRunIds or []),
        )
    )


def _trigger(call: Call, a: TriggerArgs) -> Out:
    started = runs.trigger_test_run(
        call.env,
        call.actor,
        deployment_id=a.deploymentId,
        commit_sha=a.commitSha,
        base_sha=a.baseSha,
        git_diff_output=a.gitDiffOutput,
        session_ids=a.sessionIds,
        max_duration_seconds=a.maxDurationSeconds,
        pr_number=a.prNumber,
        dry_run=a.dryRun,
    )
    return shaped_record(started)


def _complete_base(call: Call, a: RunArg) -> Out:
    made = runs.complete_base_run(call.env, call.actor, a.testRunId)
    return shaped(
        {"testRunId": made.testRunId, "status": made.status, "sessionIds": made.sessionIds}
    )


# ---- the tools ------------------------------------------------------------------------------

RUN = "Name the run by testRunId, or by commitSha (its latest run)."


def _read(
    name: str, text: str, model: type[BaseModel], run: Callable[[Call, Any], Result]
) -> ToolSpec:
    return ToolSpec(
        name, text, model, Out, _scoped(run), read_only=True, operation="read_test_runs"
    )


TOOLS: list[ToolSpec] = [
    _read(
        "get_test_run_for_commit",
        "The latest test run of a commit: testRunId and status (processing, complete, failed).",
        CommitArg,
        _run_for_commit,
    ),
    _read(
        "get_test_run_diffs",
        f"The screenshot diffs of a test run. {RUN} Answers {{status: processing}} until the "
        "run is computed (poll again), {status: failed, reason} (final), or {status: complete, "
        "testRunId, diffs: [{replayDiffId, screenshotName, outcome, sessionId}]}: by default "
        "the representative subset, one screenshot per distinct DOM change, likely "
        "regressions first; includeAllDiffs lists every differing one with isSelected.",
        DiffsArgs,
        _diffs,
    ),
    _read(
        "get_test_run_diffs_counts",
        f"Totals of a test run: replays, screenshots, differences, the six outcomes (no-diff, "
        f"diff, missing-base, missing-head, different-size, flake) and the review decisions; "
        f"partial while it runs. {RUN}",
        RunSelector,
        lambda c, a: shaped(
            review.get_test_run_diffs_counts(
                c.env, c.actor, test_run_id=a.testRunId, commit_sha=a.commitSha
            )
        ),
    ),
    _read(
        "get_image_urls",
        "Signed URLs of a screenshot diff's before, after and diffImage (and retake for a "
        "flake), with its outcome.",
        ScreenshotArg,
        lambda c, a: shaped(
            review.get_image_urls(c.env, c.actor, a.replayDiffId, a.screenshotName)
        ),
    ),
    _read(
        "get_dom_diff",
        "The DOM at one screenshot, base vs head, as unified-diff text with indentation "
        "stripped: one [diff N] block per independent change, context lines around each.",
        DomDiffArgs,
        _dom_diff,
    ),
    _read(
        "get_timeline_diff",
        "A replay diff's timelines aligned: rows diff (same, removed, added, changed), timeMs, "
        "event (user, screenshot, network, console, urlChange, error), description.",
        ReplayDiffArg,
        lambda c, a: shaped(review.get_timeline_diff(c.env, c.actor, a.replayDiffId)),
    ),
    _read(
        "get_test_run_check",
        "A check's Markdown report: {status: processing} until it reported (poll every 10 s, "
        "3 minutes at most), {status: complete, text}, or {status: failed, reason}. Built-in "
        "checks: console-errors, failed-requests, unrecorded-requests, uncaught-exceptions.",
        CheckArgs,
        lambda c, a: shaped_record(
            checks.get_check(c.env, c.actor, a.testRunId, a.checkId, a.checkType)
        ),
    ),
    _read(
        "get_test_run_check_available_ids",
        "The check ids that have reported for a test run so far, by type (builtin, custom).",
        RunArg,
        lambda c, a: shaped(checks.available_ids(c.env, c.actor, a.testRunId)),
    ),
    _read(
        "get_diff_comments",
        "A screenshot diff's open comment threads, oldest first, replies nested: id, author, "
        "isAgentAuthored, text, x, y (isResolved with includeResolved).",
        CommentsArgs,
        lambda c, a: shaped(
            review.get_diff_comments(
                c.env, c.actor, a.replayDiffId, a.screenshotName, a.includeResolved
            )
        ),
    ),
    ToolSpec(
        "reject_diff",
        "Reject a screenshot diff as a regression: a real rejected decision (replacing the one "
        "before) and a comment with the reason at x, y (0-1). The identical call again does "
        "nothing.",
        VerdictArgs,
        Out,
        _scoped(
            lambda c, a: shaped(
                review.reject_diff(
                    c.env, c.actor, a.replayDiffId, a.screenshotName, a.reason, a.x, a.y
                )
            )
        ),
        idempotent=True,
        operation="review_diff",
    ),
    ToolSpec(
        "ignore_diff",
        "Say why a screenshot diff looks like noise or a flake: posts a comment at x, y and "
        "decides nothing (only a person accepts or ignores). Every call posts a new comment.",
        VerdictArgs,
        Out,
        _scoped(
            lambda c, a: shaped(
                review.ignore_diff(
                    c.env, c.actor, a.replayDiffId, a.screenshotName, a.reason, a.x, a.y
                )
            )
        ),
        operation="comment",
    ),
    ToolSpec(
        "create_diff_comment",
        "Start a comment thread on a screenshot diff at x, y (0-1): {commentId}.",
        CommentArgs,
        Out,
        _scoped(
            lambda c, a: shaped(
                review.create_diff_comment(
                    c.env, c.actor, a.replayDiffId, a.screenshotName, a.text, a.x, a.y
                )
            )
        ),
        operation="comment",
    ),
    ToolSpec(
        "reply_to_diff_comment",
        "Reply to a comment thread: {commentId} of the reply.",
        ReplyArgs,
        Out,
        _scoped(
            lambda c, a: shaped(review.reply_to_diff_comment(c.env, c.actor, a.commentId, a.text))
        ),
        operation="comment",
    ),
    _read(
        "get_test_run_js_coverage",
        f"JavaScript coverage of a test run's head replays, per file (repoFilePath, "
        f"coveredLines, executableLines, functions, coveragePercentage). {RUN}",
        RunCoverageArgs,
        _coverage_of_run,
    ),
    _read(
        "get_project_js_coverage",
        "JavaScript coverage of the project's latest complete test run, per file.",
        CoverageFilters,
        lambda c, a: shaped(
            cover.get_project_js_coverage(
                c.env, c.actor, glob_filter=a.globFilter, include_ranges=a.includeExecutableRanges
            )
        ),
    ),
    _read(
        "get_replay_js_coverage",
        "JavaScript coverage of one replay, or of one screenshot of it, per file.",
        ReplayCoverageArgs,
        lambda c, a: shaped(
            cover.get_replay_js_coverage(
                c.env,
                c.actor,
                a.replayId,
                screenshot_name=a.screenshotName,
                glob_filter=a.globFilter,
                include_ranges=a.includeExecutableRanges,
            )
        ),
    ),
    _read(
        "get_replay_diff_js_coverage_diff",
        "Coverage differences of a replay diff, base vs head: rows repoFilePath, status, "
        "baseRanges, headRanges and functions (by name: line numbers move between builds).",
        ReplayDiffCoverageArgs,
        lambda c, a: shaped(
            cover.get_replay_diff_js_coverage_diff(
                c.env,
                c.actor,
                a.replayDiffId,
                screenshot_name=a.screenshotName,
                glob_filter=a.globFilter,
            )
        ),
    ),
    ToolSpec(
        "get_sessions",
        "The project's recorded sessions, newest first: id, createdAt, recordedAt, "
        "recordedBy, status, and the columns asked for with include*.",
        SessionsArgs,
        Out,
        _scoped(deploy.get_sessions),
        read_only=True,
        operation="list_sessions",
    ),
    ToolSpec(
        "get_session_data",
        "A session's user flow (\"click button 'Add item'\") and network summary "
        '("GET /api/items 200 x2"): what a replay of it exercises.',
        SessionArg,
        Out,
        _scoped(deploy.session_data),
        read_only=True,
        operation="get_session",
    ),
    ToolSpec(
        "request_asset_upload",
        "An uploadId and a signed URL to PUT a zip of a static build to (no key needed for "
        "the PUT); then register_asset_build.",
        ProjectArg,
        Out,
        _scoped(deploy.upload),
        operation="request_asset_upload",
    ),
    ToolSpec(
        "register_asset_build",
        "Make an uploaded zip a deployment of a commit: {deploymentId}. The zip is checked "
        "(paths, sizes, compression ratio) first.",
        RegisterAssets,
        Out,
        _scoped(deploy.register_assets),
        idempotent=True,
        operation="register_asset_build",
    ),
    ToolSpec(
        "request_container_upload",
        "Where and how to put a container image for this project (when the server runs "
        "containers).",
        ProjectArg,
        Out,
        _scoped(deploy.container_upload),
        operation="request_container_upload",
    ),
    ToolSpec(
        "register_container_build",
        "Make a container image a deployment of a commit: {deploymentId}.",
        RegisterContainer,
        Out,
        _scoped(deploy.register_container),
        operation="register_container_build",
    ),
    ToolSpec(
        "trigger_test_run",
        "Replay the chosen sessions on a deployment (deploymentId, or commitSha's latest) and "
        "on baseSha's deployment, and compare them: {testRunId}. Returns at once; poll "
        "get_test_run_diffs.",
        TriggerArgs,
        Out,
        _scoped(_trigger),
        operation="trigger_test_run",
    ),
    ToolSpec(
        "complete_base_run",
        "Replay, on a run's base deployment, the chosen sessions it has not replayed yet.",
        RunArg,
        Out,
        _scoped(_complete_base),
        operation="trigger_test_run",
    ),
    ToolSpec(
        "submit_feedback",
        "Send free-form feedback about Viewfinder to the server's admins: {feedbackId}.",
        FeedbackArgs,
        Out,
        _scoped(
            lambda c, a: shaped(
                fb.submit_feedback(
                    c.env,
                    c.actor,
                    a.message,
                    outcome=a.outcome,
                    test_run_id=a.testRunId,
                    skill=a.skill,
                    agent_name=a.agentName,
                    agent_model=a.agentModel,
                )
            )
        ),
        operation="submit_feedback",
    ),
    *identity.TOOLS,
]
