"""The PostgreSQL pool checks a connection before handing it out when it sat idle or when the
server has ended it (its socket has something to read), and only then: a database restart
(every backend terminated) costs no request, and a healthy connection costs no round trip."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.util import greenlet_spawn

from tests.conftest import PG_ADMIN, _pg_url
from viewfinder.store.db import Database


@pytest.fixture
def pg_url(pg_template: str) -> Iterator[str]:
    name = f"vf_pool_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{pg_template}"')
    yield _pg_url(name)
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def backends_ended(url: str) -> int:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        ).fetchall()
    return len(rows)


@contextlib.contextmanager
def pool(url: str, idle_ping: float) -> Iterator[Database]:
    db = Database(url, idle_ping=idle_ping)
    try:
        yield db
    finally:
        db.write_engine.dispose()


def read_one(db: Database) -> int:
    with db.read() as session:
        return int(session.execute(text("SELECT 1")).scalar_one())


def test_a_connection_idle_past_the_limit_is_checked_and_replaced(pg_url: str) -> None:
    with pool(pg_url, idle_ping=0.0) as db:
        assert read_one(db) == 1
        assert backends_ended(pg_url) == 1
        assert read_one(db) == 1  # the dead connection was found on checkout and replaced


def counted_pings(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    dialect = db.write_engine.dialect
    ping = dialect.do_ping

    def counting(connection: object) -> bool:
        pings.append(1)
        return ping(connection)

    monkeypatch.setattr(dialect, "do_ping", counting)
    return pings


def ended_and_gone(url: str) -> None:
    """End every backend of the database and wait until the server has closed them."""
    assert backends_ended(url) >= 1
    name = url.rsplit("/", 1)[1]
    deadline = time.monotonic() + 5
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        while time.monotonic() < deadline:
            query = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s"
            row = conn.execute(query, (name,)).fetchone()
            if row is not None and row[0] == 0:
                return
            time.sleep(0.01)
    raise AssertionError("the backends did not end")


def test_a_connection_used_a_moment_ago_is_handed_out_without_a_round_trip(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pool(pg_url, idle_ping=3600.0) as db:
        pings = counted_pings(db, monkeypatch)
        for _ in range(5):
            assert read_one(db) == 1
        assert pings == []


def test_a_connection_the_server_ended_a_moment_ago_is_replaced(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pool(pg_url, idle_ping=3600.0) as db:
        pings = counted_pings(db, monkeypatch)
        assert read_one(db) == 1
        with db.write() as session:
            session.execute(text("SELECT 1"))
        ended_and_gone(pg_url)
        # Seen on checkout from the socket, pinged, replaced: no request fails.
        assert read_one(db) == 1
        with db.write() as session:
            assert session.execute(text("SELECT 2")).scalar_one() == 2
        assert pings


def test_a_short_read_on_the_loop_survives_the_server_ending_its_connections(pg_url: str) -> None:
    async def main(db: Database) -> None:
        try:
            assert await greenlet_spawn(read_one, db) == 1
            ended_and_gone(pg_url)
            assert await greenlet_spawn(read_one, db) == 1
        finally:
            await db.loop_reads.close()

    with pool(pg_url, idle_ping=3600.0) as db:
        asyncio.run(main(db))
