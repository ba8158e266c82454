"""Keeps `viewfinder serve`'s worker processes running: starts them, restarts any that dies
(its jobs become runnable again at once), and stops them with the server.

Comparisons run in processes of their own so that a crash in one (or the kernel killing it for
memory) costs at most a retry of that job, never the server."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import threading
import time
from collections.abc import Sequence

from viewfinder.jobs import queue
from viewfinder.jobs.queue import Runtime
from viewfinder.settings import Settings
from viewfinder.store.db import reason

log = logging.getLogger("viewfinder.supervisor")


def settings_environ(settings: Settings) -> dict[str, str]:
    """The environment that gives a child process the same settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIEWFINDER_")}
    for name, value in settings.model_dump().items():
        if value is not None:
            env[f"VIEWFINDER_{name.upper()}"] = str(value)
    env["VIEWFINDER_DATA_DIR"] = str(settings.data_dir.resolve())
    env["VIEWFINDER_DATABASE_URL"] = settings.resolved_database_url
    return env


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def release_dead_workers(rt: Runtime) -> int:
    """Jobs left running by workers of this host that no longer exist are runnable again."""
    host = socket.gethostname()
    released = 0
    for holder in queue.holders(rt):
        if not holder or ":" not in holder:
            continue
        name, _, pid = holder.rpartition(":")
        if name == host and pid.isdigit() and not _alive(int(pid)):
            released += queue.release(rt, holder)
    return released


# A worker that dies within STEADY seconds of its start is started again after a wait that
# doubles each time, up to MAX_BACKOFF: one that cannot start (its database is down, say) is
# not restarted twice a second for as long as that lasts.
STEADY = 10.0
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 30.0


class Supervisor:
    """Runs ``count`` worker processes, each started with ``command`` (a Python command line
    that runs one worker, e.g. ``[python, -m, viewfinder.launch, --supervised]``)."""

    def __init__(self, rt: Runtime, count: int, command: Sequence[str]) -> None:
        self.rt = rt
        self.count = count
        self.command = list(command)
        self.procs: list[subprocess.Popen[bytes]] = []
        self._stopping = threading.Event()
        # Held while a worker is started and while the supervisor begins to stop, so that a
        # restart racing stop() either lands in self.procs before stop() reads it or not at all:
        # a worker started after stop() looked would be left running, never waited for.
        self._spawning = threading.Lock()
        self._thread: threading.Thread | None = None
        self._environ = settings_environ(rt.settings)
        self.started: list[float] = []  # when each slot's process started
        self.backoff: list[float] = []  # each slot's wait before its next restart
        self.restarts = 0

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.command,
            env=self._environ,
            stdin=subprocess.DEVNULL,
        )

    def start(self) -> None:
        released = release_dead_workers(self.rt)
        if released:
            log.info("%d job(s) of stopped workers are runnable again", released)
        self.procs = [self._spawn() for _ in range(self.count)]
        self.started = [time.monotonic()] * self.count
        self.backoff = [0.0] * self.count
        self._thread = threading.Thread(target=self._watch, name="worker-supervisor", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        host = socket.gethostname()
        waiting: dict[int, float] = {}  # slot: when its dead worker is started again
        while not self._stopping.wait(0.5):
            now = time.monotonic()
            for i, proc in enumerate(self.procs):
                if self._stopping.is_set():
                    break
                if i in waiting:
                    if now >= waiting[i]:
                        del waiting[i]
                        self._restart(i)
                    continue
                code = proc.poll()
                if code is None:
                    continue
                quick = now - self.started[i] < STEADY
                self.backoff[i] = (
                    min(max(self.backoff[i] * 2, FIRST_BACKOFF), MAX_BACKOFF) if quick else 0.0
                )
                later = f" in {self.backoff[i]:g} s" if self.backoff[i] else ""
                log.warning("worker %d exited with %s; restarting it%s", proc.pid, code, later)
                try:
                    queue.release(self.rt, f"{host}:{proc.pid}")
                except Exception as exc:
                    # (The database is down, say.) Its jobs are claimed again once their
                    # leases pass; the watch goes on whatever happens here.
                    log.warning(
                        "the jobs of worker %d wait for their leases: %s", proc.pid, reason(exc)
                    )
                if self.backoff[i]:
                    waiting[i] = now + self.backoff[i]
                else:
                    self._restart(i)

    def _restart(self, slot: int) -> None:
        with self._spawning:
            if self._stopping.is_set():
                return
            try:
                self.procs[slot] = self._spawn()
            except OSError as exc:
                log.error("could not start a worker (%s); trying again", exc)
                return
        self.started[slot] = time.monotonic()
        self.restarts += 1

    def stop(self, timeout: float = 10.0) -> None:
        with self._spawning:
            self._stopping.set()
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._thread is not None:
            self._thread.join(timeout)
