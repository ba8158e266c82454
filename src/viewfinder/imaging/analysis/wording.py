"""Every word a reviewer reads: the note of each signal, where a change lies, the reasoning
(largest change first) and the one-line summary. What the words say is decided elsewhere;
here it is only said. The server stores these texts, so a change of wording shows in review."""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewfinder.imaging.analysis.signals import INSERTIONS, SHIFT_PARTS, Signal

if TYPE_CHECKING:
    from viewfinder.imaging.analysis.model import Change, Kind

NOTES: dict[Signal, str] = {
    Signal.NEW_CONTENT: "new content",
    Signal.INSERTED_AT_TOP: "inserted at the top",
    Signal.INSERTED: "inserted",
    Signal.PUSHED_OUT_OF_VIEW: "pushed out of view",
    Signal.REWRAPPED: "re-wrapped",
    Signal.OVERLAPS: "overlaps",
    Signal.VANISHED: "vanished",
    Signal.IMAGE_LOST: "image lost",
    Signal.NOT_EXAMINED: "not examined",
    Signal.RESIZED: "{}x{} -> {}x{}",  # the base's width and height, then the candidate's
}
# Said in a sentence of their own (an insertion with the move it caused, or the verdict's
# sentence), not again region by region.
_SAID_APART = SHIFT_PARTS | {Signal.VANISHED, Signal.IMAGE_LOST}


def note(c: Change) -> str:
    """The words of the change's signal; empty when it has none."""
    if c.signal is None:
        return ""
    words = NOTES[c.signal]
    return words.format(*c.sizes) if c.sizes else words


def where(c: Change, width: int, height: int) -> str:
    if c.width >= width * 0.9 and c.height >= height * 0.9:
        return "the whole image"
    middle = c.y + c.height / 2
    vertical = (
        "near the top"
        if middle < height / 3
        else ("near the bottom" if middle > 2 * height / 3 else "in the middle")
    )
    return f"a {c.width}x{c.height} area at ({c.x}, {c.y}) {vertical}"


def count(n: int, thing: str) -> str:
    return f"one {thing}" if n == 1 else f"{n} {thing}s"


def regions(changes: list[Change]) -> int:
    """How many of the comparison's regions the changes lie in (the parts of one region are
    one region to the reader, who sees the regions listed beside these words)."""
    return len({c.region if c.region is not None else -1 - i for i, c in enumerate(changes)})


def upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def direction(dx: int, dy: int) -> str:
    parts = []
    if dy:
        parts.append(f"{'down' if dy > 0 else 'up'} {abs(dy)} px")
    if dx:
        parts.append(f"{'right' if dx > 0 else 'left'} {abs(dx)} px")
    return " and ".join(parts)


def reasoning(real: list[Change], noise: list[Change], width: int, height: int) -> str:
    """At most six sentences about the real changes, then how many more there were."""
    said = sentences(real, width, height)
    # Regions that hold noise and nothing real.
    holding = {c.region for c in real}
    noise_count = regions([c for c in noise if c.region is None or c.region not in holding])
    if noise_count:
        other = upper(count(noise_count, "other region"))
        verb = "differs" if noise_count == 1 else "differ"
        said.append(f"{other} {verb} only by rendering noise.")
    elif len(real) == 1:
        said.append("Nothing else changed.")
    text = " ".join(said[:6])
    if len(said) > 6:
        text += f" ({len(said) - 6} more.)"
    return text


