"""The Meticulous profile's arguments (camelCase, as Meticulous names them) and its one
output shape: results carry only the fields that apply, as the reference's do."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.errors import Forbidden
from viewfinder.mcp.tooling import Call
from viewfinder.store.models import Project


class Out(BaseModel):
    """A result shaped as the reference shapes it: the fields named in its description, and
    only those that apply (``{status: "processing"}`` has nothing else)."""

    model_config = ConfigDict(extra="allow", frozen=True)


def shaped(value: dict[str, Any]) -> Out:
    return Out(**value)


def shaped_record(value: BaseModel) -> Out:
    return Out(**value.model_dump(mode="json"))


# ---- arguments ------------------------------------------------------------------------------


class ProjectArg(BaseModel):
    project: str | None = Field(
        None,
        description="A project id, org/name or name; a project key always works on its own "
        "project.",
    )


def check_project(call: Call, args: BaseModel) -> None:
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
    prNumber: int | None = Field(
        None, description="The pull request it tests: only its run's diffs can be rejected."
    )
    dryRun: bool = Field(False, description="Say what would run; start nothing.")


class FeedbackArgs(ProjectArg):
    message: str = Field(description="Free-form feedback about Viewfinder.")
    outcome: Literal["helped", "neutral", "hindered"] | None = None
    testRunId: str | None = None
    skill: str | None = None
    agentName: str | None = None
    agentModel: str | None = None
