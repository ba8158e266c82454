"""the pull request a test run belongs to

- test_runs.pr_number: the pull request whose head the run tests (null for a run of a branch);
  only a pull request's run can have its screenshot diffs rejected.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 09:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("test_runs") as batch:
        batch.add_column(sa.Column("pr_number", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("test_runs") as batch:
        batch.drop_column("pr_number")
