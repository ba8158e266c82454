"""The whole pair's kind, verdict and confidence, from the changes its regions hold: the
judgements that need every region (content inserted above what moved down pushed it), the
kind that carries most of the changed pixels, and the regression rules, strongest first. The
words are ``wording``'s."""

from __future__ import annotations

from dataclasses import replace

from viewfinder.imaging.analysis import wording
from viewfinder.imaging.analysis.model import Analysis, Change, Kind, Verdict
from viewfinder.imaging.analysis.signals import SHIFT_PARTS, Signal

IDENTICAL = Analysis("identical", False, None, 1.0, "Identical.", "The images are identical.")
KIND_OF: dict[str, Kind] = {  # the pair's kind when one kind of change carries most pixels
    "move": "layout_shift",
    "color": "color",
    "content": "content",
    "size": "size",
}
CONFIDENCE: dict[Kind, float] = {"layout_shift": 0.8, "color": 0.7, "size": 0.6, "content": 0.6}


def subtle_only() -> Analysis:
    return Analysis(
        "noise",
        True,
        "noise",
        0.9,
        "Only imperceptible differences.",
        "Some pixels differ, but none by more than the colour threshold: rendering noise or "
        "a change too small to see.",
    )


def conclude(
    changes: list[Change], width: int, height: int, compared_pixels: int, changed_pixels: int
) -> Analysis:
    """The pair's analysis from every change found in it (noise included)."""
    changes = settle(changes)
    real = [c for c in changes if c.kind != "noise"]
    ordered = tuple(sorted(changes, key=lambda c: (c.y, c.x)))
    if not real:
        summary, reasoning = wording.noise_only(wording.regions(changes))
        return Analysis("noise", True, "noise", 0.9, summary, reasoning, ordered)
    weight: dict[str, int] = {}
    for c in real:
        # Inserted content is part of the layout shift it caused; content moved onto content
        # that stayed is what the eye sees there, one drawn over the other.
        part = "move" if c.signal in SHIFT_PARTS else c.kind
        if c.signal is Signal.OVERLAPS:
            part = "content"
        weight[part] = weight.get(part, 0) + c.changed_pixels
    total = sum(weight.values())
    top = max(weight, key=lambda k: weight[k])
    kind: Kind = KIND_OF[top] if weight[top] >= 0.8 * total else "content"
    if kind == "layout_shift" and _pushed_by_content(real):
        kind = "content"
    reasoning = wording.reasoning(real, [c for c in changes if c.kind == "noise"], width, height)
    verdict: Verdict = "likely_intended"
    confidence = CONFIDENCE[kind]
    summary = wording.summary(kind, real, width, height)
    broken = _regression(real, width, height)
    if broken is not None:
        verdict, confidence = "likely_regression", 0.75
        summary, why = broken
        reasoning = f"{why} {reasoning}"
    elif kind == "content" and compared_pixels and changed_pixels / compared_pixels > 0.3:
        verdict, confidence = "likely_regression", 0.6
        reasoning = wording.mostly_changed(changed_pixels / compared_pixels) + reasoning
    return Analysis(kind, False, verdict, confidence, summary, reasoning, ordered)


def settle(changes: list[Change]) -> list[Change]:
    """Judgements that need the whole pair: content just above what moved down, and as tall
    as the move, is what was inserted and pushed it down."""
    moves = [c for c in changes if c.kind == "move"]
    vertical = {c.dy for c in moves if not c.dx}
    if len(vertical) != 1 or (dy := vertical.pop() or 0) <= 0:
        return changes
    top = min(c.y for c in moves)
    bottom = max(c.y + c.height for c in changes)

    def slack(c: Change) -> int:
        # At the top edge the band also holds the top of what it pushed down: what was drawn
        # there before and has gone below (plain background arriving carries no move).
        return max(4, dy // 2) if c.y == 0 else max(4, dy // 4)

    settled = []
    for c in changes:
        if c.kind != "content":
            settled.append(c)
        elif c.y + c.height <= top + 2 and -max(4, dy // 4) <= c.height - dy <= slack(c):
            settled.append(replace(c, signal=Signal.INSERTED))
        elif c.y >= bottom - dy - 2:
            # Content at the bottom edge went below the fold, pushed by the move: not lost.
            settled.append(replace(c, signal=Signal.PUSHED_OUT_OF_VIEW))
        else:
            settled.append(c)
    return settled


def _pushed_by_content(real: list[Change]) -> bool:
    """Content changed in place above everything that moved, and everything that moved went
    straight down: the change grew and pushed the rest (text set a size larger, a line wrapped
    onto another). What a person reads first is the content change, however many pixels the
    push moved. (Content inserted whole, as tall as the move, is the layout shift it caused.)"""
    moves = [c for c in real if c.kind == "move"]
    edited = [c for c in real if c.kind == "content" and c.signal is None]
    if not moves or not edited or any(c.dx or (c.dy or 0) <= 0 for c in moves):
        return False
    return max(c.y + c.height for c in edited) <= min(c.y for c in moves)


def _regression(real: list[Change], width: int, height: int) -> tuple[str, str] | None:
    """The strongest sign that a change broke something: (summary, sentence), or None."""
    lost = [c for c in real if c.signal is Signal.IMAGE_LOST]
    if lost:
        return wording.image_lost(lost[0], width, height)
    over = [c for c in real if c.signal is Signal.OVERLAPS]
    if over:
        return wording.overlap(over[0], width, height)
    gone = [c for c in real if c.signal is Signal.VANISHED]
    if not gone:
        return None
    # Pieces lost along one straight edge: what was below (or above) a line was cut off.
    for lines in ([c.y for c in gone], [c.y + c.height for c in gone]):
        line = max(set(lines), key=lines.count)
        if len(gone) >= 2 and lines.count(line) >= 0.6 * len(gone):
            return wording.cut_off(len(gone), line)
    return wording.vanished(wording.regions(gone), gone[0], width, height)
