"""The walk over a pair: each changed region examined on its own, in the order the package
docstring gives (noise, move, colour, parts, content), relabelling the diff image's moved and
noise pixels as it goes, then the whole pair handed to ``verdict``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

import numpy as np

from viewfinder.imaging import _native
from viewfinder.imaging.analysis.candidates import Translations
from viewfinder.imaging.analysis.columns import column_shift
from viewfinder.imaging.analysis.content import (
    image_lost,
    one_fill,
    recoloured,
    same_shapes,
    vanished,
)
from viewfinder.imaging.analysis.glyphs import (
    GLYPH_SHIFT,
    glyphs_redrawn,
    moved_and_redrawn,
    straight_edge,
)
from viewfinder.imaging.analysis.model import Analysis, Box, Change, pixels_of, window
from viewfinder.imaging.analysis.moves import (
    MOVE_EXPLAINED,
    MOVE_MIN_PIXELS,
    Move,
    Ranking,
    accepted,
    band,
    find_move,
    known_move,
    overlapping,
    stayed,
    swept,
)
from viewfinder.imaging.analysis.noise import is_noise, noise_run
from viewfinder.imaging.analysis.reach import SET, Reach
from viewfinder.imaging.analysis.signals import Signal
from viewfinder.imaging.analysis.verdict import conclude

LEFT = (_native.LABEL_CHANGED, _native.LABEL_DARKER, _native.LABEL_MOVED)
LEFT_SHARE = 0.3  # of a move's pixels: how much must have changed where they came from
SPLIT_GAP = 2  # unchanged rows or columns that separate the parts of a region
MAX_PARTS = 12  # parts of a region examined one by one
EDGE_PAD = 32  # px around a region where a box's edge would show it is not bare text
# Labels of pixels that do not differ: the rest, however faintly they differ, may draw an edge.
_QUIET = bytes([_native.LABEL_SAME, _native.LABEL_MASKED, _native.LABEL_SIZE])
# Regions examined in detail, as many as compare() lists (a page drawn again a fraction of a
# pixel off at scale 2 comes to over a hundred); any beyond are summarised by size.
MAX_ANALYSED = 200


class Seen:
    """What the images alone tell of the boxes a pair's walk examines, kept for a box examined
    again: each region's translations worth trying (shared with its parts, whose windows lie
    within its own, and with its second look), the answers of the tests that read only the
    images, which a region's second look asks again, and what ranking the translations on a
    box's changed pixels told (kept while those pixels are the same)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, reach: Reach) -> None:
        self.a, self.b, self.reach = a, b, reach
        self._translations: dict[Box, Translations] = {}
        self._answers: dict[tuple[str, Box], object] = {}
        self._rankings: dict[Box, tuple[np.ndarray, Ranking]] = {}

    def ranking(self, box: Box, changed: np.ndarray) -> Ranking:
        kept = self._rankings.get(box)
        if kept is None or not np.array_equal(kept[0], changed):
            kept = self._rankings[box] = (changed.copy(), Ranking())
        return kept[1]

    def translations(self, box: Box) -> Translations:
        found = self._translations.get(box)
        if found is None:
            found = self._translations[box] = Translations(self.a, self.b, box, self.reach)
        return found

    def same_shapes(self, box: Box) -> bool:
        return bool(self._answer("same_shapes", box, lambda: same_shapes(self.a, self.b, box)))

    def column_shift(self, box: Box) -> int | None:
        found = self._answer("column", box, lambda: column_shift(self.a, self.b, box, self.reach))
        return None if found is None else cast(int, found)

    def vanished(self, box: Box) -> bool:
        return bool(self._answer("vanished", box, lambda: vanished(self.a, self.b, box)))

    def image_lost(self, box: Box) -> bool:
        return bool(self._answer("image_lost", box, lambda: image_lost(self.a, self.b, box)))

    def _answer(self, test: str, box: Box, work: Callable[[], object]) -> object:
        key = (test, box)
        if key not in self._answers:
            self._answers[key] = work()
        return self._answers[key]


