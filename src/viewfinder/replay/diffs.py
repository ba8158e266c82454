"""Differences between a base replay and a head replay that a reviewer reads: the DOM at one
screenshot as ``[diff N]`` hunks, and the timelines row by row."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from viewfinder.replay.model import TimelineEntry


def dom_diff(base: str, head: str, context: int | None = 3) -> str:
    """A unified diff of two normalised DOMs with the indentation stripped, one ``[diff N]``
    block per independent change; ``context`` lines around each (None: the whole document).
    "" when they are the same."""
    a = [line.strip() for line in base.splitlines()]
    b = [line.strip() for line in head.splitlines()]
    n = max(len(a), len(b)) if context is None else max(context, 0)
    blocks: list[str] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(n):
        lines = [f"[diff {len(blocks) + 1}]"]
        first_a, first_b = group[0][1], group[0][3]
        last_a, last_b = group[-1][2], group[-1][4]
        lines.append(f"@@ -{first_a + 1},{last_a - first_a} +{first_b + 1},{last_b - first_b} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[i1:i2])
                continue
            lines.extend("-" + line for line in a[i1:i2])
            lines.extend("+" + line for line in b[j1:j2])
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def dom_changes(base: str, head: str) -> int:
    """How many independent changes (``[diff N]`` blocks) there are."""
    return dom_diff(base, head, 0).count("[diff ")


def _key(entry: TimelineEntry) -> tuple[str, str]:
    return (entry.event, entry.description)


def timeline_diff(
    base: Sequence[TimelineEntry], head: Sequence[TimelineEntry], *, include_same: bool = True
) -> list[dict[str, Any]]:
    """Rows ``diff`` (same, removed, added, changed), ``timeMs``, ``event`` and
    ``description``: the timelines aligned on what happened, not on when. A row replaced by
    one of the same kind is ``changed`` (its description says base -> head)."""
    rows: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(
        None, [_key(e) for e in base], [_key(e) for e in head], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            if include_same:
                rows.extend(_row("same", e) for e in head[j1:j2])
            continue
        olds, news = list(base[i1:i2]), list(head[j1:j2])
        while olds and news and olds[0].event == news[0].event and tag == "replace":
            old, new = olds.pop(0), news.pop(0)
            row = _row("changed", new)
            row["description"] = f"{old.description} -> {new.description}"
            rows.append(row)
        rows.extend(_row("removed", e) for e in olds)
        rows.extend(_row("added", e) for e in news)
    return rows


def _row(diff: str, entry: TimelineEntry) -> dict[str, Any]:
    return {
        "diff": diff,
        "timeMs": entry.time_ms,
        "event": entry.event,
        "description": entry.description,
    }
