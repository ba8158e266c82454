"""people, projects with members, dashboard sessions and OAuth

- people (email, argon2id password, owner, default project, wrong-password count),
  memberships (a person's roles in a project), invitations (expiring links);
- projects.archived_at;
- web_sessions: dashboard sign-ins kept server-side, so signing out ends them;
- oauth_clients (dynamic registration) and oauth_grants (codes, access and refresh tokens).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from viewfinder.store.models import UTCDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("archived_at", UTCDateTime(timezone=True), nullable=True))
    op.create_table(
        "people",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("email", sa.String(254), nullable=False, unique=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("is_owner", sa.Boolean(), nullable=False),
        sa.Column("default_project_id", sa.String(40), sa.ForeignKey("projects.id")),
        sa.Column("failed_logins", sa.Integer(), nullable=False),
        sa.Column("last_failed_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "memberships",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("person_id", sa.String(40), sa.ForeignKey("people.id"), nullable=False),
        sa.Column("roles", sa.String(100), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("project_id", "person_id"),
    )
    op.create_index("ix_memberships_person_id", "memberships", ["person_id"])
    op.create_table(
        "invitations",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("email", sa.String(254)),
        sa.Column("roles", sa.String(100), nullable=False),
        sa.Column("created_by", sa.String(40), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("accepted_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("accepted_by", sa.String(40)),
    )
    op.create_index("ix_invitations_project_id", "invitations", ["project_id"])
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("person_id", sa.String(40), sa.ForeignKey("people.id")),
        sa.Column("key_id", sa.String(40), sa.ForeignKey("api_keys.id")),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id")),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", UTCDateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "oauth_clients",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "oauth_grants",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("family_id", sa.String(40), nullable=False),
        sa.Column("client_id", sa.String(80), sa.ForeignKey("oauth_clients.id"), nullable=False),
        sa.Column("person_id", sa.String(40), sa.ForeignKey("people.id"), nullable=False),
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("roles", sa.String(100), nullable=False),
        sa.Column("resource", sa.String(500), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("code_challenge", sa.String(128)),
        sa.Column("redirect_uri", sa.Text()),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", UTCDateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_oauth_grants_family", "oauth_grants", ["family_id"])
    op.create_index("ix_oauth_grants_person_id", "oauth_grants", ["person_id"])


def downgrade() -> None:
    for table in (
        "oauth_grants",
        "oauth_clients",
        "web_sessions",
        "invitations",
        "memberships",
        "people",
    ):
        op.drop_table(table)
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("archived_at")
