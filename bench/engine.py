"""Engine benchmark: Viewfinder in-process against odiff --server and a persistent pixelmatch.

Run from the repository root with ``python -m bench.engine`` (``make bench`` installs the peers
first). Progress goes to stderr; the tables and the closing ``engine:`` line go to stdout, and
every raw timing to bench/.results/engine.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.corpus import MANIFEST, Pair, ensure_corpus
from bench.measure import Memory, Runner, Samples, probe_memory, time_back_to_back, time_rounds
from bench.report import Row, final_line, memory_table, summarise, summary, table
from bench.servers import PEERS, Odiff, Pixelmatch, odiff_binary
from tests import style_corpus

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / ".results"
MEMORY_PAIR = "article@1280x8000/subpixel"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--quick", action="store_true", help="only the 1280x800 pairs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tool order shuffle")
    parser.add_argument(
        "--style-rounds",
        type=int,
        default=3,
        help="timed rounds over the style corpus (default 3; 0 leaves it out)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("odiff-bin", "pixelmatch", "pngjs"):
        meta = PEERS / "node_modules" / package / "package.json"
        found[package] = json.loads(meta.read_text())["version"] if meta.exists() else "missing"
    # odiff prints its version on stderr.
    odiff = subprocess.run([str(odiff_binary()), "--version"], capture_output=True, text=True)
    found["odiff"] = (odiff.stdout + odiff.stderr).strip().split(" - ")[0]
    found["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    found["node"] = found["node"].strip()
    found["chromium"] = json.loads(MANIFEST.read_text()).get("chromium", "?")
    return found


def save(
    args: argparse.Namespace,
    samples: list[Samples],
    memory: list[Memory],
    line: str,
    styled: list[Samples],
    warm: list[Samples],
) -> Path:
    rows = summarise(samples)
    record: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rounds": args.rounds,
        "seed": args.seed,
        "quick": args.quick,
        "cpus": os.cpu_count(),
        # The run takes minutes: a 5-minute load well above 1 means something else shared the CPUs.
        "load_average_1_5_15min": os.getloadavg(),
        "versions": versions(),
        "pairs": [
            {
                **asdict(s.pair),
                "canvas": s.canvas,
                "seconds": s.seconds,
                "changed": s.changed,
                "median_ms": row.ms,
                "ratio": row.ratio,
            }
            for s, row in zip(samples, rows, strict=True)
        ],
        "summary": summary(rows),
        "memory": {"pair": MEMORY_PAIR, "tools": [asdict(m) for m in memory]},
        "line": line,
        "styles": {
            "rounds": args.style_rounds,
            "pairs": [
                {"name": s.pair.name, "seconds": s.seconds, "changed": s.changed} for s in styled
            ],
            "back_to_back": [{"name": s.pair.name, "seconds": s.seconds} for s in warm],
            "line": style_line(styled, args.style_rounds, warm) if styled else None,
        },
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "engine.json"
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pairs = ensure_corpus()
    selected = [p for p in pairs if p.size == "1280x800"] if args.quick else pairs
    memory_pair: Pair = next(p for p in pairs if p.name == MEMORY_PAIR)
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=RESULTS, prefix="diffs-") as tmp:
        out_dir = Path(tmp)
        with Odiff() as odiff, Pixelmatch() as pixelmatch:
            runner = Runner(odiff, pixelmatch, out_dir)
            samples = time_rounds(runner, selected, args.rounds, args.seed)
            styled, warm = [], []
            if args.style_rounds:
                styles = style_pairs()
                styled = time_rounds(runner, styles, args.style_rounds, args.seed)
                warm = time_back_to_back(
                    runner, styles, args.style_rounds, args.seed, ("viewfinder", "odiff")
                )
        # After the timing servers are gone, so that nothing else holds memory or CPU.
        memory = probe_memory(memory_pair, out_dir)
    rows = summarise(samples)
    stats = summary(rows)
    line = final_line(stats, memory)
    path = save(args, samples, memory, line, styled, warm)
    print(
        f"medians of {args.rounds} interleaved rounds after one warm-up round;"
        " ratio = viewfinder time / peer time, below 1 means Viewfinder is faster"
    )
    print(table(rows, stats))
    print()
    print(memory_table(memory, MEMORY_PAIR))
    print()
    print(f"raw timings: {path.relative_to(REPO)}")
    print(line)
    if styled:
        print(style_line(styled, args.style_rounds, warm))
    return 0


def style_pairs() -> list[Pair]:
    """The style corpus's changed pairs (tests/style_corpus.py: four page styles at device
    scales 1 and 2, light and dark), where the analysis has the most to explain."""
    pairs = []
    for p in style_corpus.ensure():
        base, candidate = style_corpus.OUT / p["base"], style_corpus.OUT / p["candidate"]
        if base.read_bytes() != candidate.read_bytes():
            size = f"{640 * p['scale']}x{560 * p['scale']}"
            # Absolute file names: Pair joins them to its corpus folder, which leaves them be.
            pairs.append(Pair(p["name"], p["style"], size, p["variant"], str(base), str(candidate)))
    return pairs


def style_line(samples: list[Samples], rounds: int, warm: list[Samples]) -> str:
    rows = summarise(samples)
    line = (
        f"engine (styles, {len(rows)} pairs, {rounds} rounds): median ratio vs odiff-server "
        f"{_against_odiff(rows)}, vs pixelmatch {summary(rows)['pixelmatch_median']:.2f}"
    )
    return f"{line}; back to back {_against_odiff(summarise(warm))}" if warm else line


def _against_odiff(rows: list[Row]) -> str:
    stats = summary(rows)
    worst = max(rows, key=lambda r: r.ratio["odiff"] or 0)
    return f"{stats['odiff_median']:.2f}, worst {stats['odiff_worst']:.2f} ({worst.name})"


if __name__ == "__main__":
    sys.exit(main())
