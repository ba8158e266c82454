"""The job queue and its workers: leases and their renewal, retries with backoff, final errors,
time limits, transient database errors, and releasing a dead worker's jobs. Test kinds of job
are registered through the registry the services use; no part of Viewfinder is patched."""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from tests.conftest import Keys, drain, shot
from viewfinder.jobs import queue, registry, worker
from viewfinder.services import comparisons, diffs, pushes
from viewfinder.services.env import Env
from viewfinder.store.models import Blob, Image, Job, utcnow


def queued_diff(env: Env, keys: Keys) -> str:
    pushes.push(env, keys.ci, shot(), name="home", context_key="x", compare=True)
    result = pushes.push(
        env,
        keys.ci,
        shot(box=(0, 0, 4, 4)),
        name="home",
        context_key="x",
        compare=True,
        wait_seconds=0,
    )
    assert result.diff is not None
    return result.diff.id


class Recorder:
    """A kind of job for tests: runs ``body`` and records what the worker did with it."""

    def __init__(self, name: str, body, *, final=(), time_limit: float = 30.0) -> None:  # type: ignore[no-untyped-def]
        self.runs: list[str] = []
        self.given_up: list[tuple[str, str]] = []
        self.name = name

        def run(_rt: object, subject: str, _job: int) -> bool:
            self.runs.append(subject)
            body()
            return False

        registry.register(
            registry.Kind(
                name,
                run=run,
                give_up=lambda _rt, subject, why: self.given_up.append((subject, why)),
                final=final,
                time_limit=time_limit,
            )
        )

    def enqueue(self, env: Env, subject: str = "sub_1") -> None:
        with env.db.write() as s:
            queue.enqueue(s, self.name, subject)

    def job(self, env: Env) -> Job:
        with env.db.read() as s:
            found = s.scalar(select(Job).where(Job.kind == self.name))
            assert found is not None
            return found


def due_now(env: Env) -> None:
    """Skip a retry's backoff."""
    with env.db.write() as s:
        s.execute(update(Job).values(run_after=utcnow()))


def test_a_claimed_job_is_not_claimed_twice_until_its_lease_runs_out(env: Env, keys: Keys) -> None:
    queued_diff(env, keys)
    job = queue.claim(env, "host:1")
    assert job is not None and job.attempts == 1
    assert queue.claim(env, "host:2") is None
    with env.db.write() as s:
        s.execute(update(Job).values(locked_until=utcnow() - timedelta(seconds=1)))
    again = queue.claim(env, "host:2")
    assert again is not None and again.id == job.id and again.attempts == 2
    assert not queue.renew(env, job.id, "host:1"), "the first worker lost its lease"
    assert queue.renew(env, job.id, "host:2")


def test_a_dead_workers_jobs_are_released_at_once(env: Env, keys: Keys) -> None:
    diff = queued_diff(env, keys)
    assert queue.claim(env, "host:99") is not None
    assert queue.release(env, "host:99") == 1
    assert drain(env) == 1
    assert diffs.get_diff(env, keys.ci, diff).outcome == "changed"


def test_a_comparison_whose_image_is_gone_is_retried_then_fails_with_the_reason(
    env: Env, keys: Keys
) -> None:
    diff = queued_diff(env, keys)
    with env.db.read() as s:
        candidate = s.scalar(
            select(Image.sha256).where(Image.id == diffs.get_diff(env, keys.ci, diff).image_id)
        )
    assert candidate is not None
    env.blobs.delete(candidate)
    for attempt in range(1, env.settings.job_max_attempts + 1):
        due_now(env)
        assert worker.run_one(env, "host:1")
        state = diffs.get_diff(env, keys.ci, diff).state
        assert state == ("failed" if attempt == env.settings.job_max_attempts else "requested")
    record = diffs.get_diff(env, keys.ci, diff)
    assert f"gave up after {env.settings.job_max_attempts} attempts" in (
        record.failure_reason or ""
    )
    assert "missing" in (record.failure_reason or "")
    assert not worker.run_one(env, "host:1")


def test_a_final_error_fails_the_job_at_once_without_retrying(env: Env) -> None:
    def refuse() -> None:
        raise LookupError("this subject cannot be worked on")

    kind = Recorder("test-final", refuse, final=(LookupError,))
    kind.enqueue(env)
    assert worker.run_one(env, "host:1")
    assert kind.job(env).state == "failed"
    assert kind.given_up == [("sub_1", "failed: this subject cannot be worked on")]
    assert not worker.run_one(env, "host:1")


