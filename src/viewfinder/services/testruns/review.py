"""Reading and reviewing a test run's screenshot diffs: the list (the representative subset
by default), the counts, signed image links, DOM and timeline diffs, decisions and threads.

A screenshot diff is named by its replay diff and the screenshot's name (``after-event-3``,
``end-state``). Its threads and decision live on its comparison, as on any diff: ``reject_diff``
writes a real decision (Viewfinder's ``denied``, shown as ``rejected``); ``ignore_diff`` only
comments, because only a person accepts or ignores."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound
from viewfinder.replay.diffs import dom_diff, timeline_diff
from viewfinder.replay.model import TimelineEntry
from viewfinder.services import permissions, scoping, threads
from viewfinder.services.env import Actor, Env
from viewfinder.services.testruns.runs import resolve_run
from viewfinder.services.urls import file_url
from viewfinder.store.models import Comparison, Image, Thread, utcnow
from viewfinder.store.replay_models import (
    Replay,
    ReplayDiff,
    ReplayRun,
    ReplayScreenshot,
    ScreenshotDiff,
)

OUTCOMES = ("no-diff", "diff", "missing-base", "missing-head", "different-size", "flake")
DECISIONS = {"pending": "unreviewed", "accepted": "accepted", "denied": "rejected"}
DIFFERING = ("diff", "different-size", "missing-base", "missing-head", "flake")


def decision_of(comparison: Comparison | None) -> str:
    if comparison is None:
        return "unreviewed"
    return DECISIONS.get(comparison.decision, comparison.decision)


def open_comments(s: Session, comparison_id: str | None) -> int:
    if comparison_id is None:
        return 0
    return int(
        s.scalar(
            select(func.count(Thread.id)).where(
                Thread.subject_type == "diff",
                Thread.subject_id == comparison_id,
                Thread.parent_id.is_(None),
                Thread.status.in_(("open", "in_progress")),
            )
        )
        or 0
    )


def _status(run: ReplayRun) -> dict[str, Any] | None:
    if run.state == "processing":
        return {"status": "processing"}
    if run.state == "failed":
        return {"status": "failed", "reason": run.reason or "the run failed"}
    return None


def get_test_run_diffs(
    env: Env,
    actor: Actor,
    *,
    test_run_id: str | None = None,
    commit_sha: str | None = None,
    include_all_diffs: bool = False,
    only_unreviewed: bool = False,
    only_rejected: bool = False,
    only_with_comments: bool = False,
    include_reviews: bool = False,
    include_replay_ids: bool = False,
    include_mismatch_fraction: bool = False,
    include_dom_diff_ids: bool = False,
    order_by_replay_diffs: bool = False,
    include_diff_ids: bool = False,
) -> dict[str, Any]:
    """``{status: processing}`` while the run computes, ``{status: failed, reason}``, or
    ``{status: complete, testRunId, diffs}``: the representative subset (one screenshot per
    distinct DOM change, likely regressions first), or every differing screenshot with
    ``isSelected`` when all are asked for. The ``only*`` flags widen to their union.
    ``include_diff_ids`` adds ``diffId``, the pair's comparison, which the default profile's
    review and comment tools take."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        run = resolve_run(s, actor, test_run_id, commit_sha)
        early = _status(run)
        if early is not None:
            return early
        filters = only_unreviewed or only_rejected or only_with_comments
        everything = include_all_diffs or filters
        query = select(ScreenshotDiff, ReplayDiff).join(
            ReplayDiff, ReplayDiff.id == ScreenshotDiff.replay_diff_id
        )
        query = query.where(ScreenshotDiff.test_run_id == run.id)
        if order_by_replay_diffs:
            query = query.order_by(ReplayDiff.id, ScreenshotDiff.position)
        else:
            query = query.order_by(ScreenshotDiff.rank, ScreenshotDiff.id)
        rows: list[dict[str, Any]] = []
        for shot, diff in s.execute(query).all():
            if shot.outcome not in DIFFERING:
                continue
            if not everything and not shot.representative:
                continue
            comparison = s.get(Comparison, shot.comparison_id) if shot.comparison_id else None
            decision = decision_of(comparison)
            comments = open_comments(s, shot.comparison_id)
            if filters and not (
                (only_unreviewed and decision == "unreviewed")
                or (only_rejected and decision == "rejected")
                or (only_with_comments and comments > 0)
            ):
                continue
            row: dict[str, Any] = {
                "replayDiffId": diff.id,
                "screenshotName": shot.name,
                "outcome": shot.outcome,
                "sessionId": diff.session_id,
            }
            if everything:
                row["isSelected"] = shot.representative
            if include_reviews:
                row["decision"] = decision
                row["openComments"] = comments
            if include_replay_ids:
                row["baseReplayId"] = diff.base_replay_id
                row["headReplayId"] = diff.head_replay_id
            if include_mismatch_fraction:
                row["mismatchFraction"] = shot.mismatch
            if include_dom_diff_ids:
                row["domDiffId"] = shot.dom_key[:16] if shot.dom_key else None
            if include_diff_ids:
                row["diffId"] = shot.comparison_id
            if shot.outcome in ("missing-base", "missing-head"):
                row["reason"] = _missing_reason(s, diff, shot.outcome)
            rows.append(row)
        return {"status": "complete", "testRunId": run.id, "diffs": rows}


