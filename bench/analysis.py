"""Change-analysis benchmark: how well the analysis tells noise from change, names kinds and
finds move vectors on the labelled corpora of tests/analysis_corpus.py and
tests/style_corpus.py (four page styles, scales 1 and 2, light and dark), what odiff and
pixelmatch say about the same pairs, and what the analysis costs on 1280x800 pairs and on the
style corpus's pairs.

Run from the repository root with ``python -m bench.analysis`` (``make bench`` installs the
peers first). Progress goes to stderr; the tables and the closing ``analysis:`` line go to
stdout, and every figure to bench/.results/analysis.json.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.servers import Odiff, Pixelmatch
from tests import analysis_corpus, style_corpus
from viewfinder.imaging import compare, png
from viewfinder.runtime import tune_allocator

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / ".results"
# The corpus again with every page at 1280x800, the size the cost target is stated for.
WIDE = REPO / "bench" / ".analysis-corpus-1280"
# compare() calls analyze() through its module's namespace: timing it there measures exactly the
# part of a comparison the analysis adds.
ENGINE = importlib.import_module("viewfinder.imaging.compare")


@dataclass
class Verdict:
    name: str
    label: str
    kind: str
    noise: bool
    regression_label: bool
    regression: bool
    moves_expected: int
    moves_exact: int
    odiff_changed: int | None
    pixelmatch_changed: int | None
    pixels: int


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.analysis", description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def judge(pairs: list[dict[str, Any]], folder: Path, scratch: Path) -> list[Verdict]:
    verdicts = []
    with Odiff() as odiff, Pixelmatch() as pixelmatch:
        for i, pair in enumerate(pairs):
            base, candidate = folder / pair["base"], folder / pair["candidate"]
            result = compare(base.read_bytes(), candidate.read_bytes(), ignore_noise=True)
            analysis = result.analysis
            # A re-render that came out the same pixels is noise that needed no analysis.
            same = analysis.kind == "identical"
            found = {(c.dx, c.dy) for c in analysis.changes if c.kind == "move"}
            expected = [tuple(m) for m in pair.get("moves", [])]
            out = scratch / f"{i}.png"
            verdicts.append(
                Verdict(
                    name=pair["name"],
                    label=pair["kind"],
                    kind="noise" if same else analysis.kind,
                    noise=analysis.noise or same,
                    regression_label=pair.get("verdict") == "likely_regression",
                    regression=analysis.verdict == "likely_regression",
                    moves_expected=len(expected),
                    moves_exact=sum(m in found for m in expected),
                    odiff_changed=odiff.compare(base, candidate, out, antialiasing=True).changed,
                    pixelmatch_changed=pixelmatch.compare(base, candidate, out).changed,
                    pixels=result.compared_pixels,
                )
            )
    return verdicts


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def quality(verdicts: list[Verdict]) -> dict[str, Any]:
    noise = [v for v in verdicts if v.label == "noise"]
    real = [v for v in verdicts if v.label != "noise"]
    called_noise = [v for v in verdicts if v.noise]
    true_noise = sum(v.noise for v in noise)
    peers: dict[str, dict[str, Any]] = {}
    for tool in ("odiff", "pixelmatch"):
        counts = [(v, getattr(v, f"{tool}_changed")) for v in verdicts]
        peers[tool] = {
            "noise_pairs_flagged": sum(1 for v, n in counts if v.label == "noise" and n),
            "real_changes_flagged": sum(1 for v, n in counts if v.label != "noise" and n),
            "not_comparable": sum(1 for _, n in counts if n is None),
            "mean_noise_diff_ratio": statistics.fmean(
                [n / v.pixels for v, n in counts if v.label == "noise" and n is not None] or [0]
            ),
        }
    return {
        "pairs": len(verdicts),
        "noise_pairs": len(noise),
        "real_pairs": len(real),
        "noise_precision": _share(true_noise, len(called_noise)),
        "noise_recall": _share(true_noise, len(noise)),
        "change_precision": _share(
            sum(not v.noise for v in real), sum(not v.noise for v in verdicts)
        ),
        "change_recall": _share(sum(not v.noise for v in real), len(real)),
        "real_changes_called_noise": [v.name for v in real if v.noise],
        "kind_accuracy": _share(sum(v.kind == v.label for v in verdicts), len(verdicts)),
        "wrong_kinds": [(v.name, v.label, v.kind) for v in verdicts if v.kind != v.label],
        "regressions": sum(v.regression_label for v in verdicts),
        "regressions_found": sum(v.regression_label and v.regression for v in verdicts),
        "false_regressions": [v.name for v in verdicts if v.regression and not v.regression_label],
        "move_vectors_exact": sum(v.moves_exact for v in verdicts),
        "move_vectors": sum(v.moves_expected for v in verdicts),
        "peers": peers,
    }


def timed(pairs: list[tuple[str, bytes, bytes]], rounds: int) -> list[dict[str, Any]]:
    """Median end-to-end compare() time per pair, and the part spent in analyze()."""
    real_analyze: Callable[..., Any] = ENGINE.analyze
    spent: list[float] = []

    def analyze(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return real_analyze(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    ENGINE.analyze = analyze
    try:
        rows = []
        for name, base, candidate in pairs:
            totals, parts = [], []
            for round_ in range(rounds + 1):
                spent.clear()
                start = time.perf_counter()
                compare(base, candidate)
                total = time.perf_counter() - start
                if round_:  # the first round warms caches and is not counted
                    totals.append(total)
                    parts.append(sum(spent))
            total, part = statistics.median(totals), statistics.median(parts)
            rows.append({"name": name, "total_ms": 1000 * total, "analysis_ms": 1000 * part})
        return rows
    finally:
        ENGINE.analyze = real_analyze


def style_pairs(pairs: list[dict[str, Any]]) -> list[tuple[str, bytes, bytes]]:
    """The style corpus's pairs at their own sizes (640x560 and 1280x1120)."""
    folder = style_corpus.OUT
    return [
        (
            pair["name"],
            (folder / pair["base"]).read_bytes(),
            (folder / pair["candidate"]).read_bytes(),
        )
        for pair in pairs
    ]


