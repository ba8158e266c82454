"""Short reads run on the event loop (store.loopreads): they answer the same records as on a
thread, never hold the loop while the database makes them wait, may not write or touch blobs,
and work from one event loop after another over the same Database."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import psycopg
import pytest

from tests.conftest import Keys, make_build, shot
from viewfinder.plumbing.offloop import call
from viewfinder.services import builds
from viewfinder.services.env import Env
from viewfinder.services.shortreads import is_short_read, short_read
from viewfinder.store.models import Build


def ids(page: object) -> list[str]:
    return [item.id for item in page.items]  # type: ignore[attr-defined]


async def _ticking(read: asyncio.Future[object] | asyncio.Task[object]) -> int:
    """How many times the loop ran another task, every 10 ms, while ``read`` was pending."""
    ticks = 0
    while not read.done():
        await asyncio.sleep(0.01)
        ticks += 1
    return ticks


def test_short_read_answers_as_a_thread_does_from_loop_after_loop(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaaa1111", {"home": shot()})
    make_build(env, keys.ci, "bbbb2222", {"home": shot((0, 0, 0))})
    assert is_short_read(builds.list_builds)
    on_thread = builds.list_builds(env, keys.admin)
    # Each asyncio.run is a new loop: the loop's connections are made again for it (PostgreSQL)
    # and the records are the same as a service thread reads.
    for _ in range(3):
        on_loop = asyncio.run(call(builds.list_builds, env, keys.admin))
        assert ids(on_loop) == ids(on_thread)
        assert on_loop == on_thread


def test_a_short_read_may_not_write_or_touch_blobs(env: Env, keys: Keys) -> None:
    @short_read
    def writes(env: Env) -> None:
        with env.db.write() as s:
            s.add(Build(project_id=keys.admin.project_id, commit_sha="cccc3333"))

    @short_read
    def reads_a_blob(env: Env) -> bytes:
        return env.blobs.get("0" * 64)

    for fn in (writes, reads_a_blob):
        with pytest.raises(RuntimeError, match="may only read the database"):
            asyncio.run(call(fn, env))
    assert ids(builds.list_builds(env, keys.admin)) == []


def test_postgresql_read_waiting_for_a_lock_leaves_the_loop_free(env: Env, keys: Keys) -> None:
    if env.db.is_sqlite:
        pytest.skip("PostgreSQL's lock waits; SQLite's are below")
    make_build(env, keys.ci, "aaaa1111", {"home": shot()})
    raw = env.db.url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(raw) as blocker:
        # A table lock that every read of builds waits for (as during a migration).
        blocker.execute("LOCK TABLE builds IN ACCESS EXCLUSIVE MODE")

        async def scenario() -> tuple[int, object]:
            read = asyncio.ensure_future(call(builds.list_builds, env, keys.admin))
            loop = asyncio.get_running_loop()
            loop.call_later(0.5, blocker.rollback)
            ticks = await _ticking(read)
            return ticks, await read

        ticks, page = asyncio.run(scenario())
    # Half a second of waiting for the lock, and the loop ran other work throughout.
    assert ticks >= 20
    assert len(ids(page)) == 1


def test_sqlite_read_that_meets_a_lock_moves_to_a_thread(env: Env, keys: Keys) -> None:
    if not env.db.is_sqlite:
        pytest.skip("SQLite's file locks")
    make_build(env, keys.ci, "aaaa1111", {"home": shot()})
    path = env.db.url.split("///", 1)[-1]
    locked, release = threading.Event(), threading.Event()

    def hold_the_file() -> None:
        # Exclusive locking mode keeps the file locked after a write, past a WAL reader.
        conn = sqlite3.connect(path, isolation_level=None, timeout=10)
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("UPDATE builds SET branch = branch")
        locked.set()
        release.wait(10)
        conn.execute("COMMIT")
        conn.close()

    # The lock needs the file to itself: the pools' idle connections are closed first.
    env.db.dispose()
    holder = threading.Thread(target=hold_the_file)
    holder.start()
    assert locked.wait(10)

    async def scenario() -> tuple[int, object]:
        read = asyncio.ensure_future(call(builds.list_builds, env, keys.admin))
        asyncio.get_running_loop().call_later(0.5, release.set)
        ticks = await _ticking(read)
        return ticks, await read

    started = time.monotonic()
    ticks, page = asyncio.run(scenario())
    holder.join(10)
    assert time.monotonic() - started >= 0.5
    assert ticks >= 20, "the loop waited for SQLite's lock instead of a service thread"
    assert len(ids(page)) == 1