def analyze(
    a: np.ndarray,
    b: np.ndarray,
    labels: np.ndarray,
    regions: list[tuple[int, int, int, int, int]],
    *,
    compared_pixels: int,
    changed_pixels: int,
    reach: Reach = SET,
) -> Analysis:
    """Explain a changed pair. ``labels`` is the comparison's label plane; moved and noise
    pixels are relabelled in it so the diff image tells them apart."""
    height, width = labels.shape
    overlap_w, overlap_h = min(a.shape[1], b.shape[1]), min(a.shape[0], b.shape[0])
    changes: list[Change] = []
    if (a.shape[0], a.shape[1]) != (b.shape[0], b.shape[1]):
        changes.append(
            Change(
                0,
                0,
                width,
                height,
                "size",
                (width * height) - overlap_w * overlap_h,
                signal=Signal.RESIZED,
                sizes=(a.shape[1], a.shape[0], b.shape[1], b.shape[0]),
            )
        )
    # Each region's part inside both images; the rest is the size change.
    boxes = []
    for index, (x, y, w, h, count) in sorted(enumerate(regions), key=lambda r: -r[1][4]):
        cw, ch = min(x + w, overlap_w) - x, min(y + h, overlap_h) - y
        if cw > 0 and ch > 0:
            boxes.append((x, y, cw, ch, count, index))
    examined, skipped = boxes[:MAX_ANALYSED], boxes[MAX_ANALYSED:]
    a, b = a[:overlap_h, :overlap_w], b[:overlap_h, :overlap_w]  # what both images show
    changes += [
        Change(x, y, w, h, "content", n, signal=Signal.NOT_EXAMINED, region=i)
        for x, y, w, h, n, i in skipped
    ]
    known: dict[tuple[int, int], None] = {}  # moves found so far, an ordered set
    seen = Seen(a, b, reach)
    plain: list[tuple[int, int, int]] = []  # (place in changes, region, moves known then)
    areas = [(x, y, w, h) for x, y, w, h, _, _ in examined]
    number = 0
    while number < len(examined):
        # Regions are tested for noise first, in runs judged in one call up to the first that is
        # not noise: on a page drawn again a fraction of a pixel off, that is every one.
        stop, verdicts = noise_run(a, b, labels, areas, number, reach)
        run = zip(examined[number:stop], verdicts, strict=True)
        changes += [
            Change(x, y, w, h, "noise", count, region=index)
            for (x, y, w, h, count, index), noise in run
            if noise
        ]
        if stop == len(examined):
            break
        x, y, w, h, count, index = examined[stop]
        found = examine(
            a, b, labels, (x, y, w, h), count, tuple(known), reach, tested=True, seen=seen
        )
        known.update(((c.dx or 0, c.dy or 0), None) for c in found if c.kind == "move")
        if len(found) == 1 and _plain(found[0]):
            plain.append((len(changes), stop, len(known)))
        changes.extend(replace(c, region=index) for c in found)
        number = stop + 1
    # Regions are examined largest first, so a large one may come before the smaller ones that
    # find the move it is part of (a card pushed down by a banner, the vector too long for its
    # own surroundings to show where it came from; the strip of a pale card's fill that a move
    # swept over background, which alone looks recoloured). Plain or vanished content and
    # colour examined before a move was found are looked at again once, with every move the
    # pair holds.
    for at, number, known_then in reversed(plain):
        if known_then == len(known):
            continue
        x, y, w, h, count, index = examined[number]
        found = examine(a, b, labels, (x, y, w, h), count, tuple(known), reach, seen=seen)
        if not (len(found) == 1 and _plain(found[0])):
            changes[at : at + 1] = [replace(c, region=index) for c in found]
    if changes and all(c.kind == "noise" for c in changes):
        changes = _nudged(a, b, labels, changes, reach)
    return conclude(changes, width, height, compared_pixels, changed_pixels)


