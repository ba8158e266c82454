"""The database schema. Every row that belongs to a project carries its project_id, and every
query in services/ filters on it: another project's object reads as not found.

Timestamps are UTC. Ids are prefixed, time-ordered strings (see viewfinder.ids).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on both databases (SQLite would hand back naive ones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database; use viewfinder times (UTC)")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON,
        list[Any]: JSON,
    }


class Project(Base):
    __tablename__ = "projects"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    quota_bytes: Mapped[int | None] = mapped_column(BigInteger)
    # Pairs whose every difference is rendering noise are not "changed".
    ignore_noise: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    # Origins whose pages may send recorded sessions (["https://app.example"]); null: any.
    record_origins: Mapped[list[Any] | None]
    # Checkup credits a month (services/credits.py); None: no limit, a self-hosted default.
    checkup_allowance: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # For commit statuses: sealed with the server's secret (services/signing.py), never shown.
    github_token: Mapped[str | None] = mapped_column(Text)
    # An archived project keeps its data but no person, key or token reaches it.
    archived_at: Mapped[datetime | None]


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    # sha256 of the whole key: keys carry 160 random bits, so a fast hash is enough.
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(20))  # shown in lists to tell keys apart
    roles: Mapped[str] = mapped_column(String(100))  # comma-separated
    label: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(10))  # agent | ci | person
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None]


class Blob(Base):
    """Stored bytes, content-addressed and shared by every project that stores the same file:
    screenshots and diff images (PNG), DOM snapshots and coverage (JSON), deployments (zip).
    What a blob is of (an image's width and height) is kept by the rows that reference it; a
    blob no row references any more is swept (see store/references.py)."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    media_type: Mapped[str] = mapped_column(
        String(60), default="image/png", server_default=text("'image/png'")
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # When an upload last claimed these bytes (before writing them): a recent one is not swept.
    touched_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class Context(Base):
    """Where pushed images are delivered: a GitHub PR (`owner/repo#N`) or a manual label."""

    __tablename__ = "contexts"
    __table_args__ = (UniqueConstraint("project_id", "type", "key"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    type: Mapped[str] = mapped_column(String(20))  # github_pr | manual
    key: Mapped[str] = mapped_column(String(300))
    label: Mapped[str | None] = mapped_column(String(300))
    repo: Mapped[str | None] = mapped_column(String(200))
    pr_number: Mapped[int | None]
    status: Mapped[str] = mapped_column(String(10), default="open")  # open | closed
    close_reason: Mapped[str | None] = mapped_column(String(10))  # merged | closed | manual
    closed_at: Mapped[datetime | None]
    expire_policy: Mapped[str] = mapped_column(String(10), default="on_close")  # on_close|ttl|never
    ttl_seconds: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Build(Base):
    __tablename__ = "builds"
    __table_args__ = (
        Index("ix_builds_project_commit", "project_id", "commit_sha"),
        Index("ix_builds_project_pr", "project_id", "pr_number"),
        Index("ix_builds_project_verdict", "project_id", "verdict"),
        Index(
            "uq_builds_idempotency_key",
            "project_id",
            "idempotency_key",
            unique=True,
            sqlite_where=text("idempotency_key IS NOT NULL"),
            postgresql_where=text("idempotency_key IS NOT NULL"),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    commit_sha: Mapped[str] = mapped_column(String(64))
    branch: Mapped[str | None] = mapped_column(String(300))
    repo: Mapped[str | None] = mapped_column(String(200))
    pr_number: Mapped[int | None]
    context_id: Mapped[str | None] = mapped_column(ForeignKey("contexts.id"))
    # uploading | comparing | done | expired (never finalized)
    status: Mapped[str] = mapped_column(String(12), default="uploading")
    # Decided when the build is done (services/builds.reading.verdict_of): unchanged|changed|failed
    verdict: Mapped[str | None] = mapped_column(String(10))
    # Given by the client that opened the build: opening it again with the same key (a retry
    # after a lost answer) returns this build instead of a second one.
    idempotency_key: Mapped[str | None] = mapped_column(String(100))
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finalized_at: Mapped[datetime | None]
    completed_at: Mapped[datetime | None]


class Image(Base):
    """One uploaded screenshot: a story's image in a build, or a push into a context."""

    __tablename__ = "images"
    __table_args__ = (Index("ix_images_context_name", "context_id", "name", "variant"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    media_type: Mapped[str] = mapped_column(String(20), default="image/png")
    size: Mapped[int] = mapped_column(BigInteger)
    width: Mapped[int | None]
    height: Mapped[int | None]
    # Device px per CSS px, when the uploader said: the analysis looks further above 2.
    scale: Mapped[float | None] = mapped_column(Float)
    name: Mapped[str] = mapped_column(String(200))
    variant: Mapped[str] = mapped_column(String(100), default="")
    source: Mapped[str] = mapped_column(String(10))  # build | push
    build_id: Mapped[str | None] = mapped_column(ForeignKey("builds.id"))
    context_id: Mapped[str | None] = mapped_column(ForeignKey("contexts.id"))
    commit_sha: Mapped[str | None] = mapped_column(String(64))
    tags: Mapped[list[Any]] = mapped_column(default=list)
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expired_at: Mapped[datetime | None]
    expired_reason: Mapped[str | None] = mapped_column(String(20))


class Baseline(Base):
    """The approved image of a name + variant, shared or for one context (a PR).

    Rows are never deleted: a replaced, deleted, promoted or discarded baseline gets `ended_at`
    and `end_reason`, which keeps the history of who approved what, when.
    """

    __tablename__ = "baselines"
    __table_args__ = (
        Index(
            "uq_baselines_current_shared",
            "project_id",
            "name",
            "variant",
            unique=True,
            sqlite_where=text("ended_at IS NULL AND scope = 'shared'"),
            postgresql_where=text("ended_at IS NULL AND scope = 'shared'"),
        ),
        Index(
            "uq_baselines_current_context",
            "project_id",
            "context_id",
            "name",
            "variant",
            unique=True,
            sqlite_where=text("ended_at IS NULL AND scope = 'context'"),
            postgresql_where=text("ended_at IS NULL AND scope = 'context'"),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    variant: Mapped[str] = mapped_column(String(100), default="")
    scope: Mapped[str] = mapped_column(String(10))  # shared | context
    context_id: Mapped[str | None] = mapped_column(ForeignKey("contexts.id"))
    image_id: Mapped[str] = mapped_column(ForeignKey("images.id"))
    source: Mapped[str] = mapped_column(String(12))  # registered|approved|accepted|promoted
    comparison_id: Mapped[str | None] = mapped_column(String(40))
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None]
    end_reason: Mapped[str | None] = mapped_column(
        String(12)
    )  # replaced|deleted|promoted|discarded
    ended_by: Mapped[str | None] = mapped_column(String(40))


class Comparison(Base):
    """A candidate image compared with a base image (for a "diff", the baseline current when the
    candidate arrived), owned by what asked for it: ``owner_kind`` story, push, images ..."""

    __tablename__ = "comparisons"
    __table_args__ = (Index("ix_comparisons_state", "state"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    image_id: Mapped[str] = mapped_column(ForeignKey("images.id"), index=True)
    # Who asked for it and is settled when it finishes (services/comparisons.register_owner).
    owner_kind: Mapped[str] = mapped_column(String(10))
    owner_id: Mapped[str] = mapped_column(String(40))
    build_id: Mapped[str | None] = mapped_column(ForeignKey("builds.id"))
    context_id: Mapped[str | None] = mapped_column(ForeignKey("contexts.id"))
    name: Mapped[str] = mapped_column(String(200))
    variant: Mapped[str] = mapped_column(String(100), default="")
    base_image_id: Mapped[str | None] = mapped_column(ForeignKey("images.id"))
    # For a diff, the baseline compared with; None when this one registered the first baseline.
    baseline_id: Mapped[str | None] = mapped_column(ForeignKey("baselines.id"))
    baseline_scope: Mapped[str | None] = mapped_column(String(10))
    registered: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(String(10), default="requested")  # requested|done|failed
    masks: Mapped[list[Any]] = mapped_column(default=list)
    max_diff_ratio: Mapped[float] = mapped_column(Float, default=0.0)
    threshold: Mapped[float] = mapped_column(Float, default=0.1)
    changed: Mapped[bool | None] = mapped_column(Boolean)
    identical: Mapped[bool | None] = mapped_column(Boolean)
    diff_ratio: Mapped[float | None] = mapped_column(Float)
    changed_pixels: Mapped[int | None] = mapped_column(BigInteger)
    compared_pixels: Mapped[int | None] = mapped_column(BigInteger)
    width: Mapped[int | None]
    height: Mapped[int | None]
    regions: Mapped[list[Any]] = mapped_column(default=list)
    # What the change is (imaging.Analysis.to_dict(), perhaps refined by a vision model): none
    # when nothing was compared pixel by pixel. Its verdict orders stories (Story.rank).
    analysis: Mapped[dict[str, Any] | None]
    diff_sha256: Mapped[str | None] = mapped_column(String(64))
    failure_reason: Mapped[str | None] = mapped_column(Text)
    requested_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None]
    decision: Mapped[str] = mapped_column(String(10), default="pending")
    decided_by: Mapped[str | None] = mapped_column(String(40))
    decided_at: Mapped[datetime | None]
    # The earlier diff of the same pull request whose decision this one took (diffs.inherit).
    decision_from: Mapped[str | None] = mapped_column(String(40))
    approved_by: Mapped[str | None] = mapped_column(String(40))
    approved_at: Mapped[datetime | None]


class Story(Base):
    """A named screenshot in a build and the state of its comparison."""

    __tablename__ = "stories"
    __table_args__ = (
        UniqueConstraint("build_id", "name", "variant"),
        Index("ix_stories_build_state", "build_id", "state", "rank", "name"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    build_id: Mapped[str] = mapped_column(ForeignKey("builds.id"))
    name: Mapped[str] = mapped_column(String(200))
    variant: Mapped[str] = mapped_column(String(100), default="")
    image_id: Mapped[str | None] = mapped_column(ForeignKey("images.id"))
    comparison_id: Mapped[str | None] = mapped_column(ForeignKey("comparisons.id"))
    baseline_id: Mapped[str | None] = mapped_column(ForeignKey("baselines.id"))  # removed ones
    # pending | new | changed | unchanged | removed | failed
    state: Mapped[str] = mapped_column(String(10), default="pending")
    # Order within a state: likely regressions (0) before the rest (1) and noise (2).
    rank: Mapped[int] = mapped_column(Integer, default=1, server_default=text("1"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Thread(Base):
    """What a person or an agent says about an image: a root (with its kind, anchor and status)
    or a reply to one. It hangs on a subject: one side of a diff (``subject_type`` diff, ``side``
    before or after), or one stored image (``image``: a checkup's screenshot). Kinds: comment,
    mark (with a severity) and finding (a hint); services/lifecycle.py holds their moves."""

    __tablename__ = "threads"
    __table_args__ = (Index("ix_threads_subject", "subject_type", "subject_id", "parent_id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    subject_type: Mapped[str] = mapped_column(String(12))
    subject_id: Mapped[str] = mapped_column(String(40))
    side: Mapped[str | None] = mapped_column(String(6))
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("threads.id"))
    kind: Mapped[str] = mapped_column(String(10), default="comment")
    severity: Mapped[str | None] = mapped_column(String(20))
    body: Mapped[str] = mapped_column(Text)
    anchor: Mapped[dict[str, Any] | None]
    status: Mapped[str] = mapped_column(String(12), default="open")
    author_key_id: Mapped[str] = mapped_column(String(40))
    author_name: Mapped[str] = mapped_column(String(100))
    author_is_agent: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    resolved_at: Mapped[datetime | None]
    resolved_by: Mapped[str | None] = mapped_column(String(40))


class Job(Base):
    """Background work as a row: it names ids only, and moves pending -> running -> done|failed.

    A running job whose lease ran out (its worker died) is pending again.
    """

    __tablename__ = "jobs"
    __table_args__ = (
        # Claims look only at open jobs, oldest first: done ones pile up until swept.
        Index(
            "ix_jobs_open",
            "id",
            sqlite_where=text("state IN ('pending', 'running')"),
            postgresql_where=text("state IN ('pending', 'running')"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(30))
    subject_id: Mapped[str] = mapped_column(String(40))
    state: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    run_after: Mapped[datetime] = mapped_column(default=utcnow)
    locked_by: Mapped[str | None] = mapped_column(String(60))
    locked_until: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


# Session replays' tables live beside these, in their own modules; importing them here makes
# them part of Base.metadata wherever the models are.
from viewfinder.store import recorded as _recorded  # noqa: E402, F401
from viewfinder.store import replay_models as _replay_models  # noqa: E402, F401


class Person(Base):
    """Someone who signs in with an email and a password (argon2id). Owners run the server:
    they create projects and people. Wrong passwords slow further tries down (see
    services/people.py)."""

    __tablename__ = "people"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)  # lower case
    name: Mapped[str] = mapped_column(String(100))
    password_hash: Mapped[str] = mapped_column(String(200))
    is_owner: Mapped[bool] = mapped_column(Boolean, default=False)
    default_project_id: Mapped[str | None] = mapped_column(ForeignKey("projects.id"))
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    last_failed_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Membership(Base):
    """A person's roles in one project (the same roles as keys)."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("project_id", "person_id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id"), index=True)
    roles: Mapped[str] = mapped_column(String(100))  # comma-separated
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Invitation(Base):
    """A link that makes whoever opens it (signed in, or signing up) a member of a project
    with these roles, until it expires or is used."""

    __tablename__ = "invitations"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str | None] = mapped_column(String(254))
    roles: Mapped[str] = mapped_column(String(100))
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    accepted_at: Mapped[datetime | None]
    accepted_by: Mapped[str | None] = mapped_column(String(40))


class WebSession(Base):
    """A dashboard sign-in, kept here so that signing out (or revoking the key) ends it for
    real: the cookie names the row, and a row that ended signs nobody in."""

    __tablename__ = "web_sessions"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    person_id: Mapped[str | None] = mapped_column(ForeignKey("people.id"))
    key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id"))
    project_id: Mapped[str | None] = mapped_column(ForeignKey("projects.id"))
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    ended_at: Mapped[datetime | None]


class OAuthClient(Base):
    """A client registered dynamically (RFC 7591): its metadata as it registered."""

    __tablename__ = "oauth_clients"

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    metadata_json: Mapped[dict[str, Any]] = mapped_column("metadata", JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OAuthGrant(Base):
    """What a person allowed a client: an authorization code (``kind`` code), then the access
    and refresh tokens it became. Every token of one sign-in shares a ``family_id``; a refresh
    token used twice revokes the whole family. Secrets are kept as sha256."""

    __tablename__ = "oauth_grants"
    __table_args__ = (Index("ix_oauth_grants_family", "family_id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(8))  # code | access | refresh
    family_id: Mapped[str] = mapped_column(String(40))
    client_id: Mapped[str] = mapped_column(ForeignKey("oauth_clients.id"))
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id"), index=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    roles: Mapped[str] = mapped_column(String(100))
    resource: Mapped[str] = mapped_column(String(500))
    scopes: Mapped[list[Any]] = mapped_column(default=list)
    # For a code: what /token must match (PKCE S256 challenge, redirect URI).
    code_challenge: Mapped[str | None] = mapped_column(String(128))
    redirect_uri: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]  # a code exchanged, a refresh token rotated
    revoked_at: Mapped[datetime | None]


class Checkup(Base):
    """One pass of a design checkup (a ReviseMy review): what was sent to be looked at, the
    person's decision and the link that is their sign-in. Later passes point at the one before
    (``parent_id``) and share the first one's id as ``root_id``; ``status`` is pending,
    changes_requested or approved (expired is read from ``expires_at``)."""

    __tablename__ = "checkups"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("checkups.id"))
    root_id: Mapped[str] = mapped_column(String(40), index=True)
    pass_number: Mapped[int] = mapped_column(Integer, default=1)
    title: Mapped[str] = mapped_column(String(160))
    context: Mapped[str | None] = mapped_column(Text)
    type: Mapped[str] = mapped_column(String(12))
    source: Mapped[str] = mapped_column(String(10))  # images | capture | pdf | html
    page_url: Mapped[str | None] = mapped_column(Text)
    design_rules: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    decision_note: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[datetime | None]
    # The person's link (their whole sign-in) and the guests' link, random and unguessable.
    token: Mapped[str] = mapped_column(String(64), unique=True)
    guest_token: Mapped[str | None] = mapped_column(String(64), unique=True)
    guest_expires_at: Mapped[datetime | None]
    expires_at: Mapped[datetime]
    # none | queued | done | failed; the request waits here for the capture job, then goes.
    capture_state: Mapped[str] = mapped_column(String(10), default="none")
    capture_request: Mapped[dict[str, Any] | None]
    capture_reason: Mapped[str | None] = mapped_column(Text)
    webhook_url: Mapped[str | None] = mapped_column(Text)
    webhook_secret: Mapped[str | None] = mapped_column(String(64))
    webhook_failures: Mapped[int] = mapped_column(Integer, default=0)
    webhook_paused_at: Mapped[datetime | None]
    credits: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Moves whenever the person (or the agent) changes anything: a poll can stop there.
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class CheckupShot(Base):
    """A screenshot of a checkup pass, in order: its stored image, where it came from, the
    boxes and accessibility findings of its page (a JSON blob) and its comparison with the
    matching screenshot of the pass before."""

    __tablename__ = "checkup_shots"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    checkup_id: Mapped[str] = mapped_column(ForeignKey("checkups.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    image_id: Mapped[str] = mapped_column(ForeignKey("images.id"))
    label: Mapped[str] = mapped_column(String(40))
    origin: Mapped[str] = mapped_column(String(20))
    meta: Mapped[dict[str, Any]] = mapped_column(default=dict)
    boxes_sha256: Mapped[str | None] = mapped_column(String(64))
    dom_sha256: Mapped[str | None] = mapped_column(String(64))
    comparison_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CheckupPin(Base):
    """What a checkup adds to a mark or finding thread: its number (M1.., S1..), the
    screenshot, where it came from, the suggested copy, the answer to a question, the agent's
    note and after-image, and how often the person reopened it."""

    __tablename__ = "checkup_pins"

    thread_id: Mapped[str] = mapped_column(ForeignKey("threads.id"), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    checkup_id: Mapped[str] = mapped_column(ForeignKey("checkups.id"), index=True)
    kind: Mapped[str] = mapped_column(String(10))  # mark | finding
    number: Mapped[int] = mapped_column(Integer)
    screenshot_index: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(12))  # human guest checklist vision agent axe
    rule: Mapped[str | None] = mapped_column(String(80))
    suggested_copy: Mapped[str | None] = mapped_column(Text)
    question_answer: Mapped[str | None] = mapped_column(Text)
    note: Mapped[str | None] = mapped_column(Text)
    after_image_id: Mapped[str | None] = mapped_column(ForeignKey("images.id"))
    related_pin: Mapped[str | None] = mapped_column(String(40))
    accepted_as: Mapped[str | None] = mapped_column(String(40))
    reopened: Mapped[int] = mapped_column(Integer, default=0)


class CreditSpend(Base):
    """Credits a checkup cost its project (the burn table in services/credits.py)."""

    __tablename__ = "credit_spends"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), index=True)
    checkup_id: Mapped[str] = mapped_column(String(40))
    source: Mapped[str] = mapped_column(String(10))
    credits: Mapped[int] = mapped_column(Integer)
    spent_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookDelivery(Base):
    """One event to POST to a checkup's webhook, tried by jobs until it is delivered or given
    up (services/webhooks.py)."""

    __tablename__ = "webhook_deliveries"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    checkup_id: Mapped[str] = mapped_column(ForeignKey("checkups.id"), index=True)
    event: Mapped[str] = mapped_column(String(40))
    url: Mapped[str] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    state: Mapped[str] = mapped_column(String(12), default="pending")
    last_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    delivered_at: Mapped[datetime | None]
