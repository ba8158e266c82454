"""A Viewfinder server of several processes on loopback, as an operator runs one: an S3 API
server (moto's), API nodes (`viewfinder serve --workers 0`), workers (`viewfinder worker`), all
on one PostgreSQL database with one secret, and a round-robin TCP load balancer in front."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.server import KEY_LINE, VIEWFINDER, _database, clean_environ, free_port, stop
from tests.tcp_link import pipe

S3_ENV = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}


@contextlib.contextmanager
def s3_server(root: Path) -> Iterator[str]:
    """moto's S3 API server on a free loopback port; yields its endpoint."""
    port = free_port()
    log = root / "moto.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("moto_server")),
                "-H",
                "127.0.0.1",
                "-p",
                str(port),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"the S3 server did not start:\n{log.read_text()}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def bucket(endpoint: str) -> str:
    """A new, empty bucket."""
    name = f"vf-{uuid.uuid4().hex[:12]}"
    assert httpx.put(f"{endpoint}/{name}").status_code == 200
    return name


class Balancer:
    """Round-robin TCP proxy: each client connection goes to the next backend that accepts it.
    A backend that refuses is skipped; one that dies drops its connections, as a real load
    balancer would."""

    def __init__(self, backends: list[int]) -> None:
        self.backends = backends
        self._next = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _connect(self) -> socket.socket | None:
        for _ in range(len(self.backends)):
            port = self.backends[self._next % len(self.backends)]
            self._next += 1
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=2)
            except OSError:
                continue
        return None

    def _accept(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = self._connect()
            if upstream is None:
                client.close()
                continue
            threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        self._thread.join(5)


@dataclass
class Cluster:
    root: Path
    database_url: str
    environ: dict[str, str]
    keys: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, tuple[subprocess.Popen[bytes], int]] = field(default_factory=dict)
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start_node(self, name: str, *, wait: bool = True) -> subprocess.Popen[bytes]:
        port = free_port()
        out, err = self.root / f"{name}.out", self.root / f"{name}.err"
        argv = [VIEWFINDER, "serve", "--port", str(port), "--workers", "0"]
        argv += ["--data-dir", str(self.root / name)]
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen(
                argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, env=self.environ
            )
        self.nodes[name] = (proc, port)
        if wait:
            self.wait_node(name)
        return proc

    def wait_node(self, name: str) -> None:
        proc, port = self.nodes[name]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited:\n{self.log(name)}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    found = dict(KEY_LINE.findall((self.root / f"{name}.out").read_text()))
                    self.keys = found or self.keys
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not answer in 60 s:\n{self.log(name)}")

    def start_worker(self, name: str) -> subprocess.Popen[bytes]:
        log = self.root / f"{name}.err"
        with log.open("wb") as stderr:
            proc = subprocess.Popen(
                [VIEWFINDER, "worker", "--data-dir", str(self.root / name)],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                env=self.environ,
            )
        self.workers[name] = proc
        return proc

    def start_worker_with_health(self, name: str) -> int:
        """A worker with its health check on a free port; returns the port."""
        port = free_port()
        log = self.root / f"{name}.err"
        with log.open("wb") as stderr:
            proc = subprocess.Popen(
                [VIEWFINDER, "worker", "--data-dir", str(self.root / name)]
                + ["--health-port", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                env=self.environ,
            )
        self.workers[name] = proc
        return port

    def stop_worker(self, name: str) -> None:
        stop(self.workers.pop(name))

    def log(self, name: str) -> str:
        parts = [self.root / f"{name}.{ext}" for ext in ("out", "err")]
        return "\n".join(p.read_text() for p in parts if p.exists())

    def kill(self, name: str) -> None:
        proc = self.nodes[name][0] if name in self.nodes else self.workers[name]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def stop_all(self) -> None:
        for proc, _ in self.nodes.values():
            stop(proc)
        for proc in self.workers.values():
            stop(proc)


@contextlib.contextmanager
def cluster(root: Path, s3_endpoint: str) -> Iterator[Cluster]:
    """A fresh PostgreSQL database, a fresh bucket and one secret; no process started yet."""
    root.mkdir(parents=True, exist_ok=True)
    with _database("postgresql") as database_url:
        assert database_url is not None
        environ = clean_environ() | S3_ENV
        environ |= {
            "VIEWFINDER_DATABASE_URL": database_url,
            "VIEWFINDER_BLOB_URL": f"s3://{bucket(s3_endpoint)}/blobs",
            "VIEWFINDER_S3_ENDPOINT": s3_endpoint,
            "VIEWFINDER_SECRET": uuid.uuid4().hex,
        }
        made = Cluster(root, database_url, environ)
        try:
            yield made
        finally:
            made.stop_all()
