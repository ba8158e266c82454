"""a project's GitHub token, for commit statuses

- projects.github_token: the token, sealed with a key derived from the server's secret (never
  stored or returned in the clear).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 07:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("github_token", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("github_token")
