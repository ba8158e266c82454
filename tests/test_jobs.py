"""The job queue: leases, retries with backoff, giving up, and releasing a dead worker's jobs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from tests.conftest import Keys, drain, shot
from viewfinder.jobs import queue, worker
from viewfinder.services import comparisons, pushes
from viewfinder.services.env import Env
from viewfinder.store.models import Job, utcnow


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


def test_a_claimed_job_is_not_claimed_twice_until_its_lease_runs_out(env: Env, keys: Keys) -> None:
    queued_diff(env, keys)
    job = queue.claim(env, "host:1")
    assert job is not None and job.attempts == 1
    assert queue.claim(env, "host:2") is None
    with env.db.write() as s:
        s.execute(update(Job).values(locked_until=utcnow() - timedelta(seconds=1)))
    again = queue.claim(env, "host:2")
    assert again is not None and again.id == job.id and again.attempts == 2


def test_a_dead_workers_jobs_are_released_at_once(env: Env, keys: Keys) -> None:
    diff = queued_diff(env, keys)
    assert queue.claim(env, "host:99") is not None
    assert queue.release(env, "host:99") == 1
    assert drain(env) == 1
    assert comparisons.get_diff(env, keys.ci, diff).outcome == "changed"


def test_a_failing_job_is_retried_with_backoff_then_its_comparison_fails(
    env: Env, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    diff = queued_diff(env, keys)

    def explode(_env: Env, _id: str, _job: int) -> bool:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(worker.HANDLERS, comparisons.COMPARE_JOB, explode)
    for attempt in range(1, env.settings.job_max_attempts + 1):
        with env.db.write() as s:  # skip the backoff wait
            s.execute(update(Job).values(run_after=utcnow()))
        assert worker.run_one(env, "host:1")
        state = comparisons.get_diff(env, keys.ci, diff).state
        assert state == ("failed" if attempt == env.settings.job_max_attempts else "requested")
    record = comparisons.get_diff(env, keys.ci, diff)
    assert "gave up after 3 attempts: disk on fire" in (record.failure_reason or "")
    assert not worker.run_one(env, "host:1")


def test_a_job_for_a_finished_comparison_does_nothing(env: Env, keys: Keys) -> None:
    diff = queued_diff(env, keys)
    drain(env)
    # Signed URLs carry an expiry, so compare the records without them.
    before = comparisons.get_diff(env, keys.ci, diff).model_dump(exclude={"urls"})
    comparisons.run(env, diff)
    assert comparisons.get_diff(env, keys.ci, diff).model_dump(exclude={"urls"}) == before
