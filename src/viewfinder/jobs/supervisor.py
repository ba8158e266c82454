"""Keeps `viewfinder serve`'s worker processes running: starts them, restarts any that dies
(its jobs become runnable again at once), and stops them with the server.

Comparisons run in processes of their own so that a crash in one (or the kernel killing it for
memory) costs at most a retry of that job, never the server."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading

from sqlalchemy import select

from viewfinder.jobs import queue
from viewfinder.services.env import Env
from viewfinder.settings import Settings
from viewfinder.store.models import Job

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


def release_dead_workers(env: Env) -> int:
    """Jobs left running by workers of this host that no longer exist are runnable again."""
    host = socket.gethostname()
    with env.db.read() as s:
        holders = set(s.scalars(select(Job.locked_by).where(Job.state == "running")))
    released = 0
    for holder in holders:
        if not holder or ":" not in holder:
            continue
        name, _, pid = holder.rpartition(":")
        if name == host and pid.isdigit() and not _alive(int(pid)):
            released += queue.release(env, holder)
    return released


class Supervisor:
    def __init__(self, env: Env, count: int) -> None:
        self.env = env
        self.count = count
        self.procs: list[subprocess.Popen[bytes]] = []
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._environ = settings_environ(env.settings)

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "viewfinder.jobs.worker", "--supervised"],
            env=self._environ,
            stdin=subprocess.DEVNULL,
        )

    def start(self) -> None:
        released = release_dead_workers(self.env)
        if released:
            log.info("%d job(s) of stopped workers are runnable again", released)
        self.procs = [self._spawn() for _ in range(self.count)]
        self._thread = threading.Thread(target=self._watch, name="worker-supervisor", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        host = socket.gethostname()
        while not self._stopping.wait(0.5):
            for i, proc in enumerate(self.procs):
                code = proc.poll()
                if code is None or self._stopping.is_set():
                    continue
                log.warning("worker %d exited with %s; restarting it", proc.pid, code)
                queue.release(self.env, f"{host}:{proc.pid}")
                self.procs[i] = self._spawn()

    def stop(self, timeout: float = 10.0) -> None:
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
