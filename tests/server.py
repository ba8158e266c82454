"""A real `viewfinder serve` for CLI tests: its own process, port and data directory, on SQLite
or on a fresh PostgreSQL database, plus a runner for the installed `viewfinder` command.

Test modules define their own module-scoped fixture around `running_server` (tests/conftest.py
is not ours to extend), e.g.::

    @pytest.fixture(scope="module", params=BACKENDS)
    def server(request, tmp_path_factory):
        with running_server(request.param, tmp_path_factory.mktemp("server")) as s:
            yield s
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

VIEWFINDER = str(Path(sys.executable).with_name("viewfinder"))
PG_ADMIN = os.environ.get("VIEWFINDER_TEST_PG", "postgresql://postgres@127.0.0.1/test")
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
KEY_LINE = re.compile(r"^\s+(admin|ci|agent)\s+(vf_proj_\S+)", re.M)


# Under `pytest -n`, tests are spread over workers one by one, so a module-scoped server is
# shared only by the tests of its module that land on the same worker. (xdist_group marks would
# keep them together, but pytest-xdist 3.8 cannot rename nodes on pytest 9, so they are ignored.)
# Each module therefore keeps its server work in one test per backend.
BACKENDS = ["sqlite", "postgresql"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def clean_environ() -> dict[str, str]:
    """This process's environment without any Viewfinder or GitHub setting that would leak in."""
    drop = ("VIEWFINDER_", "GITHUB_REPOSITORY")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


@dataclass
class Server:
    url: str
    data_dir: Path
    database_url: str | None
    keys: dict[str, str] = field(default_factory=dict)

    def environ(self, key: str | None = None, **extra: str) -> dict[str, str]:
        env = clean_environ() | {"VIEWFINDER_URL": self.url, "COLUMNS": "200"}
        if key is not None:
            env["VIEWFINDER_KEY"] = self.keys.get(key, key)
        if self.database_url is not None:
            env["VIEWFINDER_DATABASE_URL"] = self.database_url
            env["VIEWFINDER_SINGLE_NODE"] = "true"  # one machine: blobs and secret stay local
        return env | extra

    def run(
        self, *args: str | Path, key: str | None = "admin", **env: str
    ) -> subprocess.CompletedProcess[str]:
        """`viewfinder ARGS` as a user runs it; ``key`` is a role (admin, ci, agent) or a key,
        ``env`` more environment variables."""
        return subprocess.run(
            [VIEWFINDER, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=120,
            env=self.environ(key, **env),
            check=False,
        )

    def json(self, *args: str | Path, key: str | None = "admin", code: int = 0, **env: str) -> Any:
        """Run with --json, expect exit ``code``, and return the parsed record."""
        done = self.run(*args, "--json", key=key, **env)
        assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
        return json.loads(done.stdout)


@contextlib.contextmanager
def _database(backend: str) -> Iterator[str | None]:
    if backend == "sqlite":
        yield None
        return
    name = f"vf_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """Until the server at ``url`` answers /healthz; its exit or a timeout raises with ``log``."""
    deadline = time.monotonic() + START_TIMEOUT
    delay = 0.05
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"viewfinder serve exited with {proc.returncode}:\n{log.read_text()}"
            )
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)
    raise RuntimeError(f"viewfinder serve did not answer in {START_TIMEOUT} s:\n{log.read_text()}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL when that is not enough in STOP_TIMEOUT seconds."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def launch(
    server: Server,
    root: Path,
    tag: str = "serve",
    settings: Mapping[str, str] | None = None,
    *,
    workers: int = 1,
) -> subprocess.Popen[bytes]:
    """Start `viewfinder serve --workers 1` (or ``workers``) for the server's address and data,
    with more environment variables in ``settings``, and wait until it answers. On a first
    start its keys are read into ``server.keys``."""
    out, err = root / f"{tag}.out", root / f"{tag}.err"
    port = server.url.rsplit(":", 1)[1]
    # Output goes to files: nobody drains a pipe while the tests run, and a full pipe would
    # block the server's access log.
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [
                VIEWFINDER,
                "serve",
                "--port",
                port,
                "--data-dir",
                server.data_dir,
                "--workers",
                str(workers),
            ],
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            env=server.environ() | dict(settings or {}),
        )
    try:
        wait_healthy(proc, server.url, err)
    except BaseException:
        stop(proc)
        raise
    keys = dict(KEY_LINE.findall(out.read_text()))
    if keys:
        server.keys = keys
    return proc


@contextlib.contextmanager
def running_server(
    backend: str, root: Path, *, workers: int = 1, **settings: str
) -> Iterator[Server]:
    """Start `viewfinder serve --workers 1` (or ``workers``; with more environment variables
    in ``settings``) and yield it with its first-start keys."""
    with _database(backend) as database_url:
        server = Server(f"http://127.0.0.1:{free_port()}", root / "data", database_url)
        proc = launch(server, root, settings=settings, workers=workers)
        try:
            assert set(server.keys) == {"admin", "ci", "agent"}
            yield server
        finally:
            stop(proc)
