"""Database access: engines, sessions and the schema's migrations.

SQLite is the embedded default: WAL (readers never wait for the writer), synchronous=FULL (an
acknowledged commit survives a crash of the machine too), a busy timeout for the writer lock
shared with worker processes, and write transactions that take that lock up front (BEGIN
IMMEDIATE) so a read-then-write transaction can never fail half way for a lock it cannot wait
for. PostgreSQL is the same code through psycopg 3.
"""

from __future__ import annotations

import contextlib
import select
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.util.concurrency import in_greenlet

from viewfinder.store.loopreads import LoopReads, refuse_on_loop
from viewfinder.store.sqlite import sqlite_engine

MIGRATIONS = Path(__file__).parent / "migrations"


def _sqlite_engine(url: str, begin: str) -> Engine:
    return sqlite_engine(
        url,
        begin=begin,
        pragmas=("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON", "busy_timeout=30000"),
        timeout=30,
    )


# Seconds a pooled connection may sit unused before it is checked on its way out.
IDLE_PING = 5.0


def _ping_when_idle(engine: Engine, idle: float) -> None:
    """Check a pooled connection before handing it out when it may be dead: after a restart of
    the database, a failover or a dropped link the pool then opens a new one instead of
    failing a request. Pinging every checkout (the pool's pre_ping) cost one round trip per
    request, a third of a list request's time under load, so a connection is pinged only when
    it sat idle for ``idle`` seconds (a link that died silently) or when its socket has
    something to read: an idle connection is sent nothing unless the server is ending it (a
    terminated backend says so and closes the socket), which one poll of the socket sees."""

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is None:
            return  # opened just now
        if time.monotonic() - since < idle and not _has_input(record.driver_connection):
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:
            # The pool discards this connection and checks out (or opens) another.
            raise DisconnectionError(f"a pooled connection is gone: {exc}") from exc


def _has_input(connection: Any) -> bool:
    """Whether the server sent an idle connection anything (or its socket closed): a poll with
    no wait, no round trip."""
    try:
        fd = connection.fileno()
    except Exception:
        return True  # no socket left: let the ping find out
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


# The key of the PostgreSQL advisory lock that serializes start-up (migrations, the first
# project) across nodes that start at the same time.
STARTUP_LOCK = 0x76667374  # "vfst"


class Database:
    """Sessions for reading and for writing. Use ``with db.write() as s:``; it commits on success
    and rolls back on any exception. A read running in a greenlet on the event loop (a short
    read, see store.loopreads) gets its session from the loop's own connections."""

    def __init__(self, url: str, *, pool_size: int = 5, idle_ping: float = IDLE_PING) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            path = url.split("///", 1)[-1]
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.read_engine = _sqlite_engine(url, "DEFERRED")
            self.write_engine = _sqlite_engine(url, "IMMEDIATE")
        else:
            self.write_engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size)
            _ping_when_idle(self.write_engine, idle_ping)
            # PostgreSQL's isolation here (read committed) gives each statement a snapshot of
            # its own, so a transaction around a read adds two round trips (BEGIN, COMMIT) and
            # no consistency: reads run in autocommit, on connections of the same pool.
            self.read_engine = self.write_engine.execution_options(isolation_level="AUTOCOMMIT")
        self._read = sessionmaker(self.read_engine, expire_on_commit=False)
        self._write = sessionmaker(self.write_engine, expire_on_commit=False)
        self.loop_reads = LoopReads(
            url, pool_size=pool_size, prepare=lambda engine: _ping_when_idle(engine, idle_ping)
        )

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        if in_greenlet():
            with self.loop_reads.session() as session:
                yield session
            return
        if not self.is_sqlite:
            # Autocommit: no transaction to begin or end (closing rolls back nothing).
            with self._read() as session:
                yield session
            return
        with self._read() as session, session.begin():
            yield session

    @contextlib.contextmanager
    def write(self) -> Iterator[Session]:
        refuse_on_loop()
        with self._write() as session, session.begin():
            yield session

    @contextlib.contextmanager
    def startup_lock(self) -> Iterator[None]:
        """Held while a process migrates and bootstraps, so nodes started together take turns
        (PostgreSQL: an advisory lock; SQLite: the writer lock already serializes)."""
        if self.is_sqlite:
            yield
            return
        with self.write_engine.connect() as connection:
            connection.exec_driver_sql(f"SELECT pg_advisory_lock({STARTUP_LOCK})")
            connection.commit()
            try:
                yield
            finally:
                connection.exec_driver_sql(f"SELECT pg_advisory_unlock({STARTUP_LOCK})")
                connection.commit()

    def migrate(self) -> None:
        """Bring the schema to the newest migration (idempotent; one node at a time)."""
        with self.startup_lock():
            self._migrate()

    def _migrate(self) -> None:
        # alembic is imported only by the processes that migrate (a short-lived CLI doesn't).
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.write_engine.connect() as connection:
            raw = connection.connection.driver_connection
            assert raw is not None
            if self.is_sqlite:
                # SQLite changes a table by copying it, which foreign keys of rows in other
                # tables would refuse; the pragma only takes effect outside a transaction.
                raw.execute("PRAGMA foreign_keys=OFF")
            try:
                with connection.begin():
                    config.attributes["connection"] = connection
                    command.upgrade(config, "head")
                    if self.is_sqlite:
                        broken = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
                        if broken:
                            raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")
            finally:
                if self.is_sqlite:
                    raw.execute("PRAGMA foreign_keys=ON")

    def dispose(self) -> None:
        self.loop_reads.dispose()
        self.read_engine.dispose()
        self.write_engine.dispose()


def is_transient(exc: BaseException) -> bool:
    """A failure the database itself undid and that succeeds when tried again: a deadlock, a
    serialization failure (PostgreSQL), a lock wait that timed out (SQLite's busy writer)."""
    if not isinstance(exc, DBAPIError):
        return False
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate in ("40P01", "40001"):  # deadlock_detected, serialization_failure
        return True
    return "database is locked" in str(exc.orig)


# PostgreSQL's codes for a server that cannot take the connection: class 08 (connection
# exceptions), too many connections, and shutting down, restarting or still starting.
_UNREACHABLE_STATES = ("08", "53300", "57P01", "57P02", "57P03")


def unreachable(exc: BaseException) -> bool:
    """Whether a database error says the database could not be reached or dropped the link, as
    opposed to refusing a statement: what a client may retry a moment later."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    state = getattr(exc.orig, "sqlstate", False)
    if state is None:
        # psycopg's own errors carry no code: the client could not connect or lost the link.
        return type(exc.orig).__name__ == "OperationalError"
    return isinstance(state, str) and state.startswith(_UNREACHABLE_STATES)


def reason(exc: BaseException) -> str:
    """The first line of what the driver said (SQLAlchemy's own text runs to several lines)."""
    orig = getattr(exc, "orig", None)
    lines = str(orig if orig is not None else exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
