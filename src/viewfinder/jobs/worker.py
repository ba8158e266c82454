"""A worker: claims jobs and runs them until told to stop, renewing each job's lease while it
runs and stopping a job that outlives its kind's time limit.

`viewfinder serve` keeps a few worker processes running (supervisor.py); at scale, run
`viewfinder worker` on other machines against the same PostgreSQL and blob store. Which kinds
of job exist is the registry's business (registry.py): services register them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

from viewfinder.jobs import queue, registry
from viewfinder.jobs.queue import Claimed, Runtime
from viewfinder.store.db import is_transient, reason, unreachable

log = logging.getLogger("viewfinder.worker")


class JobTimeout(Exception):
    """The job ran past its kind's time limit."""


class Liveness:
    """When the worker last showed it was alive: its loop went round, or the job it runs
    renewed its lease. A health check reads ``age()``."""

    def __init__(self) -> None:
        self._at = time.monotonic()
        self.jobs_run = 0

    def beat(self) -> None:
        self._at = time.monotonic()

    def age(self) -> float:
        return time.monotonic() - self._at


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise JobTimeout in this thread after ``seconds``. Only the main thread receives
    signals, so elsewhere (a worker run inside a test thread) the limit is not enforced."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise JobTimeout(f"stopped after its time limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _heartbeat(rt: Runtime, job: Claimed, worker: str, liveness: Liveness | None) -> Iterator[None]:
    """Renew the job's lease every third of it while the job runs, so a live worker keeps its
    job however long it takes and a dead one loses it within one lease."""
    done = threading.Event()
    every = max(rt.settings.job_lease_seconds / 3, 0.5)

    def beat() -> None:
        while not done.wait(every):
            try:
                if not queue.renew(rt, job.id, worker):
                    log.warning("job %s is no longer this worker's (lease lost)", job.id)
                    return
                if liveness is not None:
                    liveness.beat()
            except Exception as exc:  # a database hiccup: try again at the next beat
                if not unreachable(exc):
                    log.exception("could not renew the lease of job %s", job.id)

    thread = threading.Thread(target=beat, name=f"lease-{job.id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(every + 1)


def run_one(rt: Runtime, worker: str, liveness: Liveness | None = None) -> bool:
    """Claim and run one job. Returns False when there was nothing to do."""
    job = queue.claim(rt, worker)
    if job is None:
        return False
    kind = registry.KINDS.get(job.kind)
    if kind is None:
        queue.retry_or_fail(rt, job, f"no worker here knows jobs of kind {job.kind!r}", final=True)
        return True
    try:
        with _heartbeat(rt, job, worker, liveness), _time_limit(kind.time_limit):
            finished = kind.run(rt, job.subject_id, job.id)
    except Exception as exc:
        if unreachable(exc):
            raise  # not the job's fault: it runs again once its lease has passed (see run)
        message = f"{type(exc).__name__}: {exc}"
        if is_transient(exc):
            log.info("job %s (%s) met a transient database error; again at once", job.id, job.kind)
            queue.retry_now(rt, job, message)
            return True
        log.exception("job %s (%s %s) failed", job.id, job.kind, job.subject_id)
        final = isinstance(exc, kind.final)
        if not queue.retry_or_fail(rt, job, message, final=final):
            why = "failed" if final else f"gave up after {job.attempts} attempts"
            kind.give_up(rt, job.subject_id, f"{why}: {exc}")
        return True
    if not finished:
        queue.finish(rt, job.id)
    return True


def _run_due(rt: Runtime, due: dict[str, float]) -> None:
    """Run the periodic tasks that are due. Raises the database's error when it cannot be
    reached: the task stays due, for when it is back."""
    now = time.monotonic()
    for task in list(registry.PERIODIC.values()):
        if now < due.get(task.name, 0.0):
            continue
        try:
            task.run(rt)
        except Exception as exc:
            if unreachable(exc):
                raise
            log.exception("periodic task %s failed; it runs again in %g s", task.name, task.every)
        due[task.name] = now + task.every


class Outage:
    """While the database cannot be reached a worker waits, longer each time up to MAX_WAIT, and
    says so once when it begins and once when it ends, not at every try."""

    FIRST_WAIT = 0.25
    MAX_WAIT = 5.0

    def __init__(self) -> None:
        self.since: float | None = None
        self.wait = self.FIRST_WAIT

    def met(self, exc: BaseException) -> float:
        """Note a failed try; returns the seconds to wait before the next."""
        if self.since is None:
            self.since = time.monotonic()
            log.warning("the database cannot be reached (%s); waiting for it", reason(exc))
        else:
            self.wait = min(self.wait * 2, self.MAX_WAIT)
        return self.wait

    def over(self) -> None:
        if self.since is not None:
            log.warning("the database is back after %.1f s", time.monotonic() - self.since)
        self.since, self.wait = None, self.FIRST_WAIT


def run(
    rt: Runtime,
    *,
    stop: threading.Event | None = None,
    alive: Callable[[], bool] = lambda: True,
    liveness: Liveness | None = None,
) -> None:
    """Work until ``stop`` is set or ``alive()`` turns false (a supervised worker's server is
    gone). Idle workers poll every 50 ms at most, so a burst of jobs starts at once."""
    stop = stop or threading.Event()
    name = worker_name()
    idle = 0.01
    due: dict[str, float] = {}
    outage = Outage()
    while not stop.is_set():
        if not alive():
            log.info("the server is gone; stopping")
            break
        if liveness is not None:
            liveness.beat()
        try:
            _run_due(rt, due)
            ran = run_one(rt, name, liveness)
        except Exception as exc:
            if not unreachable(exc):
                raise
            # A job it held is run again by whoever claims it once its lease has passed.
            stop.wait(outage.met(exc))
            continue
        outage.over()
        if ran:
            idle = 0.01
            if liveness is not None:
                liveness.jobs_run += 1
        else:
            stop.wait(idle)
            idle = min(idle * 2, 0.05)