def sentences(real: list[Change], width: int, height: int) -> list[str]:
    """The reasoning, largest first: inserted content with the moves it caused, other moves
    grouped by vector, then everything else region by region."""
    by_size = sorted(real, key=lambda c: -c.changed_pixels)
    inserted = [c for c in by_size if c.signal in INSERTIONS]
    moves: dict[tuple[int, int], list[Change]] = {}
    for c in by_size:
        if c.kind == "move":
            moves.setdefault((c.dx or 0, c.dy or 0), []).append(c)
    said = []
    for c in inserted:
        place = "at the top" if c.y == 0 else f"at y={c.y}"
        pushed = moves.pop((0, c.height), None) or moves.pop(
            next((d for d in moves if d[0] == 0 and d[1] > 0), (0, 0)), None
        )
        sentence = f"New content {c.height} px tall was inserted {place}"
        if pushed:
            areas = f"{len(pushed)} areas" if len(pushed) > 1 else "the content"
            sentence += f" and pushed {areas} below it {direction(0, pushed[0].dy or 0)}"
        said.append(sentence + ".")
    for (dx, dy), group in moves.items():
        # A column that moved sideways and narrowed or widened: its lines broke anew.
        wrapped = (
            ", its lines wrapped to its new width"
            if any(c.signal is Signal.REWRAPPED for c in group)
            else ""
        )
        if len(group) == 1:
            place = where(group[0], width, height)
            said.append(f"The content of {place} moved {direction(dx, dy)}{wrapped}.")
        else:
            largest = where(group[0], width, height)
            said.append(
                f"{len(group)} areas moved {direction(dx, dy)}, the largest {largest}{wrapped}."
            )
    if any(c.signal is Signal.PUSHED_OUT_OF_VIEW for c in by_size):
        said.append("Content at the bottom edge went out of view, pushed down by the move.")
    for c in by_size:
        if c.kind == "move" or c.signal in _SAID_APART:
            continue
        place = where(c, width, height)
        if c.kind == "color":
            said.append(f"Colours changed in {place}; the shapes stayed where they were.")
        elif c.kind == "size":
            said.append(
                f"The image size changed ({note(c)}); the area outside the smaller one is new."
            )
        else:
            said.append(f"Content changed in {place}.")
    return said


def summary(kind: Kind, real: list[Change], width: int, height: int) -> str:
    if kind == "layout_shift":
        moves = [c for c in real if c.kind == "move"]
        main = max(moves, key=lambda c: c.changed_pixels)
        inserted = [c for c in real if c.signal in INSERTIONS]
        prefix = ""
        if inserted:
            place = "at the top" if min(c.y for c in inserted) == 0 else "above it"
            prefix = f"Content inserted {place}; "
        moved = f"content moved {direction(main.dx or 0, main.dy or 0)}."
        return prefix + moved if prefix else upper(moved)
    if kind == "color":
        colours = regions([c for c in real if c.kind == "color"])
        moves = [c for c in real if c.kind == "move"]
        also = ""
        if moves:
            main = max(moves, key=lambda c: c.changed_pixels)
            also = f"; content moved {direction(main.dx or 0, main.dy or 0)}"
        return f"Colours changed in {count(colours, 'region')}{also}."
    if kind == "size":
        return "The image size changed."
    return f"Content changed in {count(regions(real), 'region')}."


def noise_only(regions: int) -> tuple[str, str]:
    """(summary, reasoning) of a pair whose every changed region is rendering noise."""
    return (
        "Rendering noise only.",
        ("The one changed region is" if regions == 1 else f"All {regions} changed regions are")
        + " explained by sub-pixel movement or re-rasterisation of the same content "
        "(anti-aliasing, smoothing, glyphs drawn again); nothing a person would see as a change.",
    )


def mostly_changed(share: float) -> str:
    """The sentence that opens the reasoning of a content change over most of the image."""
    return (
        f"Most of the image changed ({share:.0%} of its pixels), which is rarely what a change "
        "meant to do. "
    )


# The regression rules' (summary, sentence), in verdict's order of strength.


def image_lost(c: Change, width: int, height: int) -> tuple[str, str]:
    return (
        "An image is missing or broken.",
        f"A detailed picture in {where(c, width, height)} became a mostly plain area: an image "
        "that did not load, or was hidden.",
    )


def overlap(c: Change, width: int, height: int) -> tuple[str, str]:
    moved = f" moved {direction(c.dx or 0, c.dy or 0)} and" if c.kind == "move" else ""
    return (
        "Elements overlap.",
        f"Content in {where(c, width, height)}{moved} is now drawn over content that stayed "
        "where it was.",
    )


def cut_off(places: int, line: int) -> tuple[str, str]:
    return (
        "Content was cut off.",
        f"Content disappeared in {count(places, 'place')} along one line (y={line}): text or an "
        "element clipped by its box, or hidden.",
    )


def vanished(places: int, first: Change, width: int, height: int) -> tuple[str, str]:
    return (
        f"Content disappeared from {count(places, 'region')}.",
        f"Content disappeared: {where(first, width, height)} shows only background now.",
    )
