"""A column that moved sideways and changed width: a sidebar widened, a margin grown.
Its content moved as a whole, but no one translation explains it, because its text wrapped
again to the new width and what is aligned to its other side stayed. What does not change is
its left edge: on most rows that start at that edge the leftmost content moved by one offset,
and on the first line of each block it is still the same content there (its first glyph, a
border, the start of a rule)."""

from __future__ import annotations

import numpy as np

from viewfinder.imaging import _analysis
from viewfinder.imaging.analysis.model import Box
from viewfinder.imaging.analysis.moves import INK, background
from viewfinder.imaging.analysis.reach import Reach

MIN_ROWS = 12  # rows holding content in both images: fewer say nothing about a column
AGREE = 0.75  # share of those starting at its edge whose left edge moved by the one offset
# Of those rows, the share whose first START px are what started them before, moved along:
# the first line of each paragraph, heading or cell (the later lines of a paragraph wrapped
# again start with other words). Where what started each line was removed (an icon gone),
# what starts it now was beside it all along: none.
MOVED_START = 0.25
START = 6  # px of a row's content, from its left edge, that must have moved unchanged
MAX_SHIFT = 64  # px: further than this a column did not move, its page was rebuilt


def column_shift(a: np.ndarray, b: np.ndarray, box: Box, reach: Reach) -> int | None:
    """The offset dx by which the region's content moved sideways as a column, re-wrapping
    inside it; None when it did not. A centred line whose text changed has its left edge move
    too, but its right edge moves the other way; content removed at the start of a line
    leaves other content at the edge: neither is a column."""
    start = reach.px(START)
    if box[2] < 4 * start:
        return None
    colour = tuple(background(a, box).tolist())
    # The region starts where the first pixel differs, which may be inside the first glyph of
    # a line: its edge is looked for a little further left.
    pad = min(box[0], start)
    x, y, w, h = box[0] - pad, box[1], box[2] + pad, box[3]
    # Each row's first and last pixel of content (-1 on a row with none), in both images.
    bounds_a, bounds_b = np.empty((2, h), np.int32), np.empty((2, h), np.int32)
    _analysis.ink_bounds(a, x, y, w, h, colour, INK, *bounds_a)
    _analysis.ink_bounds(b, x, y, w, h, colour, INK, *bounds_b)
    rows = (bounds_a[0] >= 0) & (bounds_b[0] >= 0)
    if int(rows.sum()) < MIN_ROWS:
        return None
    left_a, left_b = bounds_a[0][rows], bounds_b[0][rows]
    # The rows that start at the column's edge: a row holding only the descenders of a line
    # starts at its first descender, which moves wherever the line wraps.
    # (The commonest value, the least of those tied: np.unique's, without its sort.)
    edge = np.abs(left_a - np.bincount(left_a).argmax()) <= 1
    if int(edge.sum()) < MIN_ROWS:
        return None
    moved = left_b - left_a
    shifts = moved[edge]
    lowest = int(shifts.min())
    dx = int(np.bincount(shifts - lowest).argmax()) + lowest
    agreeing = (moved == dx) & edge
    if dx == 0 or abs(dx) > min(reach.px(MAX_SHIFT), w // 3) or agreeing.sum() < AGREE * edge.sum():
        return None
    right_a, right_b = bounds_a[1][rows], bounds_b[1][rows]
    if np.mean(np.abs(right_b - right_a + dx)[agreeing] <= 1) >= 0.5:
        return None  # centred content that grew or shrank (by an odd number of px, perhaps)
    ys = np.flatnonzero(rows)[agreeing] + y
    starts_a, starts_b = left_a[agreeing] + x, left_b[agreeing] + x
    span = np.arange(start)
    cols_a = np.minimum(starts_a[:, None] + span, a.shape[1] - 1)
    cols_b = np.minimum(starts_b[:, None] + span, b.shape[1] - 1)
    moved_along = (a[ys[:, None], cols_a, :3] == b[ys[:, None], cols_b, :3]).all(axis=(1, 2))
    if moved_along.sum() < MOVED_START * edge.sum():
        return None
    return dx
