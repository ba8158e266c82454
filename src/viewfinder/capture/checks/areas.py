"""Where findings point, and how many of them a person sees.

Areas are fractions of the screenshot, at least ``MIN_SIDE`` on each side (a review drops
marks whose area is smaller than 0.01, and a hint that points at nothing helps nobody).
Boxes that tell the same thing close together become one finding; each rule says at most
``PER_RULE`` things per screenshot, the worst first, and the last one says how many more
there were.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from viewfinder.capture.model import Area, Finding, Shot

MIN_SIDE = 0.012
PER_RULE = 8
# Boxes this close (CSS px) with the same problem are one finding.
_NEAR = 24.0
Rect = tuple[float, float, float, float]


def area(shot: Shot, rect: Rect) -> Area | None:
    """A box in CSS px as an area of the shot, or None when it is outside it."""
    x, y, w, h = (v * shot.scale for v in rect)
    left, top = max(0.0, x), max(0.0, y)
    right, bottom = min(float(shot.width), x + w), min(float(shot.height), y + h)
    if right <= left or bottom <= top:
        return None
    return _padded(
        left / shot.width,
        top / shot.height,
        (right - left) / shot.width,
        (bottom - top) / shot.height,
    )


def _padded(x: float, y: float, w: float, h: float) -> Area:
    if w < MIN_SIDE:
        x, w = max(0.0, min(1.0 - MIN_SIDE, x - (MIN_SIDE - w) / 2)), MIN_SIDE
    if h < MIN_SIDE:
        y, h = max(0.0, min(1.0 - MIN_SIDE, y - (MIN_SIDE - h) / 2)), MIN_SIDE
    return Area(round(x, 4), round(y, 4), round(w, 4), round(h, 4))


def union(rects: Iterable[Rect]) -> Rect:
    boxes = list(rects)
    left = min(r[0] for r in boxes)
    top = min(r[1] for r in boxes)
    right = max(r[0] + r[2] for r in boxes)
    bottom = max(r[1] + r[3] for r in boxes)
    return (left, top, right - left, bottom - top)


def clusters(rects: Sequence[Rect]) -> list[list[int]]:
    """Indices of the rects grouped by nearness (within ``_NEAR`` px), in reading order."""
    order = sorted(range(len(rects)), key=lambda i: (rects[i][1], rects[i][0]))
    groups: list[tuple[Rect, list[int]]] = []
    for index in order:
        rect = rects[index]
        for number, (bounds, members) in enumerate(groups):
            if _near(bounds, rect):
                groups[number] = (union([bounds, rect]), [*members, index])
                break
        else:
            groups.append((rect, [index]))
    return [members for _, members in groups]


def _near(a: Rect, b: Rect) -> bool:
    return (
        a[0] - _NEAR <= b[0] + b[2]
        and b[0] - _NEAR <= a[0] + a[2]
        and a[1] - _NEAR <= b[1] + b[3]
        and b[1] - _NEAR <= a[1] + a[3]
    )


def overlap(a: Area, b: Area) -> float:
    """Share of the smaller area covered by the other (0 to 1)."""
    width = min(a.x + a.w, b.x + b.w) - max(a.x, b.x)
    height = min(a.y + a.h, b.y + b.h) - max(a.y, b.y)
    if width <= 0 or height <= 0:
        return 0.0
    return (width * height) / max(min(a.w * a.h, b.w * b.h), 1e-9)


def capped(findings: list[Finding]) -> list[Finding]:
    """At most PER_RULE findings per rule and shot (they come worst first); the last kept
    one says how many more were left out."""
    totals = Counter((f.rule, f.label) for f in findings)
    taken: Counter[tuple[str, str]] = Counter()
    last: dict[tuple[str, str], int] = {}
    kept: list[Finding] = []
    for finding in findings:
        key = (finding.rule, finding.label)
        if taken[key] < PER_RULE:
            taken[key] += 1
            last[key] = len(kept)
            kept.append(finding)
    for key, index in last.items():
        more = totals[key] - taken[key]
        if more:
            kept[index] = replace(kept[index], body=f"{kept[index].body} ({more} more like this.)")
    return kept


# An axe-core rule that says what a checklist rule says already.
_SAME_AS = {"target-size": "tap-target"}


def deduplicated(findings: list[Finding]) -> list[Finding]:
    """Without repeats: the same rule's findings at the same place on a shot once; an
    axe-core rule where a checklist rule said the same there; a contrast finding on a dark
    rendering where the dark-mode comparison explains it."""
    kept: list[Finding] = []
    for finding in findings:
        if any(_repeats(finding, other) for other in kept):
            continue
        kept = [other for other in kept if not _repeats(other, finding)]
        kept.append(finding)
    return kept


def _repeats(new: Finding, old: Finding) -> bool:
    """Whether ``new`` says nothing ``old`` does not (same shot, overlapping areas)."""
    if new.label != old.label:
        return False
    if new.area is None or old.area is None:
        return (
            new.area is None and old.area is None and new.rule == old.rule and new.body == old.body
        )
    if overlap(new.area, old.area) < 0.8:
        return False
    if new.rule == old.rule:
        return True
    if new.rule.startswith("axe:") and _SAME_AS.get(new.rule[4:]) == old.rule:
        return True
    return new.rule == "contrast" and old.rule == "dark-mode"
