"""Turning samples into medians, ratios, the tables and the one-line verdict."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bench.measure import TOOLS, Memory, Samples

PEERS = ("odiff", "odiff_noaa", "pixelmatch")
LABELS = {
    "viewfinder": "viewfinder",
    "odiff": "odiff",
    "odiff_noaa": "odiff(noAA)",
    "pixelmatch": "pixelmatch",
}


@dataclass(frozen=True)
class Row:
    name: str
    canvas: str
    ms: dict[str, float | None]  # median per tool; None where the tool cannot compare the pair
    ratio: dict[str, float | None]  # viewfinder / peer, per peer: below 1 means Viewfinder wins
    changed: dict[str, int | None]


def summarise(samples: list[Samples]) -> list[Row]:
    rows = []
    for s in samples:
        ms = {t: statistics.median(s.seconds[t]) * 1000 if s.seconds[t] else None for t in TOOLS}
        ours = ms["viewfinder"]
        ratio = {
            peer: ours / theirs if ours is not None and theirs else None
            for peer, theirs in ((p, ms[p]) for p in PEERS)
        }
        rows.append(Row(s.pair.name, s.canvas, ms, ratio, dict(s.changed)))
    return rows


def ratios(rows: list[Row], peer: str) -> list[float]:
    return [r for row in rows if (r := row.ratio[peer]) is not None]


def summary(rows: list[Row]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for peer in PEERS:
        values = ratios(rows, peer)
        out[f"{peer}_median"] = statistics.median(values) if values else None
        out[f"{peer}_worst"] = max(values) if values else None
        out[f"{peer}_best"] = min(values) if values else None
        out[f"{peer}_pairs"] = len(values)
    return out


def _ms(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _count(value: int | None) -> str:
    return "n/a" if value is None else str(value)


_COLUMNS = (
    ("pair", 30),
    ("canvas", 10),
    ("viewfinder ms", 13),
    ("odiff ms", 9),
    ("ratio", 6),
    ("odiff(noAA) ms", 14),
    ("ratio", 6),
    ("pixelmatch ms", 13),
    ("ratio", 6),
    ("vf px", 8),
    ("odiff px", 8),
    ("noAA px", 8),
    ("pm px", 8),
)


def _line(cells: list[str]) -> str:
    # The first two columns are names, left-aligned; the rest are numbers.
    parts = [
        cell.ljust(width) if i < 2 else cell.rjust(width)
        for i, (cell, (_, width)) in enumerate(zip(cells, _COLUMNS, strict=True))
    ]
    return "  ".join(parts).rstrip()


def table(rows: list[Row], stats: dict[str, float | None]) -> str:
    lines = [_line([name for name, _ in _COLUMNS])]
    lines.append("-" * len(lines[0]))
    for row in rows:
        cells = [row.name, row.canvas, _ms(row.ms["viewfinder"])]
        for peer in PEERS:
            cells += [_ms(row.ms[peer]), _ratio(row.ratio[peer])]
        cells += [_count(row.changed.get(t)) for t in TOOLS]
        lines.append(_line(cells))
    lines.append("-" * len(lines[0]))
    for label in ("median", "worst", "best"):
        cells = [f"{label} ratio", "", ""]
        for peer in PEERS:
            cells += ["", _ratio(stats[f"{peer}_{label}"])]
        lines.append(_line(cells + [""] * 4))
    return "\n".join(lines)


def memory_table(rows: list[Memory], pair_name: str) -> str:
    lines = [
        f"peak memory, one comparison of {pair_name} in a fresh process (VmHWM):",
        f"{'tool':<13}{'start-up MiB':>14}{'peak MiB':>10}{'added MiB':>11}",
    ]
    for m in rows:
        idle, peak = m.idle_kib / 1024, m.peak_kib / 1024
        lines.append(f"{LABELS[m.tool]:<13}{idle:>14.1f}{peak:>10.1f}{peak - idle:>11.1f}")
    return "\n".join(lines)


def final_line(stats: dict[str, float | None], memory: list[Memory]) -> str:
    peak = {m.tool: m.peak_kib / 1024 for m in memory}
    return (
        f"engine: median ratio vs odiff-server {_ratio(stats['odiff_median'])}, "
        f"worst {_ratio(stats['odiff_worst'])}, "
        f"vs pixelmatch {_ratio(stats['pixelmatch_median'])}, "
        f"peak MiB at 1280x8000 {peak['viewfinder']:.0f} (odiff {peak['odiff']:.0f})"
    )
