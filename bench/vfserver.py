"""A real `viewfinder serve` for the build benchmark: its own process, free port and data
directory, on SQLite, with the keys it prints on its first start."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

VIEWFINDER = str(Path(sys.executable).with_name("viewfinder"))
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
KEY_LINE = re.compile(r"^\s+(admin|ci|agent)\s+(vf_proj_\S+)", re.M)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def clean_environ() -> dict[str, str]:
    # A VIEWFINDER_DATABASE_URL or KEY from the caller's shell would point the benchmark at
    # another database or server.
    return {k: v for k, v in os.environ.items() if not k.startswith("VIEWFINDER_")}


@dataclass
class Server:
    url: str
    root: Path
    workers: int
    keys: dict[str, str] = field(default_factory=dict)
    pid: int = 0

    @property
    def stdout(self) -> Path:
        return self.root / "serve.out"

    @property
    def log(self) -> Path:
        return self.root / "serve.err"  # uvicorn's access log and the workers' messages

    def environ(self, role: str = "ci") -> dict[str, str]:
        return clean_environ() | {"VIEWFINDER_URL": self.url, "VIEWFINDER_KEY": self.keys[role]}

    def get(self, path: str, role: str = "ci") -> Any:
        response = httpx.get(
            f"{self.url}/api/v1{path}",
            headers={"Authorization": f"Bearer {self.keys[role]}"},
            timeout=30,
        )
        response.raise_for_status()
        return response.json()


def _wait_healthy(proc: subprocess.Popen[bytes], server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    delay = 0.05
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"viewfinder serve exited with {proc.returncode}:\n{server.log.read_text()}"
            )
        try:
            if httpx.get(f"{server.url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)
    raise RuntimeError(f"viewfinder serve did not answer in {START_TIMEOUT:g} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def running_server(root: Path, workers: int = 2) -> Iterator[Server]:
    """`viewfinder serve` with its data under ``root``; stopped on the way out, errors too."""
    port = free_port()
    server = Server(f"http://127.0.0.1:{port}", root, workers)
    argv = [VIEWFINDER, "serve", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--data-dir", str(root / "data"), "--workers", str(workers)]
    # Files, not pipes: nobody drains a pipe during the rounds, and a full one would block
    # the server's access log.
    with server.stdout.open("wb") as out, server.log.open("wb") as err:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=clean_environ()
        )
    server.pid = proc.pid
    try:
        _wait_healthy(proc, server)
        server.keys = dict(KEY_LINE.findall(server.stdout.read_text()))
        if set(server.keys) != {"admin", "ci", "agent"}:
            raise RuntimeError(f"no first-start keys in:\n{server.stdout.read_text()}")
        yield server
    finally:
        _stop(proc)
