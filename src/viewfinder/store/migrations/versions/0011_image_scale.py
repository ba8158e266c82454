"""the device scale a screenshot was taken at

- images.scale: device px per CSS px, when the uploader said (null when unknown); the change
  analysis of a comparison looks further above scale 2.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("images") as batch:
        batch.add_column(sa.Column("scale", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("images") as batch:
        batch.drop_column("scale")
