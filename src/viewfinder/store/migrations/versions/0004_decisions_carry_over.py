"""decisions that carry over within a pull request

- comparisons.decision_from: the earlier diff whose decision this one took (a byte-identical
  candidate of the same name on an earlier build or push of the same pull request).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 03:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("comparisons") as batch:
        batch.add_column(sa.Column("decision_from", sa.String(40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("comparisons") as batch:
        batch.drop_column("decision_from")