def test_other_errors_back_off_and_are_retried_until_the_last_attempt(env: Env) -> None:
    def flaky() -> None:
        raise RuntimeError("disk on fire")

    kind = Recorder("test-retried", flaky)
    kind.enqueue(env)
    assert worker.run_one(env, "host:1")
    job = kind.job(env)
    assert (job.state, job.attempts) == ("pending", 1)
    assert job.run_after > utcnow(), "a retry waits"
    assert not worker.run_one(env, "host:1")
    for _ in range(env.settings.job_max_attempts - 1):
        due_now(env)
        assert worker.run_one(env, "host:1")
    assert kind.job(env).state == "failed"
    assert kind.given_up == [("sub_1", "gave up after 3 attempts: disk on fire")]


def test_a_job_past_its_time_limit_is_stopped_and_retried(env: Env) -> None:
    started = []

    def slow() -> None:
        started.append(time.monotonic())
        time.sleep(5)

    kind = Recorder("test-slow", slow, time_limit=0.2)
    kind.enqueue(env)
    assert worker.run_one(env, "host:1")
    assert time.monotonic() - started[0] < 2, "the job was stopped at its limit"
    job = kind.job(env)
    assert (job.state, job.attempts) == ("pending", 1)
    assert "time limit" in (job.last_error or "")


def test_a_transient_database_error_is_retried_at_once_without_spending_an_attempt(
    env: Env,
) -> None:
    calls = []

    def deadlocked() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("UPDATE ...", {}, Exception("database is locked"))

    kind = Recorder("test-transient", deadlocked)
    kind.enqueue(env)
    assert worker.run_one(env, "host:1")
    job = kind.job(env)
    assert (job.state, job.attempts) == ("pending", 0)
    assert worker.run_one(env, "host:1"), "runnable again at once"
    assert kind.job(env).state == "done"


def test_a_long_job_keeps_its_lease_while_it_runs(env: Env) -> None:
    env = dataclasses.replace(
        env, settings=env.settings.model_copy(update={"job_lease_seconds": 1})
    )
    seen: list[object] = []
    release = threading.Event()

    def long() -> None:
        release.wait(10)

    kind = Recorder("test-long", long)
    kind.enqueue(env)
    lease = env.settings.job_lease_seconds
    thread = threading.Thread(target=worker.run_one, args=(env, "host:1"))
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not kind.runs:
            time.sleep(0.01)
        first = kind.job(env).locked_until
        # The heartbeat renews every third of the lease: wait for one renewal.
        deadline = time.monotonic() + lease
        while time.monotonic() < deadline:
            now = kind.job(env).locked_until
            if now is not None and first is not None and now > first:
                seen.append(now)
                break
            time.sleep(0.1)
    finally:
        release.set()
        thread.join(10)
    assert seen, "the lease was renewed while the job ran"
    assert kind.job(env).state == "done"


def test_a_job_of_an_unknown_kind_fails_with_a_message(env: Env) -> None:
    with env.db.write() as s:
        queue.enqueue(s, "no-such-kind", "x")
    assert worker.run_one(env, "host:1")
    with env.db.read() as s:
        job = s.scalar(select(Job).where(Job.kind == "no-such-kind"))
        assert job is not None and job.state == "failed"
        assert "no worker here knows jobs of kind 'no-such-kind'" in (job.last_error or "")


def test_a_job_for_a_finished_comparison_does_nothing(env: Env, keys: Keys) -> None:
    diff = queued_diff(env, keys)
    drain(env)
    # Signed URLs carry an expiry, so compare the records without them.
    before = diffs.get_diff(env, keys.ci, diff).model_dump(exclude={"urls"})
    assert comparisons.run(env, diff) is False
    assert diffs.get_diff(env, keys.ci, diff).model_dump(exclude={"urls"}) == before
    with env.db.read() as s:
        assert s.scalar(select(Blob.media_type).limit(1)) == "image/png"


@pytest.fixture(autouse=True)
def _forget_test_kinds() -> object:
    yield
    for name in [n for n in registry.KINDS if n.startswith("test-")]:
        del registry.KINDS[name]


def test_finished_jobs_are_swept_after_their_keeping_time(env: Env, keys: Keys) -> None:
    queued_diff(env, keys)
    drain(env)
    assert queue.sweep(env) == 0, "a job done a moment ago is kept"
    with env.db.write() as s:
        s.execute(update(Job).values(finished_at=utcnow() - timedelta(days=2)))
    assert queue.sweep(env) == 1
    with env.db.read() as s:
        assert s.scalar(select(Job.id)) is None
