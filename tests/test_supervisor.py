"""The server's worker supervisor: a worker that dies is started again, at once when it had been
running, after a growing wait when it dies as soon as it starts (it cannot reach its database,
say), and the watch goes on when releasing the dead worker's jobs fails."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.jobs import supervisor
from viewfinder.jobs.supervisor import Supervisor
from viewfinder.services.env import Env
from viewfinder.settings import Settings


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    """On SQLite alone: what is watched here is processes, the database only records jobs."""
    opened = Env.open(Settings(data_dir=tmp_path / "data", workers=0, secret="test"))
    yield opened
    opened.close()


def watch(env: Env, code: str, seconds: float) -> Supervisor:
    running = Supervisor(env, 1, [sys.executable, "-c", code])
    running.start()
    try:
        time.sleep(seconds)
    finally:
        running.stop()
    return running


def test_a_worker_that_dies_at_start_is_restarted_after_a_growing_wait(env: Env) -> None:
    # Restarts at about 0.5, 1.5 and 3.5 s (waits of 0.5, 1 and 2 s), not every half second.
    running = watch(env, "raise SystemExit(3)", 4.2)
    assert 2 <= running.restarts <= 4, running.restarts
    assert running.backoff[0] >= 2


def test_a_worker_that_ran_steadily_is_restarted_at_once(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor, "STEADY", 0.2)
    running = watch(env, "import time; time.sleep(0.3)", 3.0)
    assert running.restarts >= 3, running.restarts
    assert running.backoff == [0.0]


def test_the_watch_goes_on_when_the_jobs_cannot_be_released(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(*_args: object) -> int:
        raise ConnectionError("the database is down")

    monkeypatch.setattr(supervisor.queue, "release", unreachable)
    monkeypatch.setattr(supervisor, "STEADY", 0.2)
    running = watch(env, "import time; time.sleep(0.3)", 2.5)
    assert running.restarts >= 2, running.restarts


def test_a_worker_being_restarted_when_the_server_stops_is_stopped_too(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The restart is held inside its spawn until stop() has begun: a worker started after
    # stop() looked at the list would be left running and never waited for.
    monkeypatch.setattr(supervisor, "STEADY", 0.2)
    running = Supervisor(env, 1, [sys.executable, "-c", "import time; time.sleep(0.3)"])
    spawned: list[subprocess.Popen[bytes]] = []
    restarting = threading.Event()
    spawn = running._spawn

    def slow_spawn() -> subprocess.Popen[bytes]:
        if spawned:
            restarting.set()
            time.sleep(0.5)
        spawned.append(spawn())
        return spawned[-1]

    monkeypatch.setattr(running, "_spawn", slow_spawn)
    running.start()
    try:
        assert restarting.wait(10), "the worker was never restarted"
    finally:
        running.stop()
    left = [proc for proc in spawned if proc.poll() is None]
    for proc in left:
        proc.kill()
        proc.wait()
    assert not left, f"{len(left)} worker(s) still running after stop()"