def examine(
    a: np.ndarray,
    b: np.ndarray,
    labels: np.ndarray,
    box: Box,
    count: int,
    known: tuple[tuple[int, int], ...],
    reach: Reach,
    candidates: Translations | None = None,
    *,
    tested: bool = False,
    seen: Seen,
) -> list[Change]:
    """The changes one region holds, relabelling the diff image's moved and noise pixels
    (``tested``: the noise test already found it is not noise). ``seen`` holds what the
    images alone told of boxes examined before."""
    x, y, w, h = box
    view = labels[y : y + h, x : x + w]
    changed = (view == _native.LABEL_CHANGED) | (view == _native.LABEL_DARKER)
    if not changed.any():
        return []
    split = candidates is None
    if not tested and is_noise(a, b, changed, box, reach):
        view[changed] = _native.LABEL_NOISE
        return [Change(x, y, w, h, "noise", count)]
    text = _text_like(labels, box, reach)
    # (The parts of a region are not tried as glyphs again: the region's glyphs were. Nor is
    # text that a move found elsewhere carried further than a glyph is ever redrawn: the block
    # that pushed its neighbours pushed this one too, and that is cheap to see.)
    if (
        split
        and text
        and known_move(a, b, changed, box, known, beyond=reach.px(GLYPH_SHIFT)) is None
        and glyphs_redrawn(a, b, changed, box, reach)
    ):
        view[changed] = _native.LABEL_NOISE
        return [Change(x, y, w, h, "noise", count)]
    if one_fill(a, b, changed, box) and seen.same_shapes(box) and recoloured(a, b, box, changed):
        # A fill that went from one colour to another, edges in place: nothing moved it (and
        # looking for a move over a plain area costs as much as the rest of the comparison),
        # unless it is the fill of a pale block a move found elsewhere carried.
        if (carried := swept(a, b, changed, box, known)) is not None:
            view[changed] = _native.LABEL_MOVED
            return [Change(x, y, w, h, "move", count, *carried)]
        return [Change(x, y, w, h, "color", count)]
    if candidates is None:
        candidates = seen.translations(box)
    move = None
    if count >= reach.area(MOVE_MIN_PIXELS):
        move = find_move(a, b, changed, box, reach, known, candidates, seen.ranking(box, changed))
    if move is not None and text and max(abs(move.dx), abs(move.dy)) <= reach.px(GLYPH_SHIFT):
        # Text a pixel or two along, beside ink no displacement explains: the rest of a line
        # reflowed around a changed character. What the eye sees is the character.
        move = None
    if move is not None and (move.dx, move.dy) not in known and not _left(labels, box, move):
        # A vector found nowhere else in the pair must show where the content came from.
        move = None
    signal = Signal.OVERLAPS if overlapping(move, reach) else None
    if move is not None and accepted(move, changed):
        dx, dy, explained = move.dx, move.dy, move.mask
        view[explained & changed] = _native.LABEL_MOVED
        rest = changed & ~explained
        moved = int((explained & changed).sum())
        found = [Change(x, y, w, h, "move", moved, dx, dy, signal=signal)]
        if move.share < MOVE_EXPLAINED and rest.any():
            # What the move leaves unexplained must be the band of content that pushed it.
            rows = band(rest, dx, dy)
            if rows is None and moved_and_redrawn(a, b, changed, box, dx, dy, reach):
                # No band: the rest is the moved content itself, a fraction of a pixel off.
                view[changed] = _native.LABEL_MOVED
                return [Change(x, y, w, h, "move", count, dx, dy, signal=signal)]
            if rows is None:
                view[explained & changed] = _native.LABEL_CHANGED
                if split and dy == 0 and seen.column_shift(box) == dx:
                    return [Change(x, y, w, h, "move", count, dx, 0, signal=Signal.REWRAPPED)]
                return [Change(x, y, w, h, "content", count, signal=signal)]
            inserted = np.zeros_like(rest)
            inserted[rows] = rest[rows]
            ys, xs = pixels_of(inserted)
            at_top = ys.min() + y == 0 and dy > 0
            found.append(
                Change(
                    x + int(xs.min()),
                    y + int(ys.min()),
                    int(np.ptp(xs)) + 1,
                    int(np.ptp(ys)) + 1,
                    "content",
                    int(rest.sum()),
                    signal=Signal.INSERTED_AT_TOP if at_top else Signal.NEW_CONTENT,
                )
            )
        return found
    if seen.same_shapes(box) and recoloured(a, b, box, changed):
        return [Change(x, y, w, h, "color", count)]
    if split and (sideways := seen.column_shift(box)) is not None:
        # Moved as a column, wrapping again inside it: what a person sees is the layout.
        return [Change(x, y, w, h, "move", count, sideways, 0, signal=Signal.REWRAPPED)]
    pieces = _parts(changed, reach) if split else []
    if pieces is not None:
        # One region may hold unrelated changes close together (a button recoloured just above
        # text that moved): its parts, where unchanged rows or columns separate them, are
        # examined one by one, and kept apart when any of them is more than plain content.
        # (Beyond MAX_PARTS they are the words or letters of one change: a paragraph rewritten,
        # set in another weight.)
        parts = [
            found
            for px, py, pw, ph in pieces
            for found in examine(
                a,
                b,
                labels,
                (x + px, y + py, pw, ph),
                int(changed[py : py + ph, px : px + pw].sum()),
                known,
                reach,
                candidates,
                seen=seen,
            )
        ]
        if any(c.kind != "content" or c.signal is not None for c in parts):
            return parts
    if seen.vanished(box):
        signal = Signal.VANISHED
    elif seen.image_lost(box):
        signal = Signal.IMAGE_LOST
    return [Change(x, y, w, h, "content", count, signal=signal)]


def _plain(change: Change) -> bool:
    """Content with nothing more to say about it, content that seems to have vanished, or a
    colour change: what a move found later in the pair may explain (a dark card's plain fill
    pushed 80 px down by a banner, its old place no longer showing the card's edge)."""
    return change.kind == "color" or (
        change.kind == "content" and change.signal in (None, Signal.VANISHED)
    )


