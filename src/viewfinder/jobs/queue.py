"""The job queue: rows in the jobs table. A job names one subject id; workers claim it with a
lease, and a job whose lease ran out (its worker died) is claimed again. Retries back off."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from viewfinder.services.env import Env
from viewfinder.store.models import Job, utcnow


def enqueue(s: Session, kind: str, subject_id: str) -> None:
    s.add(Job(kind=kind, subject_id=subject_id))


@dataclass(frozen=True)
class Claimed:
    id: int
    kind: str
    subject_id: str
    attempts: int


def claim(env: Env, worker: str) -> Claimed | None:
    """Take the oldest runnable job: pending, or running with an expired lease."""
    now = utcnow()
    lease = now + timedelta(seconds=env.settings.job_lease_seconds)
    with env.db.write() as s:
        query = (
            select(Job)
            .where(
                or_(
                    (Job.state == "pending") & (Job.run_after <= now),
                    (Job.state == "running") & (Job.locked_until < now),
                )
            )
            .order_by(Job.id)
            .limit(1)
        )
        if not env.db.is_sqlite:
            query = query.with_for_update(skip_locked=True)
        job = s.scalar(query)
        if job is None:
            return None
        job.state = "running"
        job.locked_by = worker
        job.locked_until = lease
        job.attempts += 1
        return Claimed(job.id, job.kind, job.subject_id, job.attempts)


def mark_done(s: Session, job_id: int) -> None:
    """Mark a job done inside the caller's transaction (the one that stores its result)."""
    s.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(state="done", finished_at=utcnow(), locked_by=None, locked_until=None)
    )


def finish(env: Env, job_id: int) -> None:
    with env.db.write() as s:
        mark_done(s, job_id)


def retry_or_fail(env: Env, job: Claimed, error: str) -> bool:
    """After an error: back off and retry, or mark the job failed after the last attempt.
    Returns True when it will be retried."""
    again = job.attempts < env.settings.job_max_attempts
    with env.db.write() as s:
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


def release(env: Env, worker: str) -> int:
    """Make the jobs a dead worker held runnable again at once. Returns how many."""
    with env.db.write() as s:
        result = s.execute(
            update(Job)
            .where(Job.state == "running", Job.locked_by == worker)
            .values(state="pending", locked_by=None, locked_until=None)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]


def pending_count(env: Env) -> int:
    from sqlalchemy import func

    with env.db.read() as s:
        return int(s.scalar(select(func.count()).where(Job.state.in_(("pending", "running")))) or 0)
