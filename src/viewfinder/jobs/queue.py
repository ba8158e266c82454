"""The job queue: rows in the jobs table. A job names one subject id; a worker claims it with a
lease and renews the lease while it runs, so a job whose lease ran out belongs to a worker that
died and is claimed again. Retries back off; a final error or the last attempt fails the job.

This module sits below services: it knows the database and the settings, nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from viewfinder.jobs import registry
from viewfinder.settings import Settings
from viewfinder.store.db import Database
from viewfinder.store.models import Job, utcnow


class Runtime(Protocol):
    """What the queue and the workers need of their caller (services' Env is one)."""

    @property
    def db(self) -> Database: ...

    @property
    def settings(self) -> Settings: ...


def enqueue(s: Session, kind: str, subject_id: str, *, delay: float = 0.0) -> None:
    """Queue a job in the caller's transaction: it exists exactly when the caller's writes do.
    ``delay`` (seconds) holds it back, for retries on a schedule of their own (webhooks)."""
    job = Job(kind=kind, subject_id=subject_id)
    if delay > 0:
        job.run_after = utcnow() + timedelta(seconds=delay)
    s.add(job)


@dataclass(frozen=True)
class Claimed:
    id: int
    kind: str
    subject_id: str
    attempts: int


def claim(rt: Runtime, worker: str) -> Claimed | None:
    """Take the oldest runnable job: pending and due, or running with an expired lease."""
    now = utcnow()
    lease = now + timedelta(seconds=rt.settings.job_lease_seconds)
    with rt.db.write() as s:
        query = (
            select(Job)
            .where(
                Job.state.in_(("pending", "running")),  # what the partial index holds
                or_(
                    (Job.state == "pending") & (Job.run_after <= now),
                    (Job.state == "running") & (Job.locked_until < now),
                ),
            )
            .order_by(Job.id)
            .limit(1)
        )
        if not rt.db.is_sqlite:
            query = query.with_for_update(skip_locked=True)
        job = s.scalar(query)
        if job is None:
            return None
        job.state = "running"
        job.locked_by = worker
        job.locked_until = lease
        job.attempts += 1
        return Claimed(job.id, job.kind, job.subject_id, job.attempts)


def renew(rt: Runtime, job_id: int, worker: str) -> bool:
    """Extend the lease of a job this worker runs. False when the job is no longer its own
    (its lease ran out and another worker took it, or it finished)."""
    lease = utcnow() + timedelta(seconds=rt.settings.job_lease_seconds)
    with rt.db.write() as s:
        result = s.execute(
            update(Job)
            .where(Job.id == job_id, Job.state == "running", Job.locked_by == worker)
            .values(locked_until=lease)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def mark_done(s: Session, job_id: int) -> None:
    """Mark a job done inside the caller's transaction (the one that stores its result)."""
    s.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(state="done", finished_at=utcnow(), locked_by=None, locked_until=None)
    )


def finish(rt: Runtime, job_id: int) -> None:
    with rt.db.write() as s:
        mark_done(s, job_id)


def retry_or_fail(rt: Runtime, job: Claimed, error: str, *, final: bool = False) -> bool:
    """After an error: back off and retry, or mark the job failed (after the last attempt, or
    at once for a ``final`` error). Returns True when it will be retried."""
    again = not final and job.attempts < rt.settings.job_max_attempts
    with rt.db.write() as s:
        values: dict[str, object] = {
            "last_error": error[:4000],
            "locked_by": None,
            "locked_until": None,
        }
        if again:
            values |= {
                "state": "pending",
                "run_after": utcnow() + timedelta(seconds=2**job.attempts),
            }
        else:
            values |= {"state": "failed", "finished_at": utcnow()}
        s.execute(update(Job).where(Job.id == job.id).values(**values))
    return again


def retry_now(rt: Runtime, job: Claimed, error: str) -> None:
    """Make a job runnable again at once without spending its attempt: the database undid the
    work (a deadlock or serialization failure), not the job."""
    with rt.db.write() as s:
        s.execute(
            update(Job)
            .where(Job.id == job.id)
            .values(
                state="pending",
                attempts=Job.attempts - 1,
                run_after=utcnow(),
                last_error=error[:4000],
                locked_by=None,
                locked_until=None,
            )
        )


def release(rt: Runtime, worker: str) -> int:
    """Make the jobs a dead worker held runnable again at once. Returns how many."""
    with rt.db.write() as s:
        result = s.execute(
            update(Job)
            .where(Job.state == "running", Job.locked_by == worker)
            .values(state="pending", locked_by=None, locked_until=None)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]


def holders(rt: Runtime) -> set[str]:
    """The workers that hold running jobs."""
    with rt.db.read() as s:
        return {h for h in s.scalars(select(Job.locked_by).where(Job.state == "running")) if h}


DONE_KEPT = timedelta(days=1)  # finished jobs stay this long, for a look at what ran
FAILED_KEPT = timedelta(days=7)


def sweep(rt: Runtime) -> int:
    """Delete finished jobs past their keeping time. Returns how many."""
    now = utcnow()
    with rt.db.write() as s:
        result = s.execute(
            delete(Job).where(
                ((Job.state == "done") & (Job.finished_at < now - DONE_KEPT))
                | ((Job.state == "failed") & (Job.finished_at < now - FAILED_KEPT))
            )
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]


def pending_count(rt: Runtime) -> int:
    with rt.db.read() as s:
        return int(s.scalar(select(func.count()).where(Job.state.in_(("pending", "running")))) or 0)


registry.register_periodic(registry.Periodic("sweep-jobs", 3600.0, sweep))
