"""Tables of session replays' inputs: recorded sessions (with their batches), deployments and
the uploads that become deployments. Imported by store/models.py, so ``Base.metadata`` (and the
migration test) always knows them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from viewfinder.store.models import Base, utcnow


class RecordedSession(Base):
    """One visitor's session in a web app, as its recorder sent it. ``client_key`` is the id
    the recorder made in the page (kept in the tab's sessionStorage across page loads); the
    session's content is its batches, joined in ``seq`` order."""

    __tablename__ = "recorded_sessions"
    __table_args__ = (
        Index("ix_recorded_sessions_client", "project_id", "client_key", unique=True),
        Index("ix_recorded_sessions_project", "project_id", "id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    client_key: Mapped[str] = mapped_column(String(64))
    # Who the app says the visitor is (Viewfinder.identify), else null.
    recorded_by: Mapped[str | None] = mapped_column(String(200))
    key_id: Mapped[str] = mapped_column(String(40))
    # Where and how it began: startUrl, viewport, userAgent, storage (the recording format).
    start: Mapped[dict[str, Any] | None]
    start_url: Mapped[str | None] = mapped_column(Text)
    # When the visitor's browser began recording, by its clock.
    recorded_at: Mapped[datetime]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # recording (batches still coming) | complete (the page said it ended) | capped (size cap)
    status: Mapped[str] = mapped_column(String(12), default="recording")
    synthetic: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    events: Mapped[int] = mapped_column(Integer, default=0)
    urls: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    batches: Mapped[int] = mapped_column(Integer, default=0)


class SessionBatch(Base):
    """One batch a recorder sent: ``data`` holds its events, network calls and URL visits in
    the recording format. A batch sent twice (a page unloading retries) is stored once."""

    __tablename__ = "session_batches"

    session_id: Mapped[str] = mapped_column(
        ForeignKey("recorded_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    data: Mapped[dict[str, Any]]
    size: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SessionUrl(Base):
    """A URL a recorded session visited, for the visited-URL filter of the session list."""

    __tablename__ = "session_urls"

    session_id: Mapped[str] = mapped_column(
        ForeignKey("recorded_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    url: Mapped[str] = mapped_column(String(1000), primary_key=True)


class Deployment(Base):
    """A build of the app that sessions are replayed on: a static build (a zip blob, served
    from loopback), the URL of a preview already running, or a container image."""

    __tablename__ = "deployments"
    __table_args__ = (Index("ix_deployments_commit", "project_id", "commit_sha", "id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    kind: Mapped[str] = mapped_column(String(10))  # static | url | container
    commit_sha: Mapped[str] = mapped_column(String(40))
    sha256: Mapped[str | None] = mapped_column(String(64))  # static: the zip
    url: Mapped[str | None] = mapped_column(Text)  # url: the preview
    # static: [{source, destination}] tried before the single-page-app fallback
    rewrites: Mapped[list[Any]] = mapped_column(default=list)
    # static: files and bytes once unpacked
    files: Mapped[int | None] = mapped_column(Integer)
    unpacked_bytes: Mapped[int | None] = mapped_column(BigInteger)
    # container: image, port, env, healthCheck
    container: Mapped[dict[str, Any] | None]
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class DeploymentUpload(Base):
    """An upload asked for (request_asset_upload, request_container_upload) and not yet
    registered: its signed URL works until ``expires_at``."""

    __tablename__ = "deployment_uploads"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    kind: Mapped[str] = mapped_column(String(10))  # asset | container
    # pending (nothing uploaded) | uploaded (the zip is a blob) | registered
    state: Mapped[str] = mapped_column(String(12), default="pending")
    sha256: Mapped[str | None] = mapped_column(String(64))
    deployment_id: Mapped[str | None] = mapped_column(String(40))
    created_by: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
