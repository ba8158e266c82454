"""A worker process: claims jobs and runs them until told to stop.

`viewfinder serve` keeps a few of these running (see supervisor.py); at scale, run
`viewfinder worker` on other machines against the same PostgreSQL and blob store.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable

from viewfinder.jobs import queue
from viewfinder.runtime import tune_allocator
from viewfinder.services import comparisons, contexts
from viewfinder.services.env import Env
from viewfinder.settings import Settings

log = logging.getLogger("viewfinder.worker")
SWEEP_SECONDS = 60.0  # how often expiry policies with a TTL are applied

# A handler gets the job's subject and id; it returns True when it marked the job done itself,
# in the transaction that stored its result.
HANDLERS: dict[str, Callable[[Env, str, int], bool]] = {comparisons.COMPARE_JOB: comparisons.run}
FAILERS: dict[str, Callable[[Env, str, str], None]] = {comparisons.COMPARE_JOB: comparisons.fail}


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_one(env: Env, worker: str) -> bool:
    """Claim and run one job. Returns False when there was nothing to do."""
    job = queue.claim(env, worker)
    if job is None:
        return False
    try:
        finished = HANDLERS[job.kind](env, job.subject_id, job.id)
    except Exception as exc:
        log.exception("job %s (%s %s) failed", job.id, job.kind, job.subject_id)
        if not queue.retry_or_fail(env, job, f"{type(exc).__name__}: {exc}"):
            FAILERS[job.kind](env, job.subject_id, f"gave up after {job.attempts} attempts: {exc}")
        return True
    if not finished:
        queue.finish(env, job.id)
    return True


def run(
    settings: Settings, *, stop: threading.Event | None = None, supervised: bool = False
) -> None:
    """Work until ``stop`` is set (or SIGTERM/SIGINT in a process of its own). A supervised
    worker also stops when its server is gone, even if the server was killed outright."""
    tune_allocator()
    parent = os.getppid()
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    env = Env.open(settings, migrate=False)
    name = worker_name()
    idle = 0.01
    next_sweep = 0.0
    try:
        while not stop.is_set():
            if supervised and os.getppid() != parent:
                log.info("the server is gone; stopping")
                break
            if time.monotonic() >= next_sweep:
                contexts.expire_by_ttl(env)
                next_sweep = time.monotonic() + SWEEP_SECONDS
            if run_one(env, name):
                idle = 0.01
            else:
                stop.wait(idle)
                idle = min(idle * 2, 0.05)  # poll quickly when work arrives in bursts
    finally:
        env.close()


if __name__ == "__main__":
    import sys

    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(message)s")
    run(Settings(), supervised="--supervised" in sys.argv[1:])
