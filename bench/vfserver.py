"""A real `viewfinder serve` for the build benchmark: its own process, free port and data
directory, on SQLite, with the keys it prints on its first start."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

# One way to start, wait for and stop a server, shared with the tests.
from tests.server import KEY_LINE, VIEWFINDER, clean_environ, free_port, stop, wait_healthy

__all__ = ["VIEWFINDER", "Server", "clean_environ", "running_server"]


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
        wait_healthy(proc, server.url, server.log)
        server.keys = dict(KEY_LINE.findall(server.stdout.read_text()))
        if set(server.keys) != {"admin", "ci", "agent"}:
            raise RuntimeError(f"no first-start keys in:\n{server.stdout.read_text()}")
        yield server
    finally:
        stop(proc)