def _missing_reason(s: Session, diff: ReplayDiff, outcome: str) -> str:
    """Why a screenshot has no counterpart: no base deployment, a replay that failed, or a
    replay that took fewer screenshots (the session went differently)."""
    replay_id = diff.base_replay_id if outcome == "missing-base" else diff.head_replay_id
    side = "base" if outcome == "missing-base" else "head"
    if replay_id is None:
        return "the base commit has no deployment: upload its build, then run again"
    replay = s.get(Replay, replay_id)
    if replay is not None and replay.state == "failed":
        return f"the {side} replay failed ({replay.reason})"
    if replay is not None and replay.state == "stopped":
        return f"the {side} replay was {replay.reason}"
    return f"the {side} replay took no screenshot of that name (its events went otherwise)"


def get_test_run_diffs_counts(
    env: Env, actor: Actor, *, test_run_id: str | None = None, commit_sha: str | None = None
) -> dict[str, Any]:
    """Totals of a run: replays, screenshots, differences, the six outcomes and the review
    decisions; partial while the run is in progress."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        run = resolve_run(s, actor, test_run_id, commit_sha)
        outcomes = dict.fromkeys(OUTCOMES, 0)
        decisions = dict.fromkeys(("accepted", "rejected", "ignored", "unreviewed"), 0)
        total = 0
        for shot in s.scalars(select(ScreenshotDiff).where(ScreenshotDiff.test_run_id == run.id)):
            total += 1
            if shot.outcome in outcomes:
                outcomes[shot.outcome] += 1
            if shot.outcome in DIFFERING:
                comparison = s.get(Comparison, shot.comparison_id) if shot.comparison_id else None
                decisions[decision_of(comparison)] += 1
        replays = s.scalar(
            select(func.count(ReplayDiff.id)).where(ReplayDiff.test_run_id == run.id)
        )
        return {
            "testRunId": run.id,
            "status": run.state,
            "replays": int(replays or 0),
            "screenshots": total,
            "differences": sum(outcomes[o] for o in DIFFERING),
            "outcomes": outcomes,
            "decisions": decisions,
        }


def _shot_diff(s: Session, actor: Actor, replay_diff_id: str, name: Any) -> ScreenshotDiff:
    if not isinstance(name, str) or not name:
        raise InvalidInput("screenshotName is end-state or after-event-N", field="screenshotName")
    diff = scoping.owned(s, ReplayDiff, replay_diff_id, actor, "replay diff")
    row = s.scalar(
        select(ScreenshotDiff).where(
            ScreenshotDiff.replay_diff_id == diff.id, ScreenshotDiff.name == name
        )
    )
    if row is None:
        names = s.scalars(
            select(ScreenshotDiff.name)
            .where(ScreenshotDiff.replay_diff_id == diff.id)
            .order_by(ScreenshotDiff.position)
        ).all()
        shown = ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")
        raise NotFound(
            f"replay diff {replay_diff_id} has no screenshot {name!r}"
            + (f" (it has {shown})" if names else " (it has not been compared yet)"),
            screenshot_name=name,
        )
    return row


def _shot(s: Session, shot_id: str | None) -> ReplayScreenshot | None:
    return s.get(ReplayScreenshot, shot_id) if shot_id else None


def _image_url(env: Env, s: Session, image_id: str | None) -> str | None:
    image = s.get(Image, image_id) if image_id else None
    return file_url(env, image.sha256) if image else None


def get_image_urls(
    env: Env, actor: Actor, replay_diff_id: str, screenshot_name: str
) -> dict[str, Any]:
    """The outcome and signed links to the before, after and diff images."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        row = _shot_diff(s, actor, replay_diff_id, screenshot_name)
        base, head = _shot(s, row.base_shot_id), _shot(s, row.head_shot_id)
        comparison = s.get(Comparison, row.comparison_id) if row.comparison_id else None
        out = {
            "outcome": row.outcome,
            "before": _image_url(env, s, base.image_id if base else None),
            "after": _image_url(env, s, head.image_id if head else None),
            "diffImage": (
                file_url(env, comparison.diff_sha256)
                if comparison is not None and comparison.diff_sha256
                else None
            ),
        }
        if row.retake_image_id:
            out["retake"] = _image_url(env, s, row.retake_image_id)
        return out


