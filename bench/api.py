"""REST API benchmark: a real `viewfinder serve` (one API process, one worker) on SQLite and on
PostgreSQL, loaded by wrk (Debian's package) over loopback.

For each database:
1. ``GET /healthz`` alone: what the server answers when a request does no work at all.
2. ``GET /api/v1/builds`` alone (a project with a few builds): the list endpoint's throughput,
   and its ratio to /healthz measured the same way in the same run; the two take turns for
   ``--rounds`` rounds (3 by default) and the median round of each, and the median of the
   rounds' ratios, are reported with the ratios' spread.
3. Reads and uploads at once: readers list builds while writers upload stories (PUT of a
   1280x800 PNG into an open build), each with its own latency percentiles.

Run from the repository root with ``python -m bench.api`` (``--seconds`` per load, 10 by
default). Ends with one line:
``api: reads X rps (Y of healthz), p99 Z ms; writes W rps, p99 V ms`` for SQLite, and the same
for PostgreSQL after a semicolon.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

from tests.server import Server, running_server
from viewfinder.imaging import png

REPORT = """
done = function(summary, latency, requests)
  local out = string.format(
    '{"requests": %d, "seconds": %.3f, "errors": %d, "p50": %.3f, "p95": %.3f, "p99": %.3f}',
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.status + summary.errors.timeout,
    latency:percentile(50) / 1e3, latency:percentile(95) / 1e3, latency:percentile(99) / 1e3)
  io.stderr:write("WRK " .. out .. "\\n")
end
"""

GET = """
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer {key}"
"""

# Each wrk thread uploads stories of its own names into the open build.
PUT = """
local body = io.open("{image}", "rb"):read("*all")
local counter = 0
local id = 0
local ids = 0
setup = function(thread)
  ids = ids + 1
  thread:set("id", ids)
end
request = function()
  counter = counter + 1
  local path = "/api/v1/builds/{build}/stories?name=load-" .. id .. "-" .. counter
  return wrk.format("PUT", path, {{
    ["Authorization"] = "Bearer {key}", ["Content-Type"] = "image/png"}}, body)
end
"""


@dataclass(frozen=True)
class Load:
    rps: float
    p50: float
    p95: float
    p99: float
    errors: int

    def line(self) -> str:
        return (
            f"{self.rps:7.0f} rps  p50 {self.p50:6.1f} ms  p95 {self.p95:6.1f} ms  "
            f"p99 {self.p99:6.1f} ms  errors {self.errors}"
        )


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def screenshot(seed: int) -> bytes:
    """A 1280x800 page-like PNG: rows of 'text' on a pale background."""
    rng = np.random.default_rng(seed)
    pixels = np.full((800, 1280, 3), 246, np.uint8)
    for row in range(24):
        y = 24 + row * 32
        pixels[y : y + 12, 40 : 40 + int(rng.integers(300, 1200))] = (50, 55, 65)
    return png.encode(pixels, level=1)


def wrk(
    url: str, script: str, *, seconds: int, connections: int, threads: int = 1
) -> subprocess.Popen[str]:
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    return subprocess.Popen(
        [*command, "-s", script, url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result(proc: subprocess.Popen[str]) -> Load:
    out, err = proc.communicate()
    found = [line[4:] for line in err.splitlines() if line.startswith("WRK ")]
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"wrk failed ({proc.returncode}):\n{out}\n{err}")
    data = json.loads(found[-1])
    non_2xx = 0
    for line in out.splitlines():
        if "Non-2xx or 3xx responses" in line:
            non_2xx = int(line.split(":")[1])
    return Load(
        rps=data["requests"] / data["seconds"],
        p50=data["p50"],
        p95=data["p95"],
        p99=data["p99"],
        errors=int(data["errors"]) + non_2xx,
    )


def median_load(loads: list[Load]) -> Load:
    """The round of median throughput."""
    return sorted(loads, key=lambda load: load.rps)[len(loads) // 2]


def seed(server: Server, image: bytes) -> str:
    """A few finished builds to list, and an open one to upload into; returns the open one."""
    headers = {"Authorization": f"Bearer {server.keys['ci']}"}
    with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=60) as api:
        for n in range(3):
            build = api.post("/builds", json={"commit_sha": f"{n + 1:04x}abcd"}).json()["id"]
            for name in ("home", "cart"):
                put = api.put(
                    f"/builds/{build}/stories",
                    params={"name": name},
                    content=image,
                    headers={"Content-Type": "image/png"},
                )
                put.raise_for_status()
            api.post(f"/builds/{build}/finalize").raise_for_status()
        return str(api.post("/builds", json={"commit_sha": "ffffabcd"}).json()["id"])


def measure(
    backend: str, root: Path, seconds: int, rounds: int
) -> tuple[list[Load], list[Load], Load, Load]:
    image = screenshot(1)
    scripts = root / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "image.png").write_bytes(image)
    (root / backend).mkdir()
    with running_server(backend, root / backend) as server:
        build = seed(server, image)
        read = scripts / "read.lua"
        read.write_text(GET.format(key=server.keys["admin"]) + REPORT)
        plain = scripts / "plain.lua"
        plain.write_text(REPORT)
        write = scripts / "write.lua"
        write.write_text(
            PUT.format(key=server.keys["ci"], build=build, image=scripts / "image.png") + REPORT
        )
        # /healthz and the list take turns, so that both see the machine in the same state; each
        # is its median round, and the ratio the median of the rounds' ratios.
        healths, lists = [], []
        for _ in range(rounds):
            url = f"{server.url}/healthz"
            healths.append(result(wrk(url, str(plain), seconds=seconds, connections=20)))
            url = f"{server.url}/api/v1/builds"
            lists.append(result(wrk(url, str(read), seconds=seconds, connections=20)))
        mixed_reads = wrk(f"{server.url}/api/v1/builds", str(read), seconds=seconds, connections=16)
        mixed_writes = wrk(server.url, str(write), seconds=seconds, connections=4)
        return healths, lists, result(mixed_reads), result(mixed_writes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="length of each load")
    parser.add_argument(
        "--rounds", type=int, default=3, help="turns of /healthz and the list alone (default 3)"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk (make bench does)")
    lines = []
    for backend in ("sqlite", "postgresql"):
        with tempfile.TemporaryDirectory(prefix="vf-api-") as tmp:
            log(f"{backend}: loading a real viewfinder serve for {args.seconds} s per load ...")
            healths, lists, mixed_reads, writes = measure(
                backend, Path(tmp), args.seconds, args.rounds
            )
        ratios = sorted(r.rps / h.rps for h, r in zip(healths, lists, strict=True))
        ratio = statistics.median(ratios)
        health, reads = median_load(healths), median_load(lists)
        spread = f"rounds {ratios[0]:.2f}-{ratios[-1]:.2f}"
        print(f"\n{backend}")
        print(f"  GET /healthz alone          {health.line()}")
        print(f"  GET /api/v1/builds alone    {reads.line()}   ({ratio:.2f} of healthz, {spread})")
        print(f"  GET /api/v1/builds, mixed   {mixed_reads.line()}")
        print(f"  PUT a story, mixed          {writes.line()}")
        lines.append(
            f"reads {reads.rps:.0f} rps ({ratio:.2f} of healthz), p99 {mixed_reads.p99:.0f} ms; "
            f"writes {writes.rps:.0f} rps, p99 {writes.p99:.0f} ms ({backend})"
        )
    print("\napi: " + "; ".join(lines))


if __name__ == "__main__":
    main()
