"""Clients for the persistent peer processes: ``odiff --server`` and the pixelmatch server.

Both speak one JSON object per line each way. A request's time is the wall time from writing
its line to reading the answer line, so it covers reading, decoding, comparing and writing the
diff inside the peer, plus a pipe round trip (tens of microseconds).
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

ROOT = Path(__file__).resolve().parent
PEERS = ROOT / ".peers"
PIXELMATCH_SERVER = ROOT / "peers" / "pixelmatch_server.mjs"


class PeerError(RuntimeError):
    pass


@dataclass(frozen=True)
class Outcome:
    seconds: float
    changed: int | None  # None: the tool cannot compare this pair (pixelmatch, sizes differ)


def odiff_binary(peers: Path = PEERS) -> Path:
    # The npm bin is a node wrapper that spawns the real binary: calling the binary directly
    # keeps node out of the timings and makes /proc/<pid> the process doing the work.
    found = sorted(peers.glob("node_modules/@odiff/*/odiff"))
    if not found:
        raise PeerError(f"no odiff binary under {peers}/node_modules/@odiff: run `make bench`")
    return found[0]


def odiff_command(peers: Path = PEERS) -> Path:
    """The `odiff` command the odiff-bin package installs: a node script that runs the binary,
    what a person who installed odiff from npm types."""
    found = peers / "node_modules" / ".bin" / "odiff"
    if not found.exists():
        raise PeerError(f"no {found}: run `make bench`")
    return found


def vm_hwm_kib(pid: int) -> int:
    """Peak resident set size of a live process, from the kernel's own high-water mark."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise PeerError(f"no VmHWM for pid {pid}")


class LineServer:
    """A child process that prints a ready line, then answers one JSON line per request."""

    def __init__(self, argv: list[str], name: str) -> None:
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        ready = self._read()
        if ready.get("ready") is not True:
            self.close()
            raise PeerError(f"{name} did not start: {ready}")

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise PeerError(f"{self.name} exited (code {self.proc.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def request(self, payload: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = (json.dumps(payload) + "\n").encode()
        start = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        raw = self.proc.stdout.readline()
        elapsed = time.perf_counter() - start
        if not raw:
            raise PeerError(f"{self.name} exited (code {self.proc.poll()})")
        answer: dict[str, Any] = json.loads(raw)
        return elapsed, answer

    def peak_kib(self) -> int:
        return vm_hwm_kib(self.proc.pid)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Odiff(LineServer):
    def __init__(self, peers: Path = PEERS) -> None:
        super().__init__([str(odiff_binary(peers)), "--server"], "odiff --server")
        self._next_id = 0

    def compare(self, base: Path, candidate: Path, output: Path, *, antialiasing: bool) -> Outcome:
        self._next_id += 1
        payload = {
            "requestId": self._next_id,
            "base": str(base),
            "compare": str(candidate),
            "output": str(output),
            "options": {"threshold": 0.1, "antialiasing": antialiasing},
        }
        seconds, answer = self.request(payload)
        if answer.get("requestId") != self._next_id or "error" in answer:
            raise PeerError(f"odiff answered {answer} to {payload}")
        # A match carries no diffCount, and odiff writes no diff image for it.
        return Outcome(seconds, int(answer.get("diffCount", 0)))


class Pixelmatch(LineServer):
    def __init__(self, peers: Path = PEERS) -> None:
        super().__init__(["node", str(PIXELMATCH_SERVER), str(peers)], "pixelmatch server")
        self._next_id = 0

    def compare(self, base: Path, candidate: Path, output: Path) -> Outcome:
        self._next_id += 1
        payload = {
            "id": self._next_id,
            "base": str(base),
            "candidate": str(candidate),
            "output": str(output),
            "threshold": 0.1,
            "includeAA": False,
        }
        seconds, answer = self.request(payload)
        if answer.get("id") != self._next_id:
            raise PeerError(f"pixelmatch answered {answer} to {payload}")
        if "error" in answer:
            if str(answer["error"]).startswith("sizes differ"):
                return Outcome(seconds, None)
            raise PeerError(f"pixelmatch failed on {payload}: {answer['error']}")
        return Outcome(seconds, int(answer["diff"]))
