"""The default profile's session replays: two tools over the test-run services the meticulous
profile uses, in Viewfinder's own words. One reads (recorded sessions, a run, or one screenshot
diff's images, DOM, timeline or coverage, chosen by ``view``); one starts a run.

A screenshot diff's pair is a diff like any other: each row of a run carries its ``diff_id``,
which review_diff, list_comments and add_comment take (services/reviews.py holds a replay
pair's decision to the test runs' rules)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from viewfinder.errors import InvalidInput
from viewfinder.mcp.tooling import Call, ToolSpec
from viewfinder.services import sessions
from viewfinder.services.records import Record
from viewfinder.services.testruns import cover, review, runs
from viewfinder.services.testruns.runs import RunRecord, TriggerResult

View = Literal["sessions", "run", "images", "dom", "timeline", "coverage"]
DETAILS = ("images", "dom", "timeline", "coverage")


class GetReplays(BaseModel):
    view: View = Field(
        "run",
        description="sessions (newest first); run (test_run_id or commit_sha); images (signed "
        "URLs), dom, timeline or coverage of one screenshot diff (replay_diff_id, screenshot).",
    )
    test_run_id: str | None = None
    commit_sha: str | None = Field(None, description="Or a commit's latest run.")
    replay_diff_id: str | None = None
    screenshot: str | None = Field(None, description="end-state or after-event-N.")
    all_diffs: bool = Field(False, description="All, not one per change.")
    limit: int = Field(25, ge=1, le=100)
    offset: int = Field(0, ge=0)


class ReplayView(Record):
    view: str
    # A session's fields are the REST API's (id, recorded_at, status, start_url ...): said
    # there, not again in every agent's tool list.
    sessions: list[dict[str, Any]] | None = None
    run: RunRecord | None = None
    counts: dict[str, Any] | None = None
    diffs: list[dict[str, Any]] | None = None
    next_offset: int | None = None
    detail: dict[str, Any] | None = None


def _needs(value: str | None, name: str, view: str) -> str:
    if not value:
        raise InvalidInput(f"view {view} needs {name}", field=name)
    return value


def _get(call: Call, a: GetReplays) -> ReplayView:
    env, actor = call.env, call.actor
    if a.view == "sessions":
        listed = sessions.list_sessions(
            env,
            actor,
            include={"start_url", "number_user_events", "duration_seconds"},
            limit=a.limit,
            offset=a.offset,
        )
        more = len(listed.sessions) == a.limit
        return ReplayView(
            view=a.view,
            sessions=[r.model_dump(mode="json", exclude_none=True) for r in listed.sessions],
            next_offset=a.offset + a.limit if more else None,
        )
    if a.view == "run":
        if a.test_run_id is None:
            _needs(a.commit_sha, "test_run_id or commit_sha", a.view)
        with env.db.read() as s:
            run_id = runs.resolve_run(s, actor, a.test_run_id, a.commit_sha).id
        run = runs.get_test_run(env, actor, run_id)
        counts = review.get_test_run_diffs_counts(env, actor, test_run_id=run_id)
        found = review.get_test_run_diffs(
            env,
            actor,
            test_run_id=run_id,
            include_all_diffs=a.all_diffs,
            include_reviews=True,
            include_diff_ids=True,
        )
        rows = found.get("diffs")
        page = None if rows is None else rows[a.offset : a.offset + a.limit]
        more = rows is not None and len(rows) > a.offset + a.limit
        return ReplayView(
            view=a.view,
            run=run,
            counts={k: counts[k] for k in ("replays", "screenshots", "outcomes", "decisions")},
            diffs=page,
            next_offset=a.offset + a.limit if more else None,
        )
    replay_diff = _needs(a.replay_diff_id, "replay_diff_id", a.view)
    if a.view == "timeline":
        return ReplayView(view=a.view, detail=review.get_timeline_diff(env, actor, replay_diff))
    if a.view == "coverage":
        detail = cover.get_replay_diff_js_coverage_diff(
            env, actor, replay_diff, screenshot_name=a.screenshot
        )
        return ReplayView(view=a.view, detail=detail)
    name = _needs(a.screenshot, "screenshot", a.view)
    if a.view == "images":
        return ReplayView(view=a.view, detail=review.get_image_urls(env, actor, replay_diff, name))
    return ReplayView(view=a.view, detail=review.get_dom_diff(env, actor, replay_diff, name))


class ReplaySessions(BaseModel):
    base_sha: str = Field(description="The base commit.")
    deployment_id: str | None = None
    commit_sha: str | None = Field(None, description="Or a commit's latest deployment.")
    pr_number: int | None = Field(None, description="Its pull request (to deny diffs).")
    session_ids: list[str] | None = Field(None, description="Default: the chosen set.")
    git_diff_output: str | None = Field(None, description="`git diff`: sessions covering it.")
    max_duration_seconds: float | None = None
    dry_run: bool = False


TOOLS: list[ToolSpec] = [
    ToolSpec(
        "get_replays",
        "Session replays: recorded sessions, a test run (status, counts, differing screenshots "
        "with the diff_id review_diff and add_comment take), or one screenshot diff's images, "
        "DOM, timeline or JS coverage diff.",
        GetReplays,
        ReplayView,
        _get,
        read_only=True,
        operation="read_test_runs",
    ),
    ToolSpec(
        "replay_sessions",
        "Start a test run: replay sessions on a deployment and on base_sha's, compare the "
        "screenshots. Returns at once; read it with get_replays.",
        ReplaySessions,
        TriggerResult,
        lambda c, a: runs.trigger_test_run(
            c.env,
            c.actor,
            deployment_id=a.deployment_id,
            commit_sha=a.commit_sha,
            base_sha=a.base_sha,
            git_diff_output=a.git_diff_output,
            session_ids=a.session_ids,
            max_duration_seconds=a.max_duration_seconds,
            pr_number=a.pr_number,
            dry_run=a.dry_run,
        ),
        operation="trigger_test_run",
    ),
]
