"""Where the change analysis spends its time: each native kernel of viewfinder.imaging._analysis
timed where the analysis calls it, and the whole analysis, over the 1280x800 pairs and the style
corpus's pairs (the pairs of bench.analysis's cost figures). A diagnostic for work on the
analysis's cost, not part of `make bench`.

Run from the repository root with ``python -m bench.analysis_parts [--passes N]``. Each figure is
the least over the passes, after one pass that warms caches; the table goes to stdout and every
figure to bench/.results/analysis_parts.json.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.analysis import cost_pairs, style_pairs
from tests import style_corpus
from viewfinder.imaging import _analysis, compare
from viewfinder.runtime import tune_allocator

RESULTS = Path(__file__).resolve().parents[1] / "bench" / ".results"
ENGINE = importlib.import_module("viewfinder.imaging.compare")
WHOLE = "analysis (whole)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.analysis_parts", description=__doc__)
    parser.add_argument("--passes", type=int, default=3, help="timed passes (default 3)")
    args = parser.parse_args(argv)
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    return args


def _timed(name: str, function: Callable[..., Any], spent: Counter[str]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    return call


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tune_allocator()
    pairs = cost_pairs() + style_pairs(style_corpus.ensure())
    spent: Counter[str] = Counter()
    originals = {
        name: getattr(_analysis, name)
        for name in dir(_analysis)
        if not name.startswith("_") and callable(getattr(_analysis, name))
    }
    real_analyze = ENGINE.analyze
    # The analysis calls each kernel through the module's attribute: timing it there measures
    # every call the analysis makes, and nothing else.
    for name, function in originals.items():
        setattr(_analysis, name, _timed(name, function, spent))
    ENGINE.analyze = _timed(WHOLE, real_analyze, spent)
    least: dict[str, float] = {}
    try:
        for round_ in range(args.passes + 1):
            spent.clear()
            for _name, base, candidate in pairs:
                compare(base, candidate)
            if round_:
                for name, seconds in spent.items():
                    least[name] = min(least.get(name, seconds), seconds)
            print(f"analysis parts: pass {round_}/{args.passes}", file=sys.stderr, flush=True)
    finally:
        for name, function in originals.items():
            setattr(_analysis, name, function)
        ENGINE.analyze = real_analyze
    native = sum(seconds for name, seconds in least.items() if name != WHOLE)
    rows = sorted(least.items(), key=lambda item: -item[1])
    print(f"{len(pairs)} pairs, least of {args.passes} passes")
    for name, seconds in rows:
        print(f"  {name:<18}{1000 * seconds:9.1f} ms")
    print(f"  {'outside kernels':<18}{1000 * (least[WHOLE] - native):9.1f} ms")
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {"pairs": len(pairs), "passes": args.passes, "ms": {k: 1000 * v for k, v in rows}}
    (RESULTS / "analysis_parts.json").write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
