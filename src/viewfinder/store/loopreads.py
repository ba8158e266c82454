"""Short reads on the event loop: the database sessions of a read that runs on the server's event
loop thread instead of a service thread.

Handing a read to a thread and its answer back costs more than the read: the two threads take
turns at the GIL and wake each other through the kernel: a list request answered at a third of
/healthz's rate (bench/api.py) instead of about half or more. A short read (services.shortreads)
therefore runs in a greenlet on the loop, and its sessions come from here:

- PostgreSQL: psycopg's asynchronous connections through SQLAlchemy's greenlet bridge. Waiting
  for the database suspends the greenlet and frees the loop, so a slow or unreachable database
  holds only the requests that wait for it, as on a thread.
- SQLite: the file is local and readers never wait for the writer (WAL), so a read runs through.
  The only waits left are SQLite's rare short locks (a reader that finds the write-ahead log
  being reset); its connections wait at most BUSY_MS for them and then raise ReadBusy, and the
  read is done again on a service thread, where waiting blocks nobody.

An engine's asynchronous connections belong to the event loop that opened them: the engine is
made for the first loop that reads and remade if another loop reads (tests run several apps over
one Database, one loop after another); `close` disposes of it before its loop ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.util.concurrency import in_greenlet

from viewfinder.store.sqlite import sqlite_engine

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

# How long a SQLite read on the loop waits for a lock before it moves to a service thread.
BUSY_MS = 50


def refuse_on_loop() -> None:
    """Refuse work a short read promised not to do (blobs, writes) when it is done on the loop."""
    if in_greenlet():
        raise RuntimeError(
            "a short read (services.shortreads) may only read the database: this step keeps to "
            "the service threads"
        )


class ReadBusy(Exception):
    """A short read met a lock it may not wait for on the loop: run it on a service thread."""


class LoopReads:
    """Read sessions for code running in a greenlet on the event loop (see the module doc)."""

    def __init__(self, url: str, *, pool_size: int, prepare: Callable[[Any], None]) -> None:
        self.url = url
        self.pool_size = pool_size
        self.is_sqlite = url.startswith("sqlite")
        # Applied to each engine made here (the idle check of pooled PostgreSQL connections).
        self._prepare = prepare
        self._sqlite: sessionmaker[Session] | None = None
        self._engine: AsyncEngine | None = None
        self._sessions: sessionmaker[Session] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A read session; called only inside a greenlet on the running loop."""
        if self.is_sqlite:
            with self._sqlite_sessions()() as session, session.begin():
                try:
                    yield session
                except OperationalError as exc:
                    if "database is locked" in str(exc.orig):
                        raise ReadBusy from exc
                    raise
            return
        with self._pg_sessions()() as session:
            yield session

    def _sqlite_sessions(self) -> sessionmaker[Session]:
        if self._sqlite is None:
            engine = sqlite_engine(
                self.url,
                begin="DEFERRED",
                pragmas=("foreign_keys=ON", f"busy_timeout={BUSY_MS}", "query_only=ON"),
                timeout=BUSY_MS / 1000,
            )
            self._sqlite = sessionmaker(engine, expire_on_commit=False)
        return self._sqlite

    def _pg_sessions(self) -> sessionmaker[Session]:
        from sqlalchemy.util import await_

        loop = asyncio.get_running_loop()
        if self._sessions is None or self._loop is not loop:
            if self._engine is not None:
                # Left by a loop that ended without closing it: its connections are closed
                # from here (the greenlet can wait on this loop).
                await_(self._engine.dispose())
            from sqlalchemy.ext.asyncio import create_async_engine

            # Autocommit, as the threads' reads (store.db): each statement is its own snapshot.
            self._engine = create_async_engine(
                self.url,
                pool_size=self.pool_size,
                max_overflow=self.pool_size,
                isolation_level="AUTOCOMMIT",
            )
            self._prepare(self._engine.sync_engine)
            self._sessions = sessionmaker(self._engine.sync_engine, expire_on_commit=False)
            self._loop = loop
        return self._sessions

    async def close(self) -> None:
        """Close the connections opened on the running loop (before the loop ends)."""
        engine, self._engine, self._sessions, self._loop = self._engine, None, None, None
        if engine is not None:
            await engine.dispose()

    def dispose(self) -> None:
        """Close every connection, from outside any loop (a process shutting down)."""
        if self._sqlite is not None:
            self._sqlite.kw["bind"].dispose()
            self._sqlite = None
        if self._engine is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self.close())
        else:
            # Inside a running loop without a greenlet: the owner's `close` is the way; the
            # connections are left to close with their objects.
            self._engine, self._sessions, self._loop = None, None, None
