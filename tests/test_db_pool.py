"""The PostgreSQL pool checks a connection that sat idle before handing it out, and only then:
a database restart (every backend terminated) costs no request."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

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


def read_one(db: Database) -> int:
    with db.read() as session:
        return int(session.execute(text("SELECT 1")).scalar_one())


def test_a_connection_idle_past_the_limit_is_checked_and_replaced(pg_url: str) -> None:
    db = Database(pg_url, idle_ping=0.0)
    try:
        assert read_one(db) == 1
        assert backends_ended(pg_url) == 1
        assert read_one(db) == 1  # the dead connection was found on checkout and replaced
    finally:
        db.write_engine.dispose()


def test_a_connection_used_a_moment_ago_is_handed_out_unchecked(pg_url: str) -> None:
    db = Database(pg_url, idle_ping=3600.0)
    try:
        assert read_one(db) == 1
        assert backends_ended(pg_url) == 1
        with pytest.raises(OperationalError):
            read_one(db)  # no round trip spent on checking: the dead link shows on first use
        assert read_one(db) == 1  # ... and the pool then starts afresh
    finally:
        db.write_engine.dispose()
