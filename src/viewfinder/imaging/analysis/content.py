"""What a region that did not move holds: the same shapes in new colours, or content that
vanished into background, or a detailed picture that turned plain (a broken image). The last
two are regression signals."""

from __future__ import annotations

import numpy as np

from viewfinder.imaging import _analysis
from viewfinder.imaging.analysis.model import Box, window

EDGE_STRONG = 24.0  # luma gradient of an edge
EDGE_FAINT = 6.0  # ... and of a faint one, which a recolour may leave of it
RECOLOURED = 0.8  # share of changed pixels that must go where the rest of their colour went
ONE_FILL = 0.8  # share of changed pixels going from one colour to one other: a fill recoloured


def same_shapes(a: np.ndarray, b: np.ndarray, box: Box) -> bool:
    """The edges in both images are where they were: only colours changed. Every strong edge
    of one image must be at least a faint edge of the other (a recolour can make an edge
    stronger or weaker, never move it). Edges are where the luma gradient is steep."""
    height, width = a.shape[:2]
    x0, y0, x1, y1 = window(box, 2, width, height)
    # Squared gradients against squared thresholds: the same edges without a square root.
    strong_a, strong_b, kept, found = _analysis.edges(
        a, b, x0, y0, x1, y1, EDGE_STRONG**2, EDGE_FAINT**2
    )
    if not strong_a and not strong_b:
        return True
    return kept >= 0.95 * max(strong_b, 1) and found >= 0.95 * max(strong_a, 1)


def recoloured(a: np.ndarray, b: np.ndarray, box: Box, changed: np.ndarray) -> bool:
    """Each colour of the base became one colour of the candidate: what a recolour does, to
    every pixel of that colour alike. A changed glyph turns some pixels of the background to ink
    and leaves the rest, and some of the ink to background and leaves the rest: most of its
    changed pixels do not go where the rest of their colour went. Colours are compared in steps
    of 8 levels, so that anti-aliasing drawn again over a new colour still counts as one."""
    hits, total = _analysis.recoloured(a, b, changed, box[0], box[1])
    return total > 0 and hits >= RECOLOURED * total


def one_fill(a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box) -> bool:
    """Most changed pixels (ONE_FILL of a sample of about 2048) went from one colour to one
    other colour, in steps of 8 levels."""
    commonest, sampled = _analysis.one_fill(a, b, changed, box[0], box[1], 2048)
    return sampled > 0 and commonest >= ONE_FILL * sampled


def vanished(a: np.ndarray, b: np.ndarray, box: Box) -> bool:
    """The base had content here and the candidate shows only flat background. Slivers less
    than 3 px across say nothing: glyphs re-rasterised a pixel off leave those behind."""
    x, y, w, h = box
    if min(w, h) < 3:
        return False
    if _analysis.spread(b, x, y, w, h) >= 3:
        return False
    return _analysis.spread(a, x, y, w, h) > 12


def image_lost(a: np.ndarray, b: np.ndarray, box: Box) -> bool:
    """A detailed picture became mostly plain: an image that failed to load (a broken-image
    icon or its alt text at most is left) or was hidden."""
    x, y, w, h = box
    if w * h < 256:
        return False
    # A photo has many colours and none dominates; what is left has few, and one dominates.
    # (The candidate's colours are counted only for a base that was such a picture.)
    before = _colours(a, box)
    if before[0] < 64 or before[1] >= 0.5:
        return False
    after = _colours(b, box)
    return after[1] >= 0.6 and after[0] * 2 <= before[0]


def _colours(pixels: np.ndarray, box: Box) -> tuple[int, float]:
    """How many colours an area has, and the share of the commonest."""
    x, y, w, h = box
    distinct, commonest = _analysis.colours(pixels, x, y, w, h)
    return distinct, commonest / (w * h)
