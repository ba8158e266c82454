"""Recorded sessions: what recorder.js sends (ingest), the list agents and people read, a
session's user flow and network summary, and its whole recording for the replay engine.

A session arrives in batches (services read them as the recording format of
replay/recording.py, in pieces): each batch is checked whole, then stored in one transaction
with the session's counters, or refused and nothing of it is kept. A batch sent twice (a page
unloading retries) is stored once. A session past ``record_max_session_bytes`` is capped: the
batch that would pass the cap and every later one are refused (413), what came before is kept.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field
from sqlalchemy import delete, exists, select
from sqlalchemy.dialects import postgresql, sqlite

from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound, TooLarge
from viewfinder.ids import new_id, well_formed
from viewfinder.replay.recording import Recording
from viewfinder.services import permissions
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.shortreads import short_read
from viewfinder.services.testruns import forget
from viewfinder.store.models import Project, utcnow
from viewfinder.store.recorded import RecordedSession, SessionBatch, SessionUrl

CLIENT_KEY = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_PORT = r"([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
ORIGIN_PATTERN = rf"^https?://[A-Za-z0-9]([A-Za-z0-9.-]{{0,252}})(:{_PORT})?/?$"
ORIGIN_MAX = 300
MAX_BATCH_SEQ = 1_000_000
MAX_ORIGINS = 50
# A session that sent nothing for this long is complete (a visitor never says goodbye).
QUIET = timedelta(minutes=30)
SessionStatus = Literal["recording", "complete", "capped"]


class IngestResult(Record):
    session_id: str
    seq: int
    stored: bool = Field(description="False when this batch had been stored already.")


class SessionRecord(Record):
    id: str
    created_at: datetime
    recorded_at: datetime
    recorded_by: str | None
    status: SessionStatus
    start_url: str | None = None
    abandoned_reason: str | None = None
    number_user_events: int | None = None
    number_urls_visited: int | None = None
    duration_seconds: float | None = None


class SessionList(Record):
    project: str = Field(description="The project the sessions are of (its name).")
    sessions: list[SessionRecord]


class SessionData(Record):
    id: str
    status: SessionStatus
    start_url: str | None
    recorded_by: str | None
    duration_seconds: float
    user_flow: list[str] = Field(description="The user's steps: \"click button 'Add item'\".")
    network: list[str] = Field(description='Calls by method, path and status: "GET /x 200 x2".')
    urls: list[str] = Field(description="The URLs visited, in order.")


def _status(row: RecordedSession, now: datetime) -> SessionStatus:
    if row.status == "capped":
        return "capped"
    return "recording" if row.updated_at > now - QUIET else "complete"


def _record(row: RecordedSession, now: datetime, include: set[str]) -> SessionRecord:
    status = _status(row, now)
    extra: dict[str, Any] = {}
    if "start_url" in include:
        extra["start_url"] = row.start_url
    if "abandoned_reason" in include and status == "capped":
        extra["abandoned_reason"] = "the session reached the size cap (record_max_session_bytes)"
    if "number_user_events" in include:
        extra["number_user_events"] = row.events
    if "number_urls_visited" in include:
        extra["number_urls_visited"] = row.urls
    if "duration_seconds" in include:
        extra["duration_seconds"] = row.duration_ms / 1000
    return SessionRecord(
        id=row.id,
        created_at=row.created_at,
        recorded_at=row.recorded_at,
        recorded_by=row.recorded_by,
        status=status,
        **extra,
    )


# ---- the project's allowed origins --------------------------------------------------------


def normalise_origin(origin: str) -> str:
    """``scheme://host[:port]`` in lower case, default ports left out. Raises InvalidInput."""
    text = origin if isinstance(origin, str) and len(origin) <= ORIGIN_MAX else ""
    parts = urlsplit(text) if re.match(ORIGIN_PATTERN, text) else None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise InvalidInput(
            f"{origin!r} is not an origin: give scheme://host[:port], e.g. https://app.example"
        )
    try:
        port = parts.port
    except ValueError:
        raise InvalidInput(f"{origin!r} has an invalid port") from None
    default = {"http": 80, "https": 443}[parts.scheme]
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


def set_record_origins(env: Env, actor: Actor, origins: list[str] | None) -> list[str] | None:
    """The origins whose pages may send sessions to the project; None: any origin. Raises
    Forbidden (admin role), InvalidInput."""
    permissions.require(actor, "update_project")
    cleaned: list[str] | None = None
    if origins is not None:
        if not isinstance(origins, list) or len(origins) > MAX_ORIGINS:
            raise InvalidInput(f"give a list of at most {MAX_ORIGINS} origins, or null for any")
        cleaned = sorted({normalise_origin(o) for o in origins})
    with env.db.write() as s:
        project = s.get_one(Project, actor.project_id)
        project.record_origins = cleaned
    return cleaned