def get_dom_diff(
    env: Env, actor: Actor, replay_diff_id: str, screenshot_name: str, context: Any = 3
) -> dict[str, Any]:
    """The DOM at that screenshot, base vs head, as ``[diff N]`` hunks (indentation
    stripped); ``context`` lines around each, or ``full``."""
    permissions.require(actor, "read_test_runs")
    if context == "full":
        lines: int | None = None
    elif isinstance(context, int) and not isinstance(context, bool) and 0 <= context <= 1000:
        lines = context
    else:
        raise InvalidInput("context is a number of lines (0-1000) or full", field="context")
    with env.db.read() as s:
        row = _shot_diff(s, actor, replay_diff_id, screenshot_name)
        base, head = _shot(s, row.base_shot_id), _shot(s, row.head_shot_id)
        if base is None or head is None:
            return {"outcome": row.outcome, "diff": "", "hunks": 0}
        text = dom_diff(base.dom, head.dom, lines)
        return {"outcome": row.outcome, "diff": text, "hunks": text.count("[diff ")}


def _timeline(replay: Replay | None) -> list[TimelineEntry]:
    return [TimelineEntry.from_json(e) for e in replay.timeline] if replay else []


def get_timeline_diff(env: Env, actor: Actor, replay_diff_id: str) -> dict[str, Any]:
    """The two replays' timelines aligned: rows ``diff`` (same, removed, added, changed),
    ``timeMs``, ``event``, ``description``."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        diff = scoping.owned(s, ReplayDiff, replay_diff_id, actor, "replay diff")
        base = s.get(Replay, diff.base_replay_id) if diff.base_replay_id else None
        head = s.get(Replay, diff.head_replay_id)
        return {
            "replayDiffId": diff.id,
            "rows": timeline_diff(_timeline(base), _timeline(head)),
        }


# ---- decisions and threads -----------------------------------------------------------------


def _comparison_id(s: Session, actor: Actor, replay_diff_id: str, name: str) -> str:
    row = _shot_diff(s, actor, replay_diff_id, name)
    if row.comparison_id is None:
        raise Conflict(
            f"screenshot {name} of replay diff {replay_diff_id} is {row.outcome}: there is no "
            "pair of screenshots to review or comment on",
            outcome=row.outcome,
        )
    return row.comparison_id


def _rejectable(s: Session, actor: Actor, replay_diff_id: str, name: str) -> str:
    """The comparison of a screenshot diff that may be rejected: its run must belong to a pull
    request (a rejection is a verdict on one; a branch's run has none to give it to)."""
    row = _shot_diff(s, actor, replay_diff_id, name)
    run = s.get(ReplayRun, row.test_run_id)
    if run is not None and run.pr_number is None:
        raise Conflict(
            f"test run {run.id} belongs to no pull request, so its diffs cannot be rejected: "
            "trigger the pull request's run with its number (prNumber, pr_number or --pr), or "
            "say what is wrong in a comment",
            test_run_id=run.id,
        )
    return _comparison_id(s, actor, replay_diff_id, name)


def _point(x: Any, y: Any) -> dict[str, Any]:
    for name, value in (("x", x), ("y", y)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InvalidInput(f"{name} is a fraction of the image, 0 to 1", field=name)
    return {"type": "point", "x": float(x), "y": float(y)}


def reject_diff(
    env: Env, actor: Actor, replay_diff_id: str, screenshot_name: str, reason: str, x: Any, y: Any
) -> dict[str, Any]:
    """Reject a screenshot diff: a real decision (the same as a person's, replacing the one
    before) and a comment at (x, y) saying why. The identical call again changes nothing."""
    permissions.require(actor, "review_diff")
    anchor = _point(x, y)
    body = threads.check_body(reason)
    with env.db.write() as s:
        comparison_id = _rejectable(s, actor, replay_diff_id, screenshot_name)
        row = s.get(Comparison, comparison_id, with_for_update=True)
        assert row is not None
        repeated = row.decision == "denied" and row.decided_by == actor.key_id
        same_comment = s.scalar(
            select(Thread.id).where(
                Thread.subject_type == "diff",
                Thread.subject_id == comparison_id,
                Thread.author_key_id == actor.key_id,
                Thread.body == body,
                Thread.parent_id.is_(None),
            )
        )
        if repeated and same_comment is not None:
            return {}
        row.decision = "denied"
        row.decided_by = actor.key_id
        row.decided_at = utcnow()
    if same_comment is None:
        threads.create_thread(env, actor, threads.On("diff", comparison_id), body, anchor=anchor)
    return {}


PERSON_DECISIONS = {"accept": "accepted", "reject": "denied", "ignore": "ignored"}


def decide(
    env: Env, actor: Actor, replay_diff_id: str, screenshot_name: str, decision: str
) -> dict[str, Any]:
    """A person's decision on a screenshot diff: accept (intended), reject (a regression) or
    ignore (noise, a flake). Agents reject with reject_diff and may not accept or ignore.
    Refused while the screenshot diff has an open comment thread, except reject."""
    permissions.require(actor, "review_diff")
    if decision not in PERSON_DECISIONS:
        raise InvalidInput("decision is accept, reject or ignore", field="decision")
    if decision != "reject" and actor.is_agent:
        raise Forbidden(
            f"only a person may {decision} a screenshot diff: reject it with a reason "
            "(reject_diff) or say why it looks ignorable (ignore_diff), and a person decides"
        )
    with env.db.write() as s:
        if decision == "reject":
            comparison_id = _rejectable(s, actor, replay_diff_id, screenshot_name)
        else:
            comparison_id = _comparison_id(s, actor, replay_diff_id, screenshot_name)
        if decision != "reject" and open_comments(s, comparison_id):
            raise Conflict(
                f"screenshot {screenshot_name} of {replay_diff_id} has open comment threads: "
                "resolve them first (reject always works)"
            )
        row = s.get(Comparison, comparison_id, with_for_update=True)
        assert row is not None
        row.decision = PERSON_DECISIONS[decision]
        row.decided_by = actor.key_id
        row.decided_at = utcnow()
        return {"decision": decision_of(row)}


def screenshot_of(env: Env, actor: Actor, comparison_id: str) -> tuple[str, str]:
    """The replay diff and screenshot name whose pair a comparison (owner kind ``replay``)
    compared, so that a decision made on the comparison keeps to the rules above. Raises
    NotFound."""
    with env.db.read() as s:
        row = s.scalar(
            select(ScreenshotDiff).where(
                ScreenshotDiff.comparison_id == comparison_id,
                ScreenshotDiff.project_id == actor.project_id,
            )
        )
        if row is None:
            raise NotFound(f"no diff {comparison_id!r} in this project", diff_id=comparison_id)
        return row.replay_diff_id, row.name


def ignore_diff(
    env: Env, actor: Actor, replay_diff_id: str, screenshot_name: str, reason: str, x: Any, y: Any
) -> dict[str, Any]:
    """Comment why a screenshot diff looks ignorable; decides nothing (only a person accepts
    or ignores). Every call posts a new comment."""
    permissions.require(actor, "comment")
    anchor = _point(x, y)
    with env.db.read() as s:
        comparison_id = _comparison_id(s, actor, replay_diff_id, screenshot_name)
    threads.create_thread(env, actor, threads.On("diff", comparison_id), reason, anchor=anchor)
    return {}


def create_diff_comment(
    env: Env, actor: Actor, replay_diff_id: str, screenshot_name: str, text: str, x: Any, y: Any
) -> dict[str, Any]:
    permissions.require(actor, "comment")
    anchor = _point(x, y)
    with env.db.read() as s:
        comparison_id = _comparison_id(s, actor, replay_diff_id, screenshot_name)
    made = threads.create_thread(env, actor, threads.On("diff", comparison_id), text, anchor=anchor)
    return {"commentId": made.id}


def reply_to_diff_comment(env: Env, actor: Actor, comment_id: str, text: str) -> dict[str, Any]:
    permissions.require(actor, "comment")
    made = threads.reply(env, actor, comment_id, text)
    return {"commentId": made.id}


def _comment(record: threads.ThreadRecord, x: float | None, y: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": record.id,
        "isAgentAuthored": record.author.is_agent,
        "text": record.body,
        "x": x,
        "y": y,
    }
    if not record.author.is_agent or record.author.name:
        out["author"] = record.author.name
    return out


def get_diff_comments(
    env: Env,
    actor: Actor,
    replay_diff_id: str,
    screenshot_name: str,
    include_resolved: bool = False,
) -> dict[str, Any]:
    """Open comments oldest first with their replies (oldest first; replies repeat the
    parent's x, y); resolved ones too with ``include_resolved`` (and ``isResolved``)."""
    permissions.require(actor, "list_comments")
    with env.db.read() as s:
        comparison_id = _comparison_id(s, actor, replay_diff_id, screenshot_name)
    found = threads.list_comments(env, actor, comparison_id)
    comments = []
    for record in found:
        resolved = not record.unresolved
        if resolved and not include_resolved:
            continue
        anchor = record.anchor.model_dump() if record.anchor is not None else {}
        x, y = anchor.get("x"), anchor.get("y")
        item = _comment(record, x, y)
        item["replies"] = [_comment(r, x, y) for r in record.replies]
        if include_resolved:
            item["isResolved"] = resolved
        comments.append(item)
    return {"comments": comments}
