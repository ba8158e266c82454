"""change analysis: each comparison's analysis, stories ranked by its verdict, and the
project setting that lets rendering noise count as unchanged

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 15:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(
            sa.Column("ignore_noise", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    with op.batch_alter_table("comparisons") as batch:
        batch.add_column(sa.Column("analysis", sa.JSON(), nullable=True))
    with op.batch_alter_table("stories") as batch:
        batch.add_column(
            sa.Column("rank", sa.Integer(), nullable=False, server_default=sa.text("1"))
        )
        batch.drop_index("ix_stories_build_state")
        batch.create_index("ix_stories_build_state", ["build_id", "state", "rank", "name"])


def downgrade() -> None:
    with op.batch_alter_table("stories") as batch:
        batch.drop_index("ix_stories_build_state")
        batch.create_index("ix_stories_build_state", ["build_id", "state"])
        batch.drop_column("rank")
    with op.batch_alter_table("comparisons") as batch:
        batch.drop_column("analysis")
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("ignore_noise")