def get_record_origins(env: Env, actor: Actor) -> list[str] | None:
    permissions.require(actor, "whoami")
    with env.db.read() as s:
        return s.get_one(Project, actor.project_id).record_origins


def origin_allowed(env: Env, project_id: str, origin: str | None) -> bool:
    """Whether a page of ``origin`` may send sessions to the project (any, when no list is set;
    a request without an Origin header is not a page's, and passes only then too)."""
    with env.db.read() as s:
        allowed = s.get_one(Project, project_id).record_origins
    if allowed is None:
        return True
    if not origin:
        return False
    try:
        return normalise_origin(origin) in allowed
    except InvalidInput:
        return False


# ---- ingest ---------------------------------------------------------------------------------


def _parse(raw: bytes) -> dict[str, Any]:
    try:
        batch = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput(
            "the batch is not JSON: recorder.js sends one JSON object per request"
        ) from None
    if not isinstance(batch, dict):
        raise InvalidInput("the batch must be a JSON object {session, seq, events, ...}")
    unknown = set(batch) - {
        "session",
        "seq",
        "start",
        "events",
        "network",
        "urls",
        "recordedBy",
        "synthetic",
    }
    if unknown:
        raise InvalidInput(f"the batch has fields nobody reads: {', '.join(sorted(unknown))}")
    return batch


def _check_batch(batch: dict[str, Any]) -> tuple[Recording, dict[str, Any] | None]:
    client_key, seq = batch.get("session"), batch.get("seq")
    if not isinstance(client_key, str) or not CLIENT_KEY.match(client_key):
        raise InvalidInput(
            "batch field session must be the recorder's id: 8 to 64 of A-Z a-z 0-9 _ -"
        )
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_BATCH_SEQ:
        raise InvalidInput(f"batch field seq must be an integer from 0 to {MAX_BATCH_SEQ}")
    start = batch.get("start")
    if start is None and seq == 0:
        raise InvalidInput("batch 0 must carry start: {startUrl, viewport, userAgent, storage}")
    if start is not None and not isinstance(start, dict):
        raise InvalidInput("batch field start must be an object")
    who = batch.get("recordedBy")
    if who is not None and (not isinstance(who, str) or len(who) > 200):
        raise InvalidInput("batch field recordedBy must be text of at most 200 characters")
    if not isinstance(batch.get("synthetic", False), bool):
        raise InvalidInput("batch field synthetic must be true or false")
    begun = (start or {}).get("startedAt")
    if begun is not None and (isinstance(begun, bool) or not isinstance(begun, int | float)):
        raise InvalidInput("batch field start.startedAt must be milliseconds since 1970")
    probe = {
        "version": 1,
        "startUrl": (start or {}).get("startUrl", "http://session.invalid/"),
        "viewport": (start or {}).get("viewport", {"width": 1, "height": 1}),
        "userAgent": (start or {}).get("userAgent", ""),
        "storage": (start or {}).get("storage", {}),
        "events": batch.get("events", []),
        "network": batch.get("network", []),
        "urls": batch.get("urls", []),
    }
    try:
        recording = Recording.from_json(probe)
    except InvalidInput as exc:
        raise InvalidInput(f"batch {seq}: {exc.message}", **exc.details) from None
    kept_start = None
    if start is not None:
        whole = recording.to_json()
        kept_start = {k: whole[k] for k in ("startUrl", "viewport", "userAgent", "storage")}
        kept_start["startedAt"] = begun
    return recording, kept_start


