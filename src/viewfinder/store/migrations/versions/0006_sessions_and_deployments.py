"""sessions and deployments

- projects.record_origins: the origins whose pages may send recorded sessions (null: any).
- recorded_sessions, session_batches, session_urls: sessions recorded by recorder.js, batch
  by batch, and the URLs each visited.
- deployments, deployment_uploads: builds that sessions are replayed on, and their uploads.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import viewfinder.store.models

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _when(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, viewfinder.store.models.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("record_origins", sa.JSON(), nullable=True))
    op.create_table(
        "recorded_sessions",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("client_key", sa.String(64), nullable=False),
        sa.Column("recorded_by", sa.String(200), nullable=True),
        sa.Column("key_id", sa.String(40), nullable=False),
        sa.Column("start", sa.JSON(), nullable=True),
        sa.Column("start_url", sa.Text(), nullable=True),
        _when("recorded_at"),
        _when("created_at"),
        _when("updated_at"),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("synthetic", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("urls", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("batches", sa.Integer(), nullable=False),
    )
    op.create_index(
        "ix_recorded_sessions_client",
        "recorded_sessions",
        ["project_id", "client_key"],
        unique=True,
    )
    op.create_index("ix_recorded_sessions_project", "recorded_sessions", ["project_id", "id"])
    op.create_table(
        "session_batches",
        sa.Column(
            "session_id",
            sa.String(40),
            sa.ForeignKey("recorded_sessions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        _when("created_at"),
    )
    op.create_table(
        "session_urls",
        sa.Column(
            "session_id",
            sa.String(40),
            sa.ForeignKey("recorded_sessions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("url", sa.String(1000), primary_key=True),
    )
    op.create_table(
        "deployments",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("commit_sha", sa.String(40), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("rewrites", sa.JSON(), nullable=False),
        sa.Column("files", sa.Integer(), nullable=True),
        sa.Column("unpacked_bytes", sa.BigInteger(), nullable=True),
        sa.Column("container", sa.JSON(), nullable=True),
        sa.Column("created_by", sa.String(40), nullable=False),
        _when("created_at"),
    )
    op.create_index("ix_deployments_commit", "deployments", ["project_id", "commit_sha", "id"])
    op.create_table(
        "deployment_uploads",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=True),
        sa.Column("deployment_id", sa.String(40), nullable=True),
        sa.Column("created_by", sa.String(40), nullable=False),
        _when("created_at"),
        _when("expires_at"),
    )


def downgrade() -> None:
    op.drop_table("deployment_uploads")
    op.drop_index("ix_deployments_commit", "deployments")
    op.drop_table("deployments")
    op.drop_table("session_urls")
    op.drop_table("session_batches")
    op.drop_index("ix_recorded_sessions_project", "recorded_sessions")
    op.drop_index("ix_recorded_sessions_client", "recorded_sessions")
    op.drop_table("recorded_sessions")
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("record_origins")
