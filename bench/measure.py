"""The measurements: interleaved timing rounds over the corpus, and the peak-memory probe."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.corpus import Pair, log
from bench.servers import Odiff, Outcome, Pixelmatch
from viewfinder.imaging import compare
from viewfinder.runtime import tune_allocator

# Every viewfinder process (CLI, server, worker) tunes the allocator at start; so does this one.
tune_allocator()

TOOLS = ("viewfinder", "odiff", "odiff_noaa", "pixelmatch")


def viewfinder(base: Path, candidate: Path, output: Path) -> Outcome:
    """The whole job a caller does: read both files, compare, write the diff when there is one."""
    start = time.perf_counter()
    result = compare(base.read_bytes(), candidate.read_bytes())
    if result.diff_png is not None:
        output.write_bytes(result.diff_png)
    return Outcome(time.perf_counter() - start, result.changed_pixels)


@dataclass
class Samples:
    """Every timed run of every tool on one pair, and the changed-pixel count each reported."""

    pair: Pair
    canvas: str = ""
    seconds: dict[str, list[float]] = field(default_factory=lambda: {t: [] for t in TOOLS})
    changed: dict[str, int | None] = field(default_factory=dict)


class Runner:
    def __init__(self, odiff: Odiff, pixelmatch: Pixelmatch, out_dir: Path) -> None:
        self.out_dir = out_dir
        self._tools: dict[str, Callable[[Path, Path, Path], Outcome]] = {
            "viewfinder": viewfinder,
            "odiff": lambda a, b, out: odiff.compare(a, b, out, antialiasing=True),
            "odiff_noaa": lambda a, b, out: odiff.compare(a, b, out, antialiasing=False),
            "pixelmatch": pixelmatch.compare,
        }

    def run(self, tool: str, pair: Pair) -> Outcome:
        # One file per tool and pair, overwritten each round: every tool pays for a real write.
        output = self.out_dir / f"{tool}--{pair.name.replace('/', '--')}.png"
        return self._tools[tool](pair.base_path, pair.candidate_path, output)


def canvas_of(pair: Pair) -> str:
    result = compare(pair.base_path.read_bytes(), pair.candidate_path.read_bytes())
    return f"{result.width}x{result.height}"


def time_rounds(runner: Runner, pairs: list[Pair], rounds: int, seed: int) -> list[Samples]:
    samples = [Samples(pair, canvas_of(pair)) for pair in pairs]
    rng = random.Random(seed)
    # Round 0 is a warm-up, not recorded: page cache, node's JIT, first-call costs everywhere.
    for round_no in range(rounds + 1):
        log(f"engine: {'warm-up round' if round_no == 0 else f'round {round_no}/{rounds}'}")
        # Fresh pair and tool orders every round, so that a slow spell of the VM (or another job
        # on it) lands on different pairs and tools each time instead of on the same one.
        for sample in rng.sample(samples, len(samples)):
            order = list(TOOLS)
            rng.shuffle(order)
            for tool in order:
                outcome = runner.run(tool, sample.pair)
                previous = sample.changed.setdefault(tool, outcome.changed)
                if previous != outcome.changed:
                    log(f"engine: WARNING {tool} on {sample.pair.name}: count {outcome.changed}")
                if round_no and outcome.changed is not None:
                    sample.seconds[tool].append(outcome.seconds)
    return samples


def time_back_to_back(
    runner: Runner, pairs: list[Pair], runs: int, seed: int, tools: tuple[str, ...]
) -> list[Samples]:
    """Each tool on each pair ``runs`` times in a row after one untimed run, as a server that
    compares one screenshot after another runs: caches and branch predictors warm with its own
    work. time_rounds interleaves the tools call by call instead, so each call comes after
    another tool has filled the caches with its own."""
    samples = [Samples(pair) for pair in pairs]  # the canvas is time_rounds' to report
    rng = random.Random(seed)
    log(f"engine: {len(samples)} pairs back to back, {runs} runs each")
    for sample in rng.sample(samples, len(samples)):
        for tool in rng.sample(tools, len(tools)):
            for run in range(runs + 1):
                outcome = runner.run(tool, sample.pair)
                if run and outcome.changed is not None:
                    sample.seconds[tool].append(outcome.seconds)
    return samples


@dataclass(frozen=True)
class Memory:
    tool: str
    idle_kib: int  # after start-up, before the comparison
    peak_kib: int
    note: str = ""


# Read VmHWM rather than ru_maxrss: a child started through vfork inherits the parent's
# ru_maxrss at exec, so it would report the benchmark's own peak instead of its own.
_VIEWFINDER_PROBE = """
import json, resource, sys
from pathlib import Path
from viewfinder.imaging import compare
from viewfinder.runtime import tune_allocator

tune_allocator()

def hwm():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

idle = hwm()
result = compare(Path(sys.argv[1]).read_bytes(), Path(sys.argv[2]).read_bytes())
if result.diff_png is not None:
    Path(sys.argv[3]).write_bytes(result.diff_png)
rusage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"idle": idle, "peak": hwm(), "ru_maxrss": rusage}))
"""


def probe_memory(pair: Pair, out_dir: Path) -> list[Memory]:
    """Peak RSS of each tool doing one comparison of the pair, each in a fresh process."""
    log(f"engine: peak memory on {pair.name}")
    argv = [sys.executable, "-c", _VIEWFINDER_PROBE, str(pair.base_path), str(pair.candidate_path)]
    done = subprocess.run(
        [*argv, str(out_dir / "memory-viewfinder.png")], check=True, capture_output=True, text=True
    )
    probe = json.loads(done.stdout)
    rows = [
        Memory("viewfinder", probe["idle"], probe["peak"], f"ru_maxrss {probe['ru_maxrss']} KiB")
    ]
    for aa, tool in ((True, "odiff"), (False, "odiff_noaa")):
        with Odiff() as odiff:
            idle = odiff.peak_kib()
            odiff.compare(
                pair.base_path, pair.candidate_path, out_dir / f"memory-{tool}.png", antialiasing=aa
            )
            rows.append(Memory(tool, idle, odiff.peak_kib()))
    with Pixelmatch() as pixelmatch:
        idle = pixelmatch.peak_kib()
        pixelmatch.compare(pair.base_path, pair.candidate_path, out_dir / "memory-pixelmatch.png")
        rows.append(Memory("pixelmatch", idle, pixelmatch.peak_kib()))
    return rows
