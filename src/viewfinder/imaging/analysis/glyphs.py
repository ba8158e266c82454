"""Glyphs drawn again: text whose every glyph is re-rasterised slightly differently while
nothing changes in what it says or where it sits (a hinting or text-rendering change, a block
translated or rotated by a fraction of a pixel, letter-spacing off by hundredths of a pixel).

Such a change displaces each glyph by at most a pixel or two, by different amounts along a line
(letter-spacing drifts, a rotation tilts), so no single motion explains the region the way
``noise`` asks. Instead the region is cut into tiles the size of a few glyphs, and each tile
must be explained on its own by some displacement of at most GLYPH_SHIFT px: every changed
pixel's colour lies within the 3x3 neighbourhood's range of the other image, displaced, in both
directions (or nearly all of them, when what the displacement leaves is as small as the noise
test allows of a region that did not move: an outline drawn differently, as light text on a
dark page is). A changed character, a larger or bolder font or an added word leaves new ink no
small displacement explains.

Only text-like regions qualify: a region whose changed pixels run straight for EDGE_RUN px or
more holds a box's edge or a rule, and a box moved by a pixel is a layout change a person sees
(it breaks the alignment with its neighbours); a paragraph a pixel off is not."""

from __future__ import annotations

import functools

import numpy as np

from viewfinder.imaging import _analysis
from viewfinder.imaging.analysis.model import Box
from viewfinder.imaging.analysis.noise import NOISE_MOVING, NOISE_STILL, STILL
from viewfinder.imaging.analysis.reach import Reach

GLYPH_SHIFT = 2  # device px a re-rasterised glyph may be drawn off (1 CSS px at scale 2)
TILE = 32  # px: a few glyphs, which move together
EDGE_RUN = 40  # px of changed pixels in one straight run: an edge, not glyphs
TOLERANCE = 8  # levels outside the neighbourhood's range still taken as within it
TILE_MISSES = 0.08  # share of a tile's changed pixels its displacement may leave unexplained
NEAR_MISSES = 0.15  # ... when what it leaves is within the noise test's residual of a still region
MIN_TILE = 4  # changed pixels below which a tile says nothing
MIN_TILES = 3  # tiles with changes: one glyph changed is not every glyph drawn again
MAX_PIXELS = 30_000  # larger regions are not re-rasterised text
PAD = 8  # px of context around a tile for its motion estimate
# Largest motion residual of a tile: twice the noise test's, as a tile has little context to
# pin its motion down (small sans-serif text at scale 2 re-rasterised comes to about 80).
TILE_RESIDUAL = 2 * NOISE_MOVING + 8


@functools.cache
def _order(shift: int) -> list[tuple[int, int]]:
    """Every displacement of at most ``shift`` px along each axis, shortest first."""
    steps = range(-shift, shift + 1)
    return sorted(((dx, dy) for dx in steps for dy in steps), key=lambda d: abs(d[0]) + abs(d[1]))


def straight_edge(area: np.ndarray, reach: Reach, unset: bytes = b"\0") -> bool:
    """Whether the pixels of ``area`` set (any value but those of ``unset``: a mask's changed
    pixels, or a label plane's differing ones) run straight along a row or a column for
    EDGE_RUN px."""
    return _analysis.straight_run(area, reach.px(EDGE_RUN), unset)


def glyphs_redrawn(
    a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box, reach: Reach
) -> bool:
    """Whether a text-like region's changed pixels (no straight_edge) are its glyphs drawn
    again, each tile of them displaced by at most GLYPH_SHIFT px (see the module's docstring).

    The region is cut into tiles of TILE px; those of MIN_TILE changed pixels or more count,
    and at least MIN_TILES must (above the scales the allowances were set for, glyphs redrawn
    leave a few pixels here and there, regions of a tile or two: one will do). Each counting
    tile must then be explained on its own: a displacement of at most GLYPH_SHIFT px under
    which every changed pixel's colour lies within the base's 3x3 range at p - d, and the
    base's within the candidate's at p + d (displacements tried shortest first, a tile taking
    the first that explains it; two stray pixels are allowed in a small tile, TILE_MISSES of a
    larger one's). Tiles no displacement explains within TILE_MISSES, but one nearly does
    (NEAR_MISSES), are re-rasterised with a different outline (hinting, light text on a dark
    page). The displacement found, the sub-pixel rest must be smooth motion: the same residual
    test as ``noise``, tile by tile, the base displaced by the tile's whole pixels first, within
    TILE_RESIDUAL, or NOISE_STILL for a tile the displacement explains only nearly. The busiest
    tiles are judged first: a change of content fails there. The test is the _analysis
    kernel's (glyph_tiles)."""
    x, y = box[:2]
    rule = (
        reach.px(TILE),
        MIN_TILE,
        1 if reach.sparse else MIN_TILES,
        reach.area(MAX_PIXELS),
        TOLERANCE,
        reach.px(PAD),
        TILE_MISSES,
        NEAR_MISSES,
        STILL,
        NOISE_STILL,
        TILE_RESIDUAL,
    )
    return _analysis.glyph_tiles(a, b, changed, x, y, _order(reach.px(GLYPH_SHIFT)), rule)


def moved_and_redrawn(
    a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box, dx: int, dy: int, reach: Reach
) -> bool:
    """Whether a region's changed pixels (``changed``, region-relative) are content moved by
    (dx, dy) and drawn again a fraction of a pixel off: content moved a fractional distance (a
    grid's columns each narrowed by a third of a pixel) matches the move exactly only where
    its edges land on whole pixels. Once the move is undone, what is left must be glyphs
    drawn again (``glyphs_redrawn``), tile by tile: a word added, or any new ink, is not."""
    height, width = a.shape[:2]
    x, y, w, h = box
    margin = reach.px(PAD) + reach.px(GLYPH_SHIFT) + 2
    x0, y0 = max(x - margin, 0, dx), max(y - margin, 0, dy)
    x1, y1 = min(x + w + margin, width, width + dx), min(y + h + margin, height, height + dy)
    if x0 > x or y0 > y or x1 < x + w or y1 < y + h:
        return False  # it came from beyond the image's edge
    moved_back = a[y0 - dy : y1 - dy, x0 - dx : x1 - dx]
    return glyphs_redrawn(moved_back, b[y0:y1, x0:x1], changed, (x - x0, y - y0, w, h), reach)
