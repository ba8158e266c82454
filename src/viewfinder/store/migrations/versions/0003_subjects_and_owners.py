"""threads on any subject, comparisons owned by what asked for them, blobs of any kind

- threads: subject_type + subject_id (+ side, now optional) instead of comparison_id; kind
  (comment, mark, finding) and severity; status wide enough for in_progress.
- comparisons: owner_kind + owner_id; baseline_image_id becomes base_image_id.
- blobs: media_type and touched_at (unreferenced blobs are swept); width and height leave (the
  rows that reference a blob keep them).
- builds: the verdict, stored when a build is done, so lists filter on it; an idempotency key.
- jobs: claims use a partial index of open jobs.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 21:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("threads") as batch:
        batch.add_column(sa.Column("subject_type", sa.String(12), nullable=True))
        batch.add_column(sa.Column("subject_id", sa.String(40), nullable=True))
        batch.add_column(sa.Column("kind", sa.String(10), nullable=True))
        batch.add_column(sa.Column("severity", sa.String(20), nullable=True))
        batch.alter_column("status", type_=sa.String(12), existing_nullable=False)
        batch.alter_column("side", existing_type=sa.String(6), nullable=True)
    op.execute(
        "UPDATE threads SET subject_type = 'diff', subject_id = comparison_id, kind = 'comment'"
    )
    with op.batch_alter_table("threads") as batch:
        batch.alter_column("subject_type", existing_type=sa.String(12), nullable=False)
        batch.alter_column("subject_id", existing_type=sa.String(40), nullable=False)
        batch.alter_column("kind", existing_type=sa.String(10), nullable=False)
        batch.drop_index("ix_threads_comparison")
        batch.drop_column("comparison_id")
        batch.create_index("ix_threads_subject", ["subject_type", "subject_id", "parent_id"])

    with op.batch_alter_table("comparisons") as batch:
        batch.add_column(sa.Column("owner_kind", sa.String(10), nullable=True))
        batch.add_column(sa.Column("owner_id", sa.String(40), nullable=True))
        batch.alter_column("baseline_image_id", new_column_name="base_image_id")
    op.execute(
        "UPDATE comparisons SET owner_kind = 'story', owner_id = "
        "(SELECT stories.id FROM stories WHERE stories.comparison_id = comparisons.id) "
        "WHERE EXISTS (SELECT 1 FROM stories WHERE stories.comparison_id = comparisons.id)"
    )
    op.execute(
        "UPDATE comparisons SET owner_kind = 'push', owner_id = image_id WHERE owner_kind IS NULL"
    )
    with op.batch_alter_table("comparisons") as batch:
        batch.alter_column("owner_kind", existing_type=sa.String(10), nullable=False)
        batch.alter_column("owner_id", existing_type=sa.String(40), nullable=False)

    with op.batch_alter_table("blobs") as batch:
        batch.add_column(
            sa.Column(
                "media_type",
                sa.String(60),
                nullable=False,
                server_default=sa.text("'image/png'"),
            )
        )
        batch.add_column(sa.Column("touched_at", sa.DateTime(timezone=True), nullable=True))
        batch.drop_column("width")
        batch.drop_column("height")
    op.execute("UPDATE blobs SET touched_at = created_at")
    with op.batch_alter_table("blobs") as batch:
        batch.alter_column("touched_at", existing_type=sa.DateTime(timezone=True), nullable=False)
        batch.create_index("ix_blobs_touched_at", ["touched_at"])
    op.execute(
        "UPDATE blobs SET media_type = (SELECT images.media_type FROM images "
        "WHERE images.sha256 = blobs.sha256 LIMIT 1) "
        "WHERE EXISTS (SELECT 1 FROM images WHERE images.sha256 = blobs.sha256)"
    )

    with op.batch_alter_table("builds") as batch:
        batch.add_column(sa.Column("verdict", sa.String(10), nullable=True))
        batch.add_column(sa.Column("idempotency_key", sa.String(100), nullable=True))
        batch.create_index("ix_builds_project_verdict", ["project_id", "verdict"])
        batch.create_index(
            "uq_builds_idempotency_key",
            ["project_id", "idempotency_key"],
            unique=True,
            sqlite_where=sa.text("idempotency_key IS NOT NULL"),
            postgresql_where=sa.text("idempotency_key IS NOT NULL"),
        )
    op.execute(
        "UPDATE builds SET verdict = CASE "
        "WHEN EXISTS (SELECT 1 FROM stories WHERE stories.build_id = builds.id "
        "AND stories.state = 'failed') THEN 'failed' "
        "WHEN EXISTS (SELECT 1 FROM stories WHERE stories.build_id = builds.id "
        "AND stories.state IN ('changed', 'removed')) THEN 'changed' "
        "ELSE 'unchanged' END WHERE status = 'done'"
    )

    with op.batch_alter_table("jobs") as batch:
        batch.drop_index("ix_jobs_claim")
        batch.create_index(
            "ix_jobs_open",
            ["id"],
            sqlite_where=sa.text("state IN ('pending', 'running')"),
            postgresql_where=sa.text("state IN ('pending', 'running')"),
        )


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_index("ix_jobs_open")
        batch.create_index("ix_jobs_claim", ["state", "run_after"])
    with op.batch_alter_table("builds") as batch:
        batch.drop_index("uq_builds_idempotency_key")
        batch.drop_index("ix_builds_project_verdict")
        batch.drop_column("idempotency_key")
        batch.drop_column("verdict")
    with op.batch_alter_table("blobs") as batch:
        batch.add_column(sa.Column("width", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("height", sa.Integer(), nullable=True))
        batch.drop_index("ix_blobs_touched_at")
        batch.drop_column("touched_at")
        batch.drop_column("media_type")
    with op.batch_alter_table("comparisons") as batch:
        batch.alter_column("base_image_id", new_column_name="baseline_image_id")
        batch.drop_column("owner_id")
        batch.drop_column("owner_kind")
    with op.batch_alter_table("threads") as batch:
        batch.add_column(sa.Column("comparison_id", sa.String(40), nullable=True))
    op.execute("UPDATE threads SET comparison_id = subject_id WHERE subject_type = 'diff'")
    op.execute("DELETE FROM threads WHERE subject_type <> 'diff'")
    with op.batch_alter_table("threads") as batch:
        batch.drop_index("ix_threads_subject")
        batch.drop_column("severity")
        batch.drop_column("kind")
        batch.drop_column("subject_id")
        batch.drop_column("subject_type")
        batch.alter_column("comparison_id", existing_type=sa.String(40), nullable=False)
        batch.create_foreign_key("fk_threads_comparison", "comparisons", ["comparison_id"], ["id"])
        batch.create_index("ix_threads_comparison", ["comparison_id", "parent_id"])