def _recorded_at(started_ms: float | None, now: datetime) -> datetime:
    if started_ms is None:
        return now
    try:
        when = datetime.fromtimestamp(started_ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return now
    # A visitor's clock may be wrong: keep it only when it is plausible.
    return when if now - timedelta(days=2) < when <= now + timedelta(minutes=5) else now


def ingest(env: Env, actor: Actor, raw: bytes, *, origin: str | None = None) -> IngestResult:
    """Store one batch from recorder.js. Raises Forbidden (not a record key, or an origin the
    project does not allow), TooLarge (the batch, or the session's cap), InvalidInput naming
    the field that is wrong; in every case nothing of the batch is kept."""
    permissions.require(actor, "ingest_session")
    if not origin_allowed(env, actor.project_id, origin):
        shown = origin or "(none: not sent by a browser page)"
        raise Forbidden(
            f"pages of origin {shown} may not send sessions to this project: an admin adds it "
            "to the project's allowed origins (PUT /api/v1/project/record-origins)",
            origin=origin,
        )
    limit = env.settings.record_max_batch_bytes
    if len(raw) > limit:
        raise TooLarge(
            f"the batch is {len(raw):,} bytes; at most {limit:,} are accepted in one batch "
            "(VIEWFINDER_RECORD_MAX_BATCH_BYTES)",
            limit=limit,
        )
    batch = _parse(raw)
    recording, start = _check_batch(batch)
    seq = int(batch["seq"])
    data = {
        "events": [e.to_json() for e in recording.events],
        "network": [x.to_json() for x in recording.network],
        "urls": [u.to_json() for u in recording.urls],
    }
    now = utcnow()
    with env.db.write() as s:
        dialect = sqlite if env.db.is_sqlite else postgresql
        s.execute(
            dialect.insert(RecordedSession)
            .values(
                id=new_id("ses"),
                project_id=actor.project_id,
                client_key=batch["session"],
                key_id=actor.key_id,
                recorded_at=_recorded_at((start or {}).get("startedAt"), now),
                created_at=now,
                updated_at=now,
                status="recording",
                synthetic=bool(batch.get("synthetic", False)),
                events=0,
                urls=0,
                duration_ms=0,
                bytes=0,
                batches=0,
            )
            .on_conflict_do_nothing(index_elements=["project_id", "client_key"])
        )
        row = s.scalar(
            select(RecordedSession)
            .where(
                RecordedSession.project_id == actor.project_id,
                RecordedSession.client_key == batch["session"],
            )
            .with_for_update()
        )
        assert row is not None
        if s.get(SessionBatch, (row.id, seq)) is not None:
            return IngestResult(session_id=row.id, seq=seq, stored=False)
        cap = env.settings.record_max_session_bytes
        capped = row.status == "capped" or row.bytes + len(raw) > cap
        session_id = row.id
        if capped:
            row.status = "capped"  # said in the list; the batch itself is kept out
        else:
            _apply(s, row, batch, seq, start, recording, data, len(raw), now)
    if capped:
        raise TooLarge(
            f"session {session_id} reached its cap of {cap:,} bytes "
            "(VIEWFINDER_RECORD_MAX_SESSION_BYTES): it is kept as it was, later batches are "
            "refused",
            session_id=session_id,
            limit=cap,
        )
    return IngestResult(session_id=session_id, seq=seq, stored=True)


def _apply(
    s: Any,
    row: RecordedSession,
    batch: dict[str, Any],
    seq: int,
    start: dict[str, Any] | None,
    recording: Recording,
    data: dict[str, Any],
    size: int,
    now: datetime,
) -> None:
    """Add the batch to the session, in the caller's transaction."""
    times = [e.t for e in recording.events] + [x.t for x in recording.network]
    times += [u.t for u in recording.urls]
    s.add(SessionBatch(session_id=row.id, seq=seq, data=data, size=size, created_at=now))
    if start is not None and row.start is None:
        row.start, row.start_url = start, start["startUrl"]
        row.recorded_at = _recorded_at(start.get("startedAt"), now)
    if batch.get("recordedBy"):
        row.recorded_by = batch["recordedBy"]
    row.events += len(recording.events)
    row.urls += len(recording.urls)
    row.duration_ms = max(row.duration_ms, int(max(times, default=0)))
    row.bytes += size
    row.batches += 1
    row.updated_at = now
    visited = {u.url[:1000] for u in recording.urls}
    if start is not None:
        visited.add(start["startUrl"][:1000])
    known = set(
        s.scalars(
            select(SessionUrl.url).where(
                SessionUrl.session_id == row.id, SessionUrl.url.in_(visited)
            )
        )
    )
    s.add_all(SessionUrl(session_id=row.id, url=u) for u in sorted(visited - known))


# ---- reading --------------------------------------------------------------------------------

INCLUDES = (
    "start_url",
    "abandoned_reason",
    "number_user_events",
    "number_urls_visited",
    "duration_seconds",
)


def _aware(value: datetime | None, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{name} must be an ISO-8601 time, e.g. 2026-12-01T00:00:00Z")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _glob(pattern: str) -> str:
    if not isinstance(pattern, str) or not pattern or len(pattern) > 1000:
        raise InvalidInput("visited_url_filter must be a URL pattern of 1 to 1000 characters")
    escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


@short_read
def list_sessions(
    env: Env,
    actor: Actor,
    *,
    created_since: datetime | None = None,
    created_until: datetime | None = None,
    recorded_since: datetime | None = None,
    recorded_until: datetime | None = None,
    recorded_by: str | None = None,
    exclude_synthetic: bool = False,
    visited_url_filter: str | None = None,
    include: set[str] | frozenset[str] = frozenset(),
    limit: int = 100,
    offset: int = 0,
) -> SessionList:
    """The project's sessions, newest first, filtered. ``visited_url_filter`` is a glob where
    ``*`` matches anything, held against every URL a session visited. ``include`` names the
    optional columns (INCLUDES). Raises InvalidInput."""
    permissions.require(actor, "list_sessions")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInput("limit must be 1 to 1000")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInput("offset must be 0 or more")
    unknown = set(include) - set(INCLUDES)
    if unknown:
        raise InvalidInput(f"include: unknown columns {', '.join(sorted(unknown))}")
    query = select(RecordedSession).where(RecordedSession.project_id == actor.project_id)
    bounds = (
        ("created_since", created_since, RecordedSession.created_at, True),
        ("created_until", created_until, RecordedSession.created_at, False),
        ("recorded_since", recorded_since, RecordedSession.recorded_at, True),
        ("recorded_until", recorded_until, RecordedSession.recorded_at, False),
    )
    for name, value, column, since in bounds:
        when = _aware(value, name)
        if when is not None:
            query = query.where(column >= when if since else column < when)
    if recorded_by is not None:
        query = query.where(RecordedSession.recorded_by == recorded_by)
    if exclude_synthetic:
        query = query.where(RecordedSession.synthetic.is_(False))
    if visited_url_filter is not None:
        query = query.where(
            exists().where(
                SessionUrl.session_id == RecordedSession.id,
                SessionUrl.url.like(_glob(visited_url_filter), escape="\\"),
            )
        )
    query = query.order_by(RecordedSession.id.desc()).limit(limit).offset(offset)
    now = utcnow()
    with env.db.read() as s:
        project = s.get_one(Project, actor.project_id).name
        rows = list(s.scalars(query))
        return SessionList(project=project, sessions=[_record(r, now, set(include)) for r in rows])


def _session(s: Any, actor: Actor, session_id: str) -> RecordedSession:
    row = s.get(RecordedSession, session_id) if well_formed(session_id) else None
    if row is None or row.project_id != actor.project_id:
        raise NotFound(f"no session {session_id!r} in this project", session_id=session_id)
    return row  # type: ignore[no-any-return]


def get_recording(env: Env, actor: Actor, session_id: str) -> Recording:
    """The whole recording of a session, its batches joined in order and numbered again.
    Raises NotFound, Conflict (the session's first batch, which says where it began, has not
    arrived)."""
    permissions.require(actor, "get_session")
    with env.db.read() as s:
        row = _session(s, actor, session_id)
        start = row.start
        batches = list(
            s.scalars(
                select(SessionBatch.data)
                .where(SessionBatch.session_id == row.id)
                .order_by(SessionBatch.seq)
            )
        )
    if start is None:
        raise Conflict(
            f"session {session_id} has not sent its first batch (where it began) yet",
            session_id=session_id,
        )
    events = [e for b in batches for e in b["events"]]
    network = [x for b in batches for x in b["network"]]
    urls = [u for b in batches for u in b["urls"]]
    for i, item in enumerate(events):
        item["seq"] = i
    for i, item in enumerate(network):
        item["seq"] = i
    return Recording.from_json(
        {
            "version": 1,
            **{k: start[k] for k in ("startUrl", "viewport", "userAgent", "storage")},
            "events": events,
            "network": network,
            "urls": urls,
        }
    )


def get_session_data(env: Env, actor: Actor, session_id: str) -> SessionData:
    """The session's user flow and network summary. Raises NotFound, Conflict."""
    recording = get_recording(env, actor, session_id)
    with env.db.read() as s:
        row = _session(s, actor, session_id)
        status, who, duration = _status(row, utcnow()), row.recorded_by, row.duration_ms
    return SessionData(
        id=session_id,
        status=status,
        start_url=recording.start_url,
        recorded_by=who,
        duration_seconds=duration / 1000,
        user_flow=recording.user_flow(),
        network=recording.network_summary(),
        urls=[u.url for u in recording.urls],
    )


def delete_session(env: Env, actor: Actor, session_id: str) -> None:
    """Forget a recorded session and everything it sent (a visitor asked to be forgotten),
    and what its replays kept of it (screenshots, DOM, timelines: testruns.forget); it is
    never replayed again. Raises Forbidden (admin role), NotFound."""
    permissions.require(actor, "delete_session")
    with env.db.write() as s:
        row = _session(s, actor, session_id)
        # Children first: SQLite enforces no ON DELETE CASCADE without its foreign-key pragma.
        s.execute(delete(SessionBatch).where(SessionBatch.session_id == row.id))
        s.execute(delete(SessionUrl).where(SessionUrl.session_id == row.id))
        forget.forget_session(s, row.project_id, row.id)
        s.delete(row)
