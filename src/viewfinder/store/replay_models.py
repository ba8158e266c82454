"""The schema of test runs: recorded sessions replayed on a head deployment and on its base,
their screenshots, the diffs between the two, the checks of a run and feedback from agents.

Sessions and deployments are the recorder's (their ids are kept here as plain strings, so that
the two halves migrate independently); screenshots are ``images`` rows and each screenshot pair
is a ``comparisons`` row owned by ``replay``, so that threads and decisions work on them as on
any diff.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from viewfinder.store.models import Base, utcnow


class ReplayRun(Base):
    """Sessions replayed on a deployment (``head``) and compared with the replays of the same
    sessions on the base commit's deployment. A ``base`` run only replays (complete_base_run).
    ``state`` processing -> complete | failed (``reason``)."""

    __tablename__ = "test_runs"
    __table_args__ = (Index("ix_test_runs_commit", "project_id", "commit_sha", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    kind: Mapped[str] = mapped_column(String(10), default="head")
    deployment_id: Mapped[str] = mapped_column(String(40))
    commit_sha: Mapped[str] = mapped_column(String(64))
    base_sha: Mapped[str | None] = mapped_column(String(64))
    base_deployment_id: Mapped[str | None] = mapped_column(String(40))
    # The pull request the run tests, when it tests one: only such a run's diffs can be
    # rejected (a rejection is a verdict on a pull request).
    pr_number: Mapped[int | None] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(12), default="processing")
    phase: Mapped[str] = mapped_column(String(12), default="replaying")
    reason: Mapped[str | None] = mapped_column(Text)
    session_ids: Mapped[list[Any]] = mapped_column(default=list)
    selection: Mapped[str] = mapped_column(String(12), default="chosen")
    changed_lines: Mapped[dict[str, Any] | None]
    max_duration: Mapped[float | None] = mapped_column(Float)
    engine_version: Mapped[str] = mapped_column(String(20))
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None]


class Replay(Base):
    """One session played on one deployment by one engine version; a done replay is reused by
    later runs that need the same three. ``facts`` holds what the page did that the recording
    did not (unrecorded calls, failed requests, console errors, exceptions, notes)."""

    __tablename__ = "replays"
    __table_args__ = (
        Index("ix_replays_reuse", "project_id", "deployment_id", "session_id", "engine_version"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    test_run_id: Mapped[str] = mapped_column(ForeignKey("test_runs.id"), index=True)
    session_id: Mapped[str] = mapped_column(String(40))
    deployment_id: Mapped[str] = mapped_column(String(40))
    engine_version: Mapped[str] = mapped_column(String(20))
    # pending | done | failed | stopped (the run's time limit passed: what it took is kept,
    # and it is never reused)
    state: Mapped[str] = mapped_column(String(10), default="pending")
    reason: Mapped[str | None] = mapped_column(Text)
    timeline: Mapped[list[Any]] = mapped_column(default=list)
    facts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    coverage: Mapped[list[Any]] = mapped_column(default=list)
    steps: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None]


class ReplayScreenshot(Base):
    """A screenshot of a replay (``after-event-N`` or ``end-state``) with the page's normalised
    DOM and the JavaScript that ran since the screenshot before."""

    __tablename__ = "replay_shots"
    __table_args__ = (Index("ix_replay_shots_replay", "replay_id", "name"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    replay_id: Mapped[str] = mapped_column(ForeignKey("replays.id"))
    name: Mapped[str] = mapped_column(String(40))
    position: Mapped[int] = mapped_column(Integer)
    image_id: Mapped[str] = mapped_column(ForeignKey("images.id"))
    time_ms: Mapped[int] = mapped_column(Integer, default=0)
    dom: Mapped[str] = mapped_column(Text)
    coverage: Mapped[list[Any]] = mapped_column(default=list)


class ReplayDiff(Base):
    """One session of a run: its base replay beside its head replay."""

    __tablename__ = "replay_diffs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    test_run_id: Mapped[str] = mapped_column(ForeignKey("test_runs.id"), index=True)
    session_id: Mapped[str] = mapped_column(String(40))
    base_replay_id: Mapped[str | None] = mapped_column(ForeignKey("replays.id"))
    head_replay_id: Mapped[str] = mapped_column(ForeignKey("replays.id"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ScreenshotDiff(Base):
    """A screenshot of a replay diff compared: ``outcome`` no-diff, diff, missing-base,
    missing-head, different-size or flake (None while compared). ``comparison_id`` is the
    comparison of the pair (owner kind ``replay``), the subject of its threads and decision.
    ``dom_key`` names its DOM change, so that the screenshots showing the same change are
    grouped and one of them (``representative``) stands for the group."""

    __tablename__ = "replay_shot_diffs"
    __table_args__ = (Index("ix_replay_shot_diffs_run", "test_run_id", "rank"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    test_run_id: Mapped[str] = mapped_column(ForeignKey("test_runs.id"))
    replay_diff_id: Mapped[str] = mapped_column(ForeignKey("replay_diffs.id"), index=True)
    name: Mapped[str] = mapped_column(String(40))
    position: Mapped[int] = mapped_column(Integer)
    outcome: Mapped[str | None] = mapped_column(String(20))
    comparison_id: Mapped[str | None] = mapped_column(ForeignKey("comparisons.id"), index=True)
    base_shot_id: Mapped[str | None] = mapped_column(ForeignKey("replay_shots.id"))
    head_shot_id: Mapped[str | None] = mapped_column(ForeignKey("replay_shots.id"))
    retake_image_id: Mapped[str | None] = mapped_column(ForeignKey("images.id"))
    mismatch: Mapped[float | None] = mapped_column(Float)
    dom_changes: Mapped[int] = mapped_column(Integer, default=0)
    dom_key: Mapped[str | None] = mapped_column(String(64))
    representative: Mapped[bool] = mapped_column(Boolean, default=False)
    rank: Mapped[int] = mapped_column(Integer, default=0)


class ReplayRunCheck(Base):
    """A non-visual check of a run: built in (computed from the replays) or custom (posted by
    CI). ``state`` processing -> complete (``text``, Markdown) | failed (``reason``)."""

    __tablename__ = "test_run_checks"
    __table_args__ = (Index("ix_test_run_checks_run", "test_run_id", "check_type", "check_id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    test_run_id: Mapped[str] = mapped_column(ForeignKey("test_runs.id"))
    check_id: Mapped[str] = mapped_column(String(80))
    check_type: Mapped[str] = mapped_column(String(10))
    state: Mapped[str] = mapped_column(String(12), default="processing")
    text: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    reported_at: Mapped[datetime | None]


class Feedback(Base):
    """Free-form feedback an agent or a person sent about Viewfinder, for the server's admins."""

    __tablename__ = "feedback"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    key_id: Mapped[str] = mapped_column(String(40))
    author_name: Mapped[str] = mapped_column(String(100))
    is_agent: Mapped[bool] = mapped_column(Boolean, default=False)
    message: Mapped[str] = mapped_column(Text)
    outcome: Mapped[str | None] = mapped_column(String(10))
    test_run_id: Mapped[str | None] = mapped_column(String(40))
    skill: Mapped[str | None] = mapped_column(String(100))
    agent_name: Mapped[str | None] = mapped_column(String(100))
    agent_model: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
