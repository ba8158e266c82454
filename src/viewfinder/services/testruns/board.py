"""A test run as the dashboard shows it: each differing screenshot with its images, its DOM
diff, its decision and its comment threads, and each session's timeline changes. One call,
for one page."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import select

from viewfinder.replay.diffs import dom_diff, timeline_diff
from viewfinder.replay.model import TimelineEntry
from viewfinder.services import permissions, threads
from viewfinder.services.env import Actor, Env
from viewfinder.services.testruns.review import DIFFERING, decision_of, open_comments
from viewfinder.services.testruns.runs import RunRecord, get_run_row, run_record
from viewfinder.services.threads import ThreadRecord
from viewfinder.store.models import Comparison
from viewfinder.store.replay_models import Replay, ReplayDiff, ReplayScreenshot, ScreenshotDiff


@dataclass(frozen=True)
class ShotRow:
    replay_diff_id: str
    session_id: str
    name: str
    outcome: str
    selected: bool
    decision: str
    open_comments: int
    diff_id: str | None  # the comparison: its diff image, threads and decision
    before_image_id: str | None
    after_image_id: str | None
    dom: str
    threads: list[ThreadRecord] = field(default_factory=list)


@dataclass(frozen=True)
class SessionChanges:
    replay_diff_id: str
    session_id: str
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class RunBoard:
    run: RunRecord
    shots: list[ShotRow]
    sessions: list[SessionChanges]


def _timeline(replay: Replay | None) -> list[TimelineEntry]:
    return [TimelineEntry.from_json(e) for e in replay.timeline] if replay else []


def run_board(env: Env, actor: Actor, test_run_id: str) -> RunBoard:
    """Raises NotFound."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        run = get_run_row(s, actor, test_run_id)
        shots: list[ShotRow] = []
        query = (
            select(ScreenshotDiff, ReplayDiff)
            .join(ReplayDiff, ReplayDiff.id == ScreenshotDiff.replay_diff_id)
            .where(ScreenshotDiff.test_run_id == run.id)
            .order_by(ScreenshotDiff.rank, ScreenshotDiff.id)
        )
        for shot, diff in s.execute(query).all():
            if shot.outcome not in DIFFERING:
                continue
            base = s.get(ReplayScreenshot, shot.base_shot_id) if shot.base_shot_id else None
            head = s.get(ReplayScreenshot, shot.head_shot_id) if shot.head_shot_id else None
            comparison = s.get(Comparison, shot.comparison_id) if shot.comparison_id else None
            shots.append(
                ShotRow(
                    replay_diff_id=diff.id,
                    session_id=diff.session_id,
                    name=shot.name,
                    outcome=shot.outcome or "",
                    selected=shot.representative,
                    decision=decision_of(comparison),
                    open_comments=open_comments(s, shot.comparison_id),
                    diff_id=shot.comparison_id,
                    before_image_id=base.image_id if base else None,
                    after_image_id=head.image_id if head else None,
                    dom=dom_diff(base.dom, head.dom) if base and head else "",
                )
            )
        sessions = []
        for diff in s.scalars(
            select(ReplayDiff).where(ReplayDiff.test_run_id == run.id).order_by(ReplayDiff.id)
        ):
            base_replay = s.get(Replay, diff.base_replay_id) if diff.base_replay_id else None
            head_replay = s.get(Replay, diff.head_replay_id)
            rows = timeline_diff(_timeline(base_replay), _timeline(head_replay), include_same=False)
            sessions.append(SessionChanges(diff.id, diff.session_id, rows))
        record = run_record(run)
    # The threads (with what this viewer may do to each) as the story page reads them.
    shots = [
        replace(row, threads=threads.list_comments(env, actor, row.diff_id)) if row.diff_id else row
        for row in shots
    ]
    return RunBoard(record, shots, sessions)
