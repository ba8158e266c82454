"""The Meticulous profile: Meticulous's 29 tool names, arguments and results over Viewfinder's
session replays (services/testruns, services/sessions, services/deployments), for agents and
skills written against Meticulous. It renames and reshapes; every rule stays in the services.

The four identity tools (whoami, list_projects, get_project, set_project) belong to the people
and projects work: ``identity_tools()`` takes them from ``viewfinder.mcp.identity`` when that
module is there, so this profile lists them under the same names."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.errors import Forbidden, InvalidInput, Unavailable
from viewfinder.mcp.tooling import Call, Result, TextResult, ToolSpec
from viewfinder.services import deployments
from viewfinder.services.testruns import checks, cover, review, runs
from viewfinder.services.testruns import feedback as fb
from viewfinder.store.models import Project

IDENTITY = ("whoami", "list_projects", "get_project", "set_project")


class Out(BaseModel):
    """A result shaped as the reference shapes it: the fields named in its description, and
    only those that apply (``{status: "processing"}`` has nothing else)."""

    model_config = ConfigDict(extra="allow", frozen=True)


def _out(value: dict[str, Any]) -> Out:
    return Out(**value)


def _record(value: BaseModel) -> Out:
    return Out(**value.model_dump(mode="json"))


# ---- arguments ------------------------------------------------------------------------------


class ProjectArg(BaseModel):
    project: str | None = Field(
        None,
        description="A project id, org/name or name; a project key always works on its own "
        "project.",
    )


def _scope(call: Call, args: BaseModel) -> None:
    """A project key sees its one project: naming another is refused, not silently ignored."""
    named = getattr(args, "project", None)
    if named is None:
        return
    with call.env.db.read() as s:
        project = s.get(Project, call.actor.project_id)
        known = {call.actor.project_id, project.name if project else ""}
    if named not in known and named.rsplit("/", 1)[-1] not in known:
        raise Forbidden(
            f"this key belongs to project {sorted(known - {call.actor.project_id})[0]!r} and "
            f"cannot read {named!r}: a project key sees its one project"
        )


class RunSelector(ProjectArg):
    testRunId: str | None = Field(None, description="The test run (trn_...).")
    commitSha: str | None = Field(
        None, description="Or a commit: its latest test run (full sha or a prefix)."
    )


class CommitArg(ProjectArg):
    commitSha: str = Field(description="The commit (full sha or a prefix of 4 or more).")


class DiffsArgs(RunSelector):
    includeAllDiffs: bool = Field(
        False, description="Every differing screenshot (with isSelected), not the subset."
    )
    onlyUnreviewed: bool = Field(False, description="Only screenshots nobody decided on.")
    onlyRejected: bool = Field(False, description="Only rejected screenshots.")
    onlyWithComments: bool = Field(False, description="Only screenshots with open comments.")
    includeReviews: bool = Field(False, description="Add decision and openComments.")
    includeReplayIds: bool = Field(False, description="Add baseReplayId and headReplayId.")
    includeMismatchFraction: bool = Field(False, description="Add mismatchFraction (0-1).")
    includeDomDiffIds: bool = Field(False, description="Add domDiffId (same id, same change).")
    orderByReplayDiffs: bool = Field(
        False, description="Order by replay diff and screenshot instead of by priority."
    )


class ScreenshotArg(ProjectArg):
    replayDiffId: str = Field(description="The replay diff (rdf_...).")
    screenshotName: str = Field(description="end-state or after-event-N.")


class DomDiffArgs(ScreenshotArg):
    context: int | Literal["full"] = Field(
        3, description="Lines of context around each change, or full (default 3)."
    )


class ReplayDiffArg(ProjectArg):
    replayDiffId: str = Field(description="The replay diff (rdf_...).")


class CheckArgs(ProjectArg):
    testRunId: str = Field(description="The test run (trn_...).")
    checkId: str = Field(description="See get_test_run_check_available_ids.")
    checkType: Literal["builtin", "custom"] = Field("builtin", description="builtin or custom.")


class RunArg(ProjectArg):
    testRunId: str = Field(description="The test run (trn_...).")


class CommentsArgs(ScreenshotArg):
    includeResolved: bool = Field(False, description="Resolved threads too (with isResolved).")


class VerdictArgs(ScreenshotArg):
    reason: str = Field(description="Why, in a sentence: posted as a comment.")
    x: float = Field(ge=0, le=1, description="Where on the image, 0 (left) to 1 (right).")
    y: float = Field(ge=0, le=1, description="Where on the image, 0 (top) to 1 (bottom).")


class CommentArgs(ScreenshotArg):
    text: str = Field(description="1 to 4000 characters.")
    x: float = Field(ge=0, le=1, description="0 (left) to 1 (right).")
    y: float = Field(ge=0, le=1, description="0 (top) to 1 (bottom).")


class ReplyArgs(ProjectArg):
    commentId: str = Field(description="The thread's comment (cmt_...).")
    text: str = Field(description="1 to 4000 characters.")


class CoverageFilters(ProjectArg):
    globFilter: str | None = Field(None, description="Only files matching this glob.")
    includeAllFiles: bool = Field(False, description="Files that did not run too (none known).")
    prDiffOnly: bool = Field(False, description="Only files the run's git diff changed.")
    includeExecutableRanges: bool = Field(False, description="Add the covered line ranges.")
    includeUncoveredRanges: bool = Field(False, description="Accepted; ranges are covered ones.")
    includeCoveragePercentage: bool = Field(True, description="Add coveragePercentage.")


class RunCoverageArgs(CoverageFilters):
    testRunId: str | None = Field(None, description="The test run (trn_...).")
    commitSha: str | None = Field(None, description="Or a commit: its latest test run.")
    headPlusTestRunIds: list[str] | None = Field(
        None, description="More runs of the same commit to take the union with."
    )
    testRunIds: list[str] | None = Field(None, description="Same as headPlusTestRunIds.")


class ReplayCoverageArgs(CoverageFilters):
    replayId: str = Field(description="The replay (rpl_...).")
    screenshotName: str | None = Field(
        None, description="One screenshot only: the code run since the one before."
    )


class ReplayDiffCoverageArgs(ProjectArg):
    replayDiffId: str = Field(description="The replay diff (rdf_...).")
    screenshotName: str | None = Field(None, description="One screenshot only.")
    globFilter: str | None = Field(None, description="Only files matching this glob.")


class SessionsArgs(ProjectArg):
    createdSince: str | None = Field(None, description="ISO-8601.")
    createdUntil: str | None = Field(None, description="ISO-8601.")
    recordedSince: str | None = Field(None, description="ISO-8601.")
    recordedUntil: str | None = Field(None, description="ISO-8601.")
    recordedBy: str | None = Field(None, description="Who recorded them.")
    excludeSyntheticSessions: bool = Field(False, description="Leave out synthetic sessions.")
    visitedUrlFilter: str | None = Field(None, description="A URL glob (* only).")
    includeStartUrl: bool = False
    includeAbandonedReason: bool = False
    includeNumberUserEvents: bool = False
    includeNumberUrlsVisited: bool = False
    includeDurationSeconds: bool = False
    limit: int = Field(100, ge=1, le=1000, description="1-1000 (100).")
    offset: int = Field(0, ge=0)


class SessionArg(ProjectArg):
    sessionId: str = Field(description="The session (ses_...).")


class RegisterAssets(ProjectArg):
    uploadId: str = Field(description="From request_asset_upload, after the zip was PUT.")
    commitSha: str = Field(description="The commit the build was made from.")
    rewrites: list[dict[str, str]] | None = Field(
        None, description='Single-page-app rules: [{"source": "/app/*", "destination": ...}].'
    )


class RegisterContainer(ProjectArg):
    uploadId: str = Field(description="From request_container_upload.")
    commitSha: str = Field(description="The commit the image was built from.")
    containerPort: int = Field(3000, ge=1, le=65535, description="The port it listens on.")
    containerEnv: dict[str, str] | None = Field(None, description="Environment variables.")
    containerHealthCheckEndpoint: str = Field("/", description="A path answering 200 when up.")


class TriggerArgs(ProjectArg):
    deploymentId: str | None = Field(None, description="The deployment to test (dep_...).")
    commitSha: str | None = Field(None, description="Or a commit: its latest deployment.")
    baseSha: str = Field(description="The base commit to compare with.")
    gitDiffOutput: str | None = Field(
        None, description="`git diff BASE...HEAD`: replay the sessions covering its lines."
    )
    sessionIds: list[str] | None = Field(None, description="Default: the chosen sessions.")
    maxDurationSeconds: float | None = Field(None, description="10 to 86400.")
    dryRun: bool = Field(False, description="Say what would run; start nothing.")


class FeedbackArgs(ProjectArg):
    message: str = Field(description="Free-form feedback about Viewfinder.")
    outcome: Literal["helped", "neutral", "hindered"] | None = None
    testRunId: str | None = None
    skill: str | None = None
    agentName: str | None = None
    agentModel: str | None = None


# ---- runs and diffs -------------------------------------------------------------------------


def _scoped(run: Callable[[Call, Any], Result]) -> Callable[[Call, Any], Result]:
    def scoped(call: Call, args: Any) -> Result:
        _scope(call, args)
        return run(call, args)

    return scoped


def _run_for_commit(call: Call, a: CommitArg) -> Out:
    found = runs.get_test_run_for_commit(call.env, call.actor, a.commitSha)
    out = {"testRunId": found.testRunId, "status": found.status}
    if found.reason:
        out["reason"] = found.reason
    return _out(out)


def _diffs(call: Call, a: DiffsArgs) -> Out:
    return _out(
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
    return TextResult([text], _out(found))


def _coverage_of_run(call: Call, a: RunCoverageArgs) -> Out:
    return _out(
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


# ---- sessions and deployments ---------------------------------------------------------------


def _sessions() -> Any:
    try:
        return importlib.import_module("viewfinder.services.sessions")
    except ImportError:
        raise Unavailable("this server keeps no recorded sessions yet") from None


def _get_sessions(call: Call, a: SessionsArgs) -> Out:
    def when(value: str | None, name: str) -> datetime | None:
        if value is None:
            return None
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(
                f"{name} must be an ISO-8601 time, e.g. 2026-01-31T12:00:00Z"
            ) from None

    include = {
        column
        for column, wanted in (
            ("start_url", a.includeStartUrl),
            ("abandoned_reason", a.includeAbandonedReason),
            ("number_user_events", a.includeNumberUserEvents),
            ("number_urls_visited", a.includeNumberUrlsVisited),
            ("duration_seconds", a.includeDurationSeconds),
        )
        if wanted
    }
    found = _sessions().list_sessions(
        call.env,
        call.actor,
        created_since=when(a.createdSince, "createdSince"),
        created_until=when(a.createdUntil, "createdUntil"),
        recorded_since=when(a.recordedSince, "recordedSince"),
        recorded_until=when(a.recordedUntil, "recordedUntil"),
        recorded_by=a.recordedBy,
        exclude_synthetic=a.excludeSyntheticSessions,
        visited_url_filter=a.visitedUrlFilter,
        include=include,
        limit=a.limit,
        offset=a.offset,
    )
    rows = []
    for session in found.sessions:
        row = {
            "id": session.id,
            "createdAt": session.created_at.isoformat(),
            "recordedAt": session.recorded_at.isoformat(),
            "recordedBy": session.recorded_by,
            "status": session.status,
        }
        for column, name in (
            ("start_url", "startUrl"),
            ("abandoned_reason", "abandonedReason"),
            ("number_user_events", "numberUserEvents"),
            ("number_urls_visited", "numberUrlsVisited"),
            ("duration_seconds", "durationSeconds"),
        ):
            if column in include:
                row[name] = getattr(session, column)
        rows.append(row)
    return _out({"project": found.project, "sessions": rows})


def _session_data(call: Call, a: SessionArg) -> Out:
    data = _sessions().get_session_data(call.env, call.actor, a.sessionId)
    return _out(
        {
            "sessionId": data.id,
            "status": data.status,
            "startUrl": data.start_url,
            "userFlow": data.user_flow,
            "networkSummary": data.network,
            "urls": data.urls,
            "durationSeconds": data.duration_seconds,
        }
    )


def _upload(call: Call, a: ProjectArg) -> Out:
    ticket = deployments.request_asset_upload(call.env, call.actor)
    return _out(
        {
            "uploadId": ticket.upload_id,
            "uploadUrl": ticket.upload_url,
            "method": ticket.method,
            "expiresAt": ticket.expires_at.isoformat(),
            "maxBytes": ticket.max_bytes,
        }
    )


def _register_assets(call: Call, a: RegisterAssets) -> Out:
    made = deployments.register_asset_build(
        call.env, call.actor, a.uploadId, a.commitSha, a.rewrites
    )
    return _out({"deploymentId": made.id, "commitSha": made.commit_sha})


def _container_upload(call: Call, a: ProjectArg) -> Out:
    ticket = deployments.request_container_upload(call.env, call.actor)
    return _out(
        {
            "uploadId": ticket.upload_id,
            "image": ticket.image,
            "runtime": ticket.runtime,
            "instructions": ticket.instructions,
            "expiresAt": ticket.expires_at.isoformat(),
        }
    )


def _register_container(call: Call, a: RegisterContainer) -> Out:
    made = deployments.register_container_build(
        call.env,
        call.actor,
        a.uploadId,
        a.commitSha,
        container_port=a.containerPort,
        container_env=a.containerEnv,
        health_check=a.containerHealthCheckEndpoint,
    )
    return _out({"deploymentId": made.id, "commitSha": made.commit_sha})


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
        dry_run=a.dryRun,
    )
    return _record(started)


def _complete_base(call: Call, a: RunArg) -> Out:
    made = runs.complete_base_run(call.env, call.actor, a.testRunId)
    return _out({"testRunId": made.testRunId, "status": made.status, "sessionIds": made.sessionIds})


# ---- the tools ------------------------------------------------------------------------------

RUN = "Name the run by testRunId, or by commitSha (its latest run)."


def _read(
    name: str, text: str, model: type[BaseModel], run: Callable[[Call, Any], Result]
) -> ToolSpec:
    return ToolSpec(
        name, text, model, Out, _scoped(run), read_only=True, operation="read_test_runs"
    )


def identity_tools() -> list[ToolSpec]:
    """whoami, list_projects, get_project and set_project, from the people work's module
    (``viewfinder.mcp.identity``, its TOOLS) when it is installed; none until then."""
    try:
        module = importlib.import_module("viewfinder.mcp.identity")
    except ImportError:
        return []
    return [t for t in getattr(module, "TOOLS", []) if t.name in IDENTITY]


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
        lambda c, a: _out(
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
        lambda c, a: _out(review.get_image_urls(c.env, c.actor, a.replayDiffId, a.screenshotName)),
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
        lambda c, a: _out(review.get_timeline_diff(c.env, c.actor, a.replayDiffId)),
    ),
    _read(
        "get_test_run_check",
        "A check's Markdown report: {status: processing} until it reported (poll every 10 s, "
        "3 minutes at most), {status: complete, text}, or {status: failed, reason}. Built-in "
        "checks: console-errors, failed-requests, unrecorded-requests, uncaught-exceptions.",
        CheckArgs,
        lambda c, a: _record(checks.get_check(c.env, c.actor, a.testRunId, a.checkId, a.checkType)),
    ),
    _read(
        "get_test_run_check_available_ids",
        "The check ids that have reported for a test run so far, by type (builtin, custom).",
        RunArg,
        lambda c, a: _out(checks.available_ids(c.env, c.actor, a.testRunId)),
    ),
    _read(
        "get_diff_comments",
        "A screenshot diff's open comment threads, oldest first, replies nested: id, author, "
        "isAgentAuthored, text, x, y (isResolved with includeResolved).",
        CommentsArgs,
        lambda c, a: _out(
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
            lambda c, a: _out(
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
            lambda c, a: _out(
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
            lambda c, a: _out(
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
            lambda c, a: _out(review.reply_to_diff_comment(c.env, c.actor, a.commentId, a.text))
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
        lambda c, a: _out(
            cover.get_project_js_coverage(
                c.env, c.actor, glob_filter=a.globFilter, include_ranges=a.includeExecutableRanges
            )
        ),
    ),
    _read(
        "get_replay_js_coverage",
        "JavaScript coverage of one replay, or of one screenshot of it, per file.",
        ReplayCoverageArgs,
        lambda c, a: _out(
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
        lambda c, a: _out(
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
        _scoped(_get_sessions),
        read_only=True,
        operation="list_sessions",
    ),
    ToolSpec(
        "get_session_data",
        "A session's user flow (\"click button 'Add item'\") and network summary "
        '("GET /api/items 200 x2"): what a replay of it exercises.',
        SessionArg,
        Out,
        _scoped(_session_data),
        read_only=True,
        operation="get_session",
    ),
    ToolSpec(
        "request_asset_upload",
        "An uploadId and a signed URL to PUT a zip of a static build to (no key needed for "
        "the PUT); then register_asset_build.",
        ProjectArg,
        Out,
        _scoped(_upload),
        operation="request_asset_upload",
    ),
    ToolSpec(
        "register_asset_build",
        "Make an uploaded zip a deployment of a commit: {deploymentId}. The zip is checked "
        "(paths, sizes, compression ratio) first.",
        RegisterAssets,
        Out,
        _scoped(_register_assets),
        idempotent=True,
        operation="register_asset_build",
    ),
    ToolSpec(
        "request_container_upload",
        "Where and how to put a container image for this project (when the server runs "
        "containers).",
        ProjectArg,
        Out,
        _scoped(_container_upload),
        operation="request_container_upload",
    ),
    ToolSpec(
        "register_container_build",
        "Make a container image a deployment of a commit: {deploymentId}.",
        RegisterContainer,
        Out,
        _scoped(_register_container),
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
            lambda c, a: _out(
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
    *identity_tools(),
]
