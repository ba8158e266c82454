"""One timed run of each tool over a whole build: `viewfinder upload --wait` against a running
server, and reg-cli over the two folders. Each time is the wall time from starting the process
to its exit, as a CI step sees it."""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.servers import PEERS
from bench.vfserver import VIEWFINDER, Server, clean_environ

REG_CLI = PEERS / "node_modules" / "reg-cli" / "dist" / "cli.js"
RUN_TIMEOUT = 900.0


class BenchError(RuntimeError):
    pass


@dataclass
class Run:
    tool: str
    seconds: float
    exit_code: int
    changed: int  # viewfinder: stories changed; reg-cli: failed items
    unchanged: int  # viewfinder: stories unchanged; reg-cli: passed items
    new: int = 0
    phases: dict[str, Any] = field(default_factory=dict)


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT, check=False
    )
    return time.perf_counter() - start, done


def _when(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def _phases(server: Server, build_id: str, started: float, ended: float) -> dict[str, Any]:
    """Where the run's time went, from the server's own timestamps of the build."""
    build = server.get(f"/builds/{build_id}?limit=1")
    created, finalized = _when(build["created_at"]), _when(build["finalized_at"])
    completed = _when(build["completed_at"])
    phases: dict[str, Any] = {
        "start_and_create": round(created - started, 3),  # CLI start-up, POST /builds
        "upload": round(finalized - created, 3),  # every PUT, then finalize
        "after_finalize": round(completed - finalized, 3),  # comparisons still running
        "wait_and_exit": round(ended - completed, 3),  # the CLI's next poll, printing, exit
    }
    stories = server.get(f"/builds/{build_id}/stories?state=changed&limit=100")["items"]
    latencies = []
    for item in stories:
        diff = server.get(f"/diffs/{item['diff_id']}")
        latencies.append(_when(diff["completed_at"]) - _when(diff["requested_at"]))
    if latencies:
        phases["comparison_latency_median"] = round(statistics.median(latencies), 3)
        phases["comparison_latency_max"] = round(max(latencies), 3)
    return phases


def viewfinder_upload(server: Server, folder: Path, sha: str, expect_exit: int) -> Run:
    argv = [VIEWFINDER, "upload", str(folder), "--commit", sha, "--wait", "--json"]
    started = time.time()
    seconds, done = _timed(argv, server.environ("ci"))
    ended = time.time()
    if done.returncode != expect_exit:
        raise BenchError(
            f"`viewfinder upload {folder}` exited {done.returncode}, expected {expect_exit}:\n"
            f"{done.stderr[-2000:]}"
        )
    summary = json.loads(done.stdout)
    counts = summary["counts"]
    phases = _phases(server, summary["build_id"], started, ended)
    phases["build_id"] = summary["build_id"]
    return Run(
        "viewfinder",
        seconds,
        done.returncode,
        counts["changed"],
        counts["unchanged"],
        counts["new"],
        phases,
    )


def reg_cli(head: Path, base: Path, work: Path, label: str) -> Run:
    """reg-cli with its defaults: actual = head, expected = base; exits 1 on changes."""
    if not REG_CLI.is_file():
        raise BenchError(f"no reg-cli at {REG_CLI}: run `make bench` to install the peers")
    diff_dir, report = work / f"reg-{label}", work / f"reg-{label}.json"
    argv = ["node", str(REG_CLI), str(head), str(base), str(diff_dir), "-J", str(report)]
    seconds, done = _timed(argv, clean_environ())
    if done.returncode not in (0, 1) or not report.is_file():
        raise BenchError(f"reg-cli exited {done.returncode}:\n{done.stderr[-2000:]}")
    found = json.loads(report.read_text(encoding="utf-8"))
    return Run(
        "reg-cli",
        seconds,
        done.returncode,
        len(found["failedItems"]),
        len(found["passedItems"]),
        len(found["newItems"]),
    )
