"""Command-line benchmark: `viewfinder diff` as a whole process against the `odiff` process on
the same 1280x800 pair, and `viewfinder --help`, where people first meet the engine. odiff is
timed twice: its binary run directly, and the `odiff` command its npm package installs (node
starting, then running the binary), which is what a person who installed it types. A process
that only starts the interpreter and imports numpy is timed too: the floor under any
`viewfinder diff` while the change analysis works on numpy arrays.

Run from the repository root with ``python -m bench.cli`` (``make bench`` installs odiff
first). Each round runs every command once, in a new random order, from process start to exit;
one warm-up round is not counted and the figures are medians. The project's modules are
compiled to bytecode first, as an installation has them (a process that may not write the
cache, under PYTHONDONTWRITEBYTECODE, would otherwise compile every module it imports each time
it starts: a third of `--help`). Progress goes to stderr, the ``cli:`` line to stdout and every
timing to bench/.results/cli.json.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import ensure_corpus
from bench.servers import odiff_binary, odiff_command

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / ".results"
VIEWFINDER = str(Path(sys.executable).with_name("viewfinder"))
# A changed pair, so both tools compare in full and write a diff image.
PAIR = "dashboard@1280x800/text"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.cli", description=__doc__)
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (default 15)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the command order shuffle")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def wall(argv: list[str], expect: int, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env
    )
    seconds = time.perf_counter() - start
    if done.returncode != expect:
        raise SystemExit(f"{argv[0]} exited {done.returncode}, not {expect}: {done.stderr!r}")
    return seconds


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    package = Path(__import__("viewfinder").__file__).parent
    if not compileall.compile_dir(package, quiet=1):
        sys.exit(f"could not compile the modules in {package}")
    pair = next(p for p in ensure_corpus() if p.name == PAIR)
    base, candidate = str(pair.base_path), str(pair.candidate_path)
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        commands = {
            # Both with their anti-aliasing detection on, as Viewfinder's default is.
            "viewfinder diff": (
                [VIEWFINDER, "diff", base, candidate, "--out", f"{tmp}/vf.png"],
                1,
            ),
            "odiff": (
                [str(odiff_binary()), "--antialiasing", base, candidate, f"{tmp}/odiff.png"],
                22,  # odiff's exit code for "pixels differ"
            ),
            "viewfinder --help": ([VIEWFINDER, "--help"], 0),
            "odiff (npm command)": (
                [str(odiff_command()), "--antialiasing", base, candidate, f"{tmp}/npm.png"],
                22,
            ),
            # The floor under `viewfinder diff`: the interpreter starting and importing numpy,
            # as cli/quick.py runs it (the collector off, objects frozen before exit) and with
            # OpenBLAS on one thread, as viewfinder.main sets it.
            "python with numpy": (
                [sys.executable, "-c", "import gc; gc.disable(); import numpy; gc.freeze()"],
                0,
                {**os.environ, "OPENBLAS_NUM_THREADS": "1"},
            ),
        }
        rng = random.Random(args.seed)
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(args.rounds + 1):
            order = list(commands)
            rng.shuffle(order)
            for name in order:
                taken = wall(*commands[name])
                if round_:  # the first round warms the page cache and is not counted
                    seconds[name].append(taken)
            print(f"cli: round {round_}/{args.rounds}", file=sys.stderr, flush=True)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    ratio = median["viewfinder diff"] / median["odiff"]
    npm = median["odiff (npm command)"]
    line = (
        f"cli: viewfinder diff {median['viewfinder diff']:.3f} s vs odiff "
        f"{median['odiff']:.3f} s (ratio {ratio:.1f}), --help {median['viewfinder --help']:.3f} s; "
        f"odiff's npm command {npm:.3f} s (ratio {median['viewfinder diff'] / npm:.1f}); "
        f"python importing numpy {median['python with numpy']:.3f} s"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cli.json").write_text(
        json.dumps(
            {"pair": PAIR, "rounds": args.rounds, "seconds": seconds, "line": line}, indent=2
        )
        + "\n",
        encoding="utf-8",
    )
    print(line)


if __name__ == "__main__":
    main()
