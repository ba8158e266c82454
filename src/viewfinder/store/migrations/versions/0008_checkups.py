"""design checkups

- checkups: one pass of a design checkup (a ReviseMy review), its link tokens, its capture
  request while the capture job has not run, its webhook and the credits it cost.
- checkup_shots: its screenshots in order, with their boxes and DOM snapshot blobs and their
  comparison with the pass before.
- checkup_pins: what a checkup adds to its mark and finding threads (numbers, sources,
  suggested copy, answers, the agent's note and after-image).
- credit_spends: credits spent, per project and checkup.
- webhook_deliveries: review.decided events and their attempts.
- projects.checkup_allowance: checkup credits a month (none: no limit).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from viewfinder.store.models import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def _when(name: str, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("checkup_allowance", sa.Integer(), nullable=True))
    op.create_table(
        "checkups",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("parent_id", sa.String(40), sa.ForeignKey("checkups.id"), nullable=True),
        sa.Column("root_id", sa.String(40), nullable=False),
        sa.Column("pass_number", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(160), nullable=False),
        sa.Column("context", sa.Text(), nullable=True),
        sa.Column("type", sa.String(12), nullable=False),
        sa.Column("source", sa.String(10), nullable=False),
        sa.Column("page_url", sa.Text(), nullable=True),
        sa.Column("design_rules", sa.Text(), nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("decision_note", sa.Text(), nullable=True),
        _when("decided_at"),
        sa.Column("token", sa.String(64), nullable=False, unique=True),
        sa.Column("guest_token", sa.String(64), nullable=True, unique=True),
        _when("guest_expires_at"),
        _when("expires_at", nullable=False),
        sa.Column("capture_state", sa.String(10), nullable=False),
        sa.Column("capture_request", sa.JSON(), nullable=True),
        sa.Column("capture_reason", sa.Text(), nullable=True),
        sa.Column("webhook_url", sa.Text(), nullable=True),
        sa.Column("webhook_secret", sa.String(64), nullable=True),
        sa.Column("webhook_failures", sa.Integer(), nullable=False),
        _when("webhook_paused_at"),
        sa.Column("credits", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(40), nullable=False),
        _when("created_at", nullable=False),
        _when("updated_at", nullable=False),
    )
    op.create_index("ix_checkups_project_id", "checkups", ["project_id"])
    op.create_index("ix_checkups_root_id", "checkups", ["root_id"])
    op.create_table(
        "checkup_shots",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("checkup_id", sa.String(40), sa.ForeignKey("checkups.id"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("image_id", sa.String(40), sa.ForeignKey("images.id"), nullable=False),
        sa.Column("label", sa.String(40), nullable=False),
        sa.Column("origin", sa.String(20), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column("boxes_sha256", sa.String(64), nullable=True),
        sa.Column("dom_sha256", sa.String(64), nullable=True),
        sa.Column("comparison_id", sa.String(40), nullable=True),
        _when("created_at", nullable=False),
    )
    op.create_index("ix_checkup_shots_checkup_id", "checkup_shots", ["checkup_id"])
    op.create_table(
        "checkup_pins",
        sa.Column("thread_id", sa.String(40), sa.ForeignKey("threads.id"), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("checkup_id", sa.String(40), sa.ForeignKey("checkups.id"), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("screenshot_index", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(12), nullable=False),
        sa.Column("rule", sa.String(80), nullable=True),
        sa.Column("suggested_copy", sa.Text(), nullable=True),
        sa.Column("question_answer", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("after_image_id", sa.String(40), sa.ForeignKey("images.id"), nullable=True),
        sa.Column("related_pin", sa.String(40), nullable=True),
        sa.Column("accepted_as", sa.String(40), nullable=True),
        sa.Column("reopened", sa.Integer(), nullable=False),
    )
    op.create_index("ix_checkup_pins_checkup_id", "checkup_pins", ["checkup_id"])
    op.create_table(
        "credit_spends",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("checkup_id", sa.String(40), nullable=False),
        sa.Column("source", sa.String(10), nullable=False),
        sa.Column("credits", sa.Integer(), nullable=False),
        _when("spent_at", nullable=False),
    )
    op.create_index("ix_credit_spends_project_id", "credit_spends", ["project_id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("checkup_id", sa.String(40), sa.ForeignKey("checkups.id"), nullable=False),
        sa.Column("event", sa.String(40), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        _when("created_at", nullable=False),
        _when("delivered_at"),
    )
    op.create_index("ix_webhook_deliveries_checkup_id", "webhook_deliveries", ["checkup_id"])


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
    op.drop_table("credit_spends")
    op.drop_table("checkup_pins")
    op.drop_table("checkup_shots")
    op.drop_table("checkups")
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("checkup_allowance")