def cost_pairs() -> list[tuple[str, bytes, bytes]]:
    pairs = analysis_corpus.ensure(WIDE, viewport=(1280, 800))
    loaded = []
    for pair in pairs:
        base = (WIDE / pair["base"]).read_bytes()
        loaded.append((pair["name"], base, (WIDE / pair["candidate"]).read_bytes()))
    # Identical pairs: the same bytes, and the same pixels encoded differently.
    for page in analysis_corpus.PAGE_SET:
        base = (WIDE / f"{page}-base.png").read_bytes()
        again = png.encode(png.decode(base), level=1)
        loaded.append((f"{page}/identical_bytes", base, base))
        loaded.append((f"{page}/identical_pixels", base, again))
    return loaded


def cost(rows: list[dict[str, Any]]) -> dict[str, Any]:
    # Pairs whose analysis ran (none runs on identical pixels).
    changed = [
        r
        for r in rows
        if not r["name"].split("/")[1].startswith("identical") and r["analysis_ms"] > 0
    ]
    identical = [r for r in rows if r["name"].split("/")[1].startswith("identical")]
    engine = sum(r["total_ms"] - r["analysis_ms"] for r in changed)
    added = sum(r["analysis_ms"] for r in changed)
    shares = [r["analysis_ms"] / (r["total_ms"] - r["analysis_ms"]) for r in changed]
    worst = max(changed, key=lambda r: r["analysis_ms"] / (r["total_ms"] - r["analysis_ms"]))
    return {
        "changed_pairs": len(changed),
        "engine_ms": engine,
        "analysis_ms": added,
        "added": added / engine,
        "median_added": statistics.median(shares),
        "worst_pair": worst["name"],
        "worst_added": max(shares),
        "identical_analysis_ms": sum(r["analysis_ms"] for r in identical),
    }