def _text_like(labels: np.ndarray, box: Box, reach: Reach) -> bool:
    """No straight edge differs in or around the region, however faintly: glyphs, not a box
    (whose pale background's edge may lie in its padding, outside what changed)."""
    height, width = labels.shape
    x0, y0, x1, y1 = window(box, reach.px(EDGE_PAD), width, height)
    return not straight_edge(labels[y0:y1, x0:x1], reach, _QUIET)


def _left(labels: np.ndarray, box: Box, move: Move) -> bool:
    """Whether the moved content left where it was: the place it came from changed too. The
    same glyph or icon drawn elsewhere, and still there, matches by chance."""
    height, width = labels.shape
    x, y, w, h = box
    # The box drawn tight around what changed, moved back by a short move, cuts off the far
    # side of where it came from: a few pixels more of it are looked at.
    pad = min(max(abs(move.dx), abs(move.dy)), 4)
    x0, y0 = max(x - move.dx - pad, 0), max(y - move.dy - pad, 0)
    x1, y1 = min(x - move.dx + w + pad, width), min(y - move.dy + h + pad, height)
    if x1 <= x0 or y1 <= y0:
        return True  # it came from beyond the image's edge
    source = labels[y0:y1, x0:x1]
    gone = sum(int(np.count_nonzero(source == label)) for label in LEFT)
    return bool(gone >= LEFT_SHARE * move.mask.sum())


def _parts(changed: np.ndarray, reach: Reach) -> list[tuple[int, int, int, int]] | None:
    """Boxes (region-relative) of the bands of ``changed`` that at least SPLIT_GAP unchanged
    rows (or, failing that, columns) separate; fewer than two: nothing to split; more than
    MAX_PARTS: None, without drawing their boxes (a line of text at scale 2 splits into forty
    words, boxed in as long as the rest of its examination)."""
    for axis in (1, 0):
        used = changed.any(axis=axis)
        lines = np.flatnonzero(used)
        breaks = np.flatnonzero(np.diff(lines) > reach.px(SPLIT_GAP))
        if breaks.size == 0:
            continue
        if breaks.size + 1 > MAX_PARTS:
            return None
        starts = np.concatenate([[lines[0]], lines[breaks + 1]])
        ends = np.concatenate([lines[breaks], [lines[-1]]]) + 1
        boxes = []
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            strip = changed[lo:hi] if axis == 1 else changed[:, lo:hi]
            across = np.flatnonzero(strip.any(axis=0 if axis == 1 else 1))
            first, last = int(across[0]), int(across[-1]) + 1
            if axis == 1:
                boxes.append((first, lo, last - first, hi - lo))
            else:
                boxes.append((lo, first, hi - lo, last - first))
        return boxes
    return []


def _nudged(
    a: np.ndarray, b: np.ndarray, labels: np.ndarray, noise: list[Change], reach: Reach
) -> list[Change]:
    """Regions explained as sub-pixel motion may be one block moved by a whole pixel (its edges,
    its fill's edges and what it holds): that is a layout change a person sees, as it breaks
    the block's alignment with its neighbours. They are a move when none is bare text, one
    translation of at most a pixel explains each of them exactly, and content outside them
    that the translation would have changed stayed where it was: a sub-pixel offset of the
    page, drawn a whole pixel off, moves everything."""
    boxes = [(c.x, c.y, c.width, c.height) for c in noise]
    # Smallest first: on a page drawn again a fraction of a pixel off, the smallest regions
    # are its text's, and the first of them settles it.
    if any(_text_like(labels, box, reach) for box in reversed(boxes)):
        # A paragraph a pixel off is its glyphs redrawn (see glyphs): even a whole-pixel copy
        # of part of a line is what a text block rotated by 0.02 degree shows, its glyph runs
        # snapped to whole pixels one by one.
        return noise
    vectors, explained = set(), []
    for c, (x, y, w, h) in zip(noise, boxes, strict=True):
        changed = labels[y : y + h, x : x + w] == _native.LABEL_NOISE
        move = None
        if c.changed_pixels >= reach.area(MOVE_MIN_PIXELS):
            move = find_move(a, b, changed, (x, y, w, h), reach)
        if move is None or move.share < MOVE_EXPLAINED or max(abs(move.dx), abs(move.dy)) > 1:
            return noise
        vectors.add((move.dx, move.dy))
        explained.append(changed)
    if len(vectors) > 1:
        return noise
    ((dx, dy),) = vectors
    if not stayed(a, b, boxes, dx, dy, reach):
        return noise
    for (x, y, w, h), changed in zip(boxes, explained, strict=True):
        labels[y : y + h, x : x + w][changed] = _native.LABEL_MOVED
    return [replace(c, kind="move", dx=dx, dy=dy) for c in noise]
