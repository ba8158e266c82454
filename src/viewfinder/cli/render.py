"""Human output of the server commands: short lines and plain aligned columns on stdout (never
truncated, so ids can be copied and grepped), progress bars on stderr."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.progress import Progress

COUNT_ORDER = ("changed", "new", "removed", "failed", "unchanged", "pending")


def dash(value: object) -> str:
    return "-" if value is None or value == "" else str(value)


def percent(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.4%}"


def counts_line(counts: Mapping[str, int]) -> str:
    shown = [k for k in COUNT_ORDER if k != "pending" or counts.get(k)]
    return ", ".join(f"{counts.get(k, 0)} {k}" for k in shown)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "") -> None:
    cells = [[dash(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    for row in [list(headers), *cells]:
        line = "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
        typer.echo(indent + line.rstrip())


def story_rows(stories: Sequence[Mapping[str, Any]]) -> list[list[object]]:
    return [
        [
            s["name"],
            s["variant"],
            s["diff_id"],
            percent(s["diff_ratio"]),
            (s.get("verdict") or "").replace("_", " ") or None,
            s["decision"],
            s["open_threads"],
        ]
        for s in stories
    ]


STORY_HEADERS = ("NAME", "VARIANT", "DIFF", "RATIO", "VERDICT", "DECISION", "OPEN THREADS")


def build_title(build: Mapping[str, Any]) -> str:
    parts = [f"build {build['id']}", f"commit {build['commit_sha'][:12]}"]
    if build.get("branch"):
        parts.append(f"branch {build['branch']}")
    if build.get("pr_number") is not None:
        parts.append(f"PR {build.get('repo') or ''}#{build['pr_number']}")
    return "  ".join(parts)


@contextmanager
def progress() -> Iterator[Progress]:
    """A progress display on stderr; silent when stderr is not a terminal (CI logs)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    ) as bar:
        yield bar