def report(q: dict[str, Any], rows: list[dict[str, Any]], title: str = "corpus") -> str:
    lines = [
        f"{title}: {q['pairs']} labelled pairs ({q['noise_pairs']} noise, {q['real_pairs']} real "
        "changes), compared with ignore_noise on",
        "",
        f"noise   precision {_pct(q['noise_precision'])}  recall {_pct(q['noise_recall'])}",
        f"change  precision {_pct(q['change_precision'])}  recall {_pct(q['change_recall'])}",
        f"real changes called noise: {q['real_changes_called_noise'] or 'none'}",
        f"kinds right: {_pct(q['kind_accuracy'])}; wrong: {q['wrong_kinds'] or 'none'}",
        f"move vectors exact: {q['move_vectors_exact']} of {q['move_vectors']}",
        f"breakages called likely_regression: {q['regressions_found']} of {q['regressions']}; "
        f"other changes called so: {q['false_regressions'] or 'none'}",
        "",
        "peers on the same pairs (threshold 0.1, anti-aliasing detection on):",
        "tool        noise pairs flagged  real changes flagged  mean diff on noise pairs",
    ]
    for tool, p in q["peers"].items():
        flagged = f"{p['noise_pairs_flagged']} of {q['noise_pairs']}"
        real = f"{p['real_changes_flagged']} of {q['real_pairs']}"
        if p["not_comparable"]:
            real += f" ({p['not_comparable']} n/a)"
        mean = f"{100 * p['mean_noise_diff_ratio']:.2f}%"
        lines.append(f"{tool:<11} {flagged:<20} {real:<21} {mean}")
    if rows:
        lines += ["", "cost (median of rounds, ms):", f"{'pair':<35} engine  analysis"]
    for r in rows:
        lines.append(
            f"{r['name']:<35} {r['total_ms'] - r['analysis_ms']:6.1f}  {r['analysis_ms']:8.1f}"
        )
    return "\n".join(lines)


def final_line(q: dict[str, Any], c: dict[str, Any]) -> str:
    return (
        f"analysis: noise precision {_pct(q['noise_precision'])} recall "
        f"{_pct(q['noise_recall'])}, real changes called noise "
        f"{len(q['real_changes_called_noise'])}, kinds {_pct(q['kind_accuracy'])}, move vectors "
        f"{q['move_vectors_exact']}/{q['move_vectors']} exact, regressions "
        f"{q['regressions_found']}/{q['regressions']} (false {len(q['false_regressions'])}); "
        "odiff flags "
        f"{q['peers']['odiff']['noise_pairs_flagged']}/{q['noise_pairs']} noise pairs, "
        f"pixelmatch {q['peers']['pixelmatch']['noise_pairs_flagged']}/{q['noise_pairs']}; "
        f"adds {_pct(c['added'])} to the engine at 1280x800 (median pair {_pct(c['median_added'])},"
        f" worst {_pct(c['worst_added'])} {c['worst_pair']}), "
        f"{c['identical_analysis_ms']:.0f} ms on identical pairs"
    )


def styles_line(q: dict[str, Any], c: dict[str, Any]) -> str:
    return (
        f"analysis (styles): noise precision {_pct(q['noise_precision'])} recall "
        f"{_pct(q['noise_recall'])}, real changes called noise "
        f"{len(q['real_changes_called_noise'])}, kinds {_pct(q['kind_accuracy'])}, move vectors "
        f"{q['move_vectors_exact']}/{q['move_vectors']} exact; odiff flags "
        f"{q['peers']['odiff']['noise_pairs_flagged']}/{q['noise_pairs']} noise pairs, "
        f"pixelmatch {q['peers']['pixelmatch']['noise_pairs_flagged']}/{q['noise_pairs']}; "
        f"adds {_pct(c['added'])} to the engine (median pair {_pct(c['median_added'])}, worst "
        f"{_pct(c['worst_added'])} {c['worst_pair']})"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # As every Viewfinder process does at start (and bench.engine's runs): untuned, glibc maps
    # each screenshot-sized buffer afresh, and its page faults land in both parts timed here.
    tune_allocator()
    pairs = analysis_corpus.ensure()
    styles = style_corpus.ensure()
    RESULTS.mkdir(parents=True, exist_ok=True)
    print(f"judging {len(pairs)} + {len(styles)} pairs...", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=RESULTS, prefix="analysis-") as tmp:
        verdicts = judge(pairs, analysis_corpus.OUT, Path(tmp))
        style_verdicts = judge(styles, style_corpus.OUT, Path(tmp))
    q, qs = quality(verdicts), quality(style_verdicts)
    print("timing the 1280x800 pairs and the style corpus...", file=sys.stderr)
    rows = timed(cost_pairs(), args.rounds)
    style_rows = timed(style_pairs(styles), args.rounds)
    c, cs = cost(rows), cost(style_rows)
    line, second = final_line(q, c), styles_line(qs, cs)
    record = {
        "quality": q,
        "cost": c,
        "timings": rows,
        "line": line,
        "styles": {"quality": qs, "cost": cs, "timings": style_rows, "line": second},
    }
    path = RESULTS / "analysis.json"
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(report(q, rows))
    print()
    print(report(qs, [], "style corpus"))
    print()
    print(f"all figures: {path.relative_to(REPO)}")
    print(line)
    print(second)
    return 0


if __name__ == "__main__":
    sys.exit(main())
