"""Build benchmark: a whole CI build of screenshots through a real Viewfinder server, against
reg-cli comparing the same two folders.

Run from the repository root with ``python -m bench.build`` (``make bench`` installs Chromium
and the peers first). Progress goes to stderr; the table and the closing ``build:`` line go to
stdout, and every raw result to bench/.results/build.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench.build_corpus import BuildCorpus, ensure_build_corpus
from bench.build_tools import REG_CLI, BenchError, Run, reg_cli, viewfinder_upload
from bench.vfserver import Server, running_server

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / ".results"
WORKERS = 2


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.build", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument("--stories", type=int, default=500, help="stories a build has")
    parser.add_argument("--changed", type=int, default=25, help="stories the head changes")
    parser.add_argument("--keep", action="store_true", help="keep the server's data and logs")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not 0 < args.changed <= args.stories:
        parser.error("need 0 < --changed <= --stories")
    return args


def commit(label: str) -> str:
    return hashlib.sha1(f"viewfinder bench build {label}".encode()).hexdigest()


def check_viewfinder(run: Run, changed: int, unchanged: int) -> None:
    if (run.changed, run.unchanged) != (changed, unchanged):
        raise BenchError(
            f"viewfinder found {run.changed} changed and {run.unchanged} unchanged stories, "
            f"expected {changed} and {unchanged}"
        )


def timed_rounds(
    server: Server, corpus: BuildCorpus, rounds: int, work: Path
) -> list[dict[str, Run]]:
    changed = len(corpus.changed)
    unchanged = len(corpus.stories) - changed
    results = []
    for r in range(1, rounds + 1):
        # Alternating who goes first spreads out whatever the one before leaves behind
        # (a warm page cache, a busy disk).
        order = ("viewfinder", "reg-cli") if r % 2 else ("reg-cli", "viewfinder")
        runs: dict[str, Run] = {}
        for tool in order:
            if tool == "viewfinder":
                # No approval between rounds: every round compares against the same baselines.
                runs[tool] = viewfinder_upload(server, corpus.head, commit(f"head {r}"), 1)
                check_viewfinder(runs[tool], changed, unchanged)
            else:
                runs[tool] = reg_cli(corpus.head, corpus.base, work, str(r))
                if runs[tool].changed != changed:
                    log(f"build: WARNING reg-cli found {runs[tool].changed} changed, not {changed}")
            log(f"build: round {r}/{rounds} {tool} {runs[tool].seconds:.2f} s")
        results.append(runs)
    return results


def medians(results: list[dict[str, Run]]) -> tuple[float, float]:
    return (
        statistics.median(r["viewfinder"].seconds for r in results),
        statistics.median(r["reg-cli"].seconds for r in results),
    )


def final_line(stories: int, vf: float, reg: float) -> str:
    return (
        f"build: viewfinder {vf:.2f} s, reg-cli {reg:.2f} s, ratio {vf / reg:.2f}, "
        f"stories/s {stories / vf:.1f}"
    )


def table(results: list[dict[str, Run]]) -> str:
    rows = [
        f"{'round':<7}{'first':<12}{'viewfinder s':>13}{'reg-cli s':>11}{'ratio':>7}"
        f"{'vf changed/unchanged':>23}{'reg-cli failed/passed':>24}"
    ]
    for r, runs in enumerate(results, 1):
        vf, reg = runs["viewfinder"], runs["reg-cli"]
        rows.append(
            f"{r:<7}{next(iter(runs)):<12}{vf.seconds:>13.2f}{reg.seconds:>11.2f}"
            f"{vf.seconds / reg.seconds:>7.2f}{f'{vf.changed}/{vf.unchanged}':>23}"
            f"{f'{reg.changed}/{reg.unchanged}':>24}"
        )
    vf_s, reg_s = medians(results)
    rows.append(f"{'median':<19}{vf_s:>13.2f}{reg_s:>11.2f}{vf_s / reg_s:>7.2f}")
    rows += [
        "",
        "where viewfinder's time went, seconds, from the server's timestamps of each build:",
        "  start = CLI start-up and POST /builds; upload = every PUT, then finalize;",
        "  tail = comparisons still running after finalize; exit = the CLI seeing it and exiting;",
        "  diff latency = median of a changed story's comparison, from its PUT to its result",
    ]
    rows.append(f"{'round':<7}{'start':>8}{'upload':>8}{'tail':>8}{'exit':>8}{'diff latency':>14}")
    for r, runs in enumerate(results, 1):
        p = runs["viewfinder"].phases
        rows.append(
            f"{r:<7}{p['start_and_create']:>8.2f}{p['upload']:>8.2f}{p['after_finalize']:>8.2f}"
            f"{p['wait_and_exit']:>8.2f}{p.get('comparison_latency_median', 0):>14.2f}"
        )
    return "\n".join(rows)


def versions(corpus: BuildCorpus) -> dict[str, str]:
    meta = REG_CLI.parents[1] / "package.json"
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    return {
        "python": platform.python_version(),
        "viewfinder": version("viewfinder"),
        "reg-cli": json.loads(meta.read_text())["version"] if meta.is_file() else "missing",
        "node": node.stdout.strip(),
        "chromium": str(corpus.manifest.get("chromium", "?")),
    }


def save(record: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "build.json"
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def bench(args: argparse.Namespace, corpus: BuildCorpus, work: Path) -> dict[str, Any]:
    with running_server(work, WORKERS) as server:
        log(f"build: server at {server.url}, data in {work}; uploading the baseline")
        first = viewfinder_upload(server, corpus.base, commit("base"), 0)
        if first.new != len(corpus.stories):
            raise BenchError(f"the first build registered {first.new} new stories, not all")
        log(f"build: first build, all new: {first.seconds:.2f} s")
        # Not timed: node's first start reads its modules from disk, which the server's
        # start-up and the baseline upload did for Viewfinder.
        warmup = reg_cli(corpus.head, corpus.base, work, "warmup")
        log(f"build: reg-cli warm-up {warmup.seconds:.2f} s")
        results = timed_rounds(server, corpus, args.rounds, work)
    vf, reg = medians(results)
    return {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rounds": args.rounds,
        "stories": args.stories,
        "changed": args.changed,
        "workers": WORKERS,
        "database": "sqlite",
        "cpus": os.cpu_count(),
        "load_average_1_5_15min": os.getloadavg(),
        "versions": versions(corpus),
        "corpus": {k: v for k, v in corpus.manifest.items() if k != "changed_stories"},
        "first_build_all_new": asdict(first),
        "reg_cli_warmup": asdict(warmup),
        "timed": [{tool: asdict(run) for tool, run in runs.items()} for runs in results],
        "median_seconds": {"viewfinder": vf, "reg-cli": reg},
        "ratio": vf / reg,
        "stories_per_second": args.stories / vf,
        "table": table(results),
        "line": final_line(args.stories, vf, reg),
    }


def _terminate(signum: int, _frame: object) -> None:
    # SystemExit unwinds through the finally blocks, which stop the server and the tool that is
    # running; Python's default for SIGTERM would leave them behind (a CI time-out sends it).
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    if not REG_CLI.is_file():
        log(f"build: error: no reg-cli at {REG_CLI}: `make bench` installs the peers")
        return 2
    corpus = ensure_build_corpus(args.stories, args.changed)
    try:
        if args.keep:
            record = bench(args, corpus, Path(tempfile.mkdtemp(prefix="vf-bench-build-")))
        else:
            with tempfile.TemporaryDirectory(prefix="vf-bench-build-") as tmp:
                record = bench(args, corpus, Path(tmp))
    except BenchError as exc:
        log(f"build: error: {exc}")
        return 2
    path = save(record)
    first, warmup = record["first_build_all_new"], record["reg_cli_warmup"]
    print(
        f"{args.stories} stories at 1280x800, {args.changed} changed in the head build; "
        f"viewfinder serve --workers {WORKERS} on SQLite; {args.rounds} rounds, "
        "ratio = viewfinder time / reg-cli time"
    )
    print(
        f"first build, all new: viewfinder {first['seconds']:.2f} s ({first['new']} new; "
        f"upload phase {first['phases']['upload']:.2f} s)"
    )
    print(f"reg-cli warm-up run, not counted: {warmup['seconds']:.2f} s")
    print()
    print(record["table"])
    print()
    print(f"raw results: {path.relative_to(REPO)}")
    print(record["line"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
