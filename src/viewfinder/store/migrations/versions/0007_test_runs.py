"""test runs: sessions replayed on a deployment and its base, compared screenshot by screenshot

- test_runs: a run (head or base) of chosen sessions on a deployment, processing -> complete|failed
- replays: one session on one deployment by one engine version (reused by later runs)
- replay_shots: a replay's screenshots with their normalised DOM and JS coverage
- replay_diffs, replay_shot_diffs: a session's base and head replays and each screenshot's outcome
- test_run_checks: built-in and custom checks with Markdown reports
- feedback: what agents and people tell the server's admins

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from viewfinder.store.models import UTCDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "feedback",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("key_id", sa.String(length=40), nullable=False),
        sa.Column("author_name", sa.String(length=100), nullable=False),
        sa.Column("is_agent", sa.Boolean(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("outcome", sa.String(length=10), nullable=True),
        sa.Column("test_run_id", sa.String(length=40), nullable=True),
        sa.Column("skill", sa.String(length=100), nullable=True),
        sa.Column("agent_name", sa.String(length=100), nullable=True),
        sa.Column("agent_model", sa.String(length=100), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "test_runs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("deployment_id", sa.String(length=40), nullable=False),
        sa.Column("commit_sha", sa.String(length=64), nullable=False),
        sa.Column("base_sha", sa.String(length=64), nullable=True),
        sa.Column("base_deployment_id", sa.String(length=40), nullable=True),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("phase", sa.String(length=12), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("session_ids", sa.JSON(), nullable=False),
        sa.Column("selection", sa.String(length=12), nullable=False),
        sa.Column("changed_lines", sa.JSON(), nullable=True),
        sa.Column("max_duration", sa.Float(), nullable=True),
        sa.Column("engine_version", sa.String(length=20), nullable=False),
        sa.Column("created_by", sa.String(length=40), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_test_runs_commit", "test_runs", ["project_id", "commit_sha", "created_at"], unique=False
    )
    op.create_table(
        "replays",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("test_run_id", sa.String(length=40), nullable=False),
        sa.Column("session_id", sa.String(length=40), nullable=False),
        sa.Column("deployment_id", sa.String(length=40), nullable=False),
        sa.Column("engine_version", sa.String(length=20), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("timeline", sa.JSON(), nullable=False),
        sa.Column("facts", sa.JSON(), nullable=False),
        sa.Column("coverage", sa.JSON(), nullable=False),
        sa.Column("steps", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
        ),
        sa.ForeignKeyConstraint(
            ["test_run_id"],
            ["test_runs.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_replays_reuse",
        "replays",
        ["project_id", "deployment_id", "session_id", "engine_version"],
        unique=False,
    )
    op.create_index(op.f("ix_replays_test_run_id"), "replays", ["test_run_id"], unique=False)
    op.create_table(
        "test_run_checks",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("test_run_id", sa.String(length=40), nullable=False),
        sa.Column("check_id", sa.String(length=80), nullable=False),
        sa.Column("check_type", sa.String(length=10), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("reported_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
        ),
        sa.ForeignKeyConstraint(
            ["test_run_id"],
            ["test_runs.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_test_run_checks_run",
        "test_run_checks",
        ["test_run_id", "check_type", "check_id"],
        unique=False,
    )
    op.create_table(
        "replay_diffs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("test_run_id", sa.String(length=40), nullable=False),
        sa.Column("session_id", sa.String(length=40), nullable=False),
        sa.Column("base_replay_id", sa.String(length=40), nullable=True),
        sa.Column("head_replay_id", sa.String(length=40), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["base_replay_id"],
            ["replays.id"],
        ),
        sa.ForeignKeyConstraint(
            ["head_replay_id"],
            ["replays.id"],
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
        ),
        sa.ForeignKeyConstraint(
            ["test_run_id"],
            ["test_runs.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_replay_diffs_test_run_id"), "replay_diffs", ["test_run_id"], unique=False
    )
    op.create_table(
        "replay_shots",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("replay_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("image_id", sa.String(length=40), nullable=False),
        sa.Column("time_ms", sa.Integer(), nullable=False),
        sa.Column("dom", sa.Text(), nullable=False),
        sa.Column("coverage", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["image_id"],
            ["images.id"],
        ),
        sa.ForeignKeyConstraint(
            ["replay_id"],
            ["replays.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_replay_shots_replay", "replay_shots", ["replay_id", "name"], unique=False)
    op.create_table(
        "replay_shot_diffs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("test_run_id", sa.String(length=40), nullable=False),
        sa.Column("replay_diff_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=20), nullable=True),
        sa.Column("comparison_id", sa.String(length=40), nullable=True),
        sa.Column("base_shot_id", sa.String(length=40), nullable=True),
        sa.Column("head_shot_id", sa.String(length=40), nullable=True),
        sa.Column("retake_image_id", sa.String(length=40), nullable=True),
        sa.Column("mismatch", sa.Float(), nullable=True),
        sa.Column("dom_changes", sa.Integer(), nullable=False),
        sa.Column("dom_key", sa.String(length=64), nullable=True),
        sa.Column("representative", sa.Boolean(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["base_shot_id"],
            ["replay_shots.id"],
        ),
        sa.ForeignKeyConstraint(
            ["comparison_id"],
            ["comparisons.id"],
        ),
        sa.ForeignKeyConstraint(
            ["head_shot_id"],
            ["replay_shots.id"],
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
        ),
        sa.ForeignKeyConstraint(
            ["replay_diff_id"],
            ["replay_diffs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["retake_image_id"],
            ["images.id"],
        ),
        sa.ForeignKeyConstraint(
            ["test_run_id"],
            ["test_runs.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_replay_shot_diffs_comparison_id"),
        "replay_shot_diffs",
        ["comparison_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_replay_shot_diffs_replay_diff_id"),
        "replay_shot_diffs",
        ["replay_diff_id"],
        unique=False,
    )
    op.create_index(
        "ix_replay_shot_diffs_run", "replay_shot_diffs", ["test_run_id", "rank"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_replay_shot_diffs_run", table_name="replay_shot_diffs")
    op.drop_index(op.f("ix_replay_shot_diffs_replay_diff_id"), table_name="replay_shot_diffs")
    op.drop_index(op.f("ix_replay_shot_diffs_comparison_id"), table_name="replay_shot_diffs")
    op.drop_table("replay_shot_diffs")
    op.drop_index("ix_replay_shots_replay", table_name="replay_shots")
    op.drop_table("replay_shots")
    op.drop_index(op.f("ix_replay_diffs_test_run_id"), table_name="replay_diffs")
    op.drop_table("replay_diffs")
    op.drop_index("ix_test_run_checks_run", table_name="test_run_checks")
    op.drop_table("test_run_checks")
    op.drop_index(op.f("ix_replays_test_run_id"), table_name="replays")
    op.drop_index("ix_replays_reuse", table_name="replays")
    op.drop_table("replays")
    op.drop_index("ix_test_runs_commit", table_name="test_runs")
    op.drop_table("test_runs")
    op.drop_table("feedback")
