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
    stronger or weaker, never move it)."""
    height, width = a.shape[:2]
    x0, y0, x1, y1 = window(box, 2, width, height)
    # Squared gradients against squared thresholds: the same edges without a square root.
    ga, gb = _gradient(a[y0:y1, x0:x1]), _gradient(b[y0:y1, x0:x1])
    strong_a, strong_b = ga > EDGE_STRONG**2, gb > EDGE_STRONG**2
    if not strong_a.any() and not strong_b.any():
        return True
    kept = _count(strong_b & (ga > EDGE_FAINT**2)) / max(_count(strong_b), 1)
    found = _count(strong_a & (gb > EDGE_FAINT**2)) / max(_count(strong_a), 1)
    return bool(kept >= 0.95 and found >= 0.95)


def recoloured(a: np.ndarray, b: np.ndarray, box: Box, changed: np.ndarray) -> bool:
    """Each colour of the base became one colour of the candidate: what a recolour does, to
    every pixel of that colour alike. A changed glyph turns some pixels of the background to ink
    and leaves the rest, and some of the ink to background and leaves the rest: most of its
    changed pixels do not go where the rest of their colour went. Colours are compared in steps
    of 8 levels, so that anti-aliasing drawn again over a new colour still counts as one."""
    x, y, w, h = box
    before = _keys(a[y : y + h, x : x + w]).ravel()
    after = _keys(b[y : y + h, x : x + w]).ravel()
    pairs, counts = np.unique(before << 16 | after, return_counts=True)
    # The commonest candidate colour of each base colour (pairs sort by base colour first,
    # so the last of each base colour's run after sorting by count is its commonest).
    order = np.lexsort((counts, pairs >> 16))
    pairs = pairs[order]
    last = np.flatnonzero(np.diff(pairs >> 16, append=-1) != 0)
    colours, targets = pairs[last] >> 16, pairs[last] & 0xFFFF  # colours ascending
    flags = changed.ravel()
    went = targets[np.searchsorted(colours, before[flags])]
    return bool((went == after[flags]).mean() >= RECOLOURED)


def one_fill(a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box) -> bool:
    """Most changed pixels (ONE_FILL of a sample) went from one colour to one other colour."""
    x, y = box[:2]
    # Flat indices sampled first, then split: less work than every pixel's row and column.
    where = np.flatnonzero(changed)
    where = where[:: max(1, where.size // 2048)]
    ys, xs = np.divmod(where, changed.shape[1])
    ys += y
    xs += x
    pairs = _keys(a[ys, xs]) << 16 | _keys(b[ys, xs])
    _, counts = np.unique(pairs, return_counts=True)
    return bool(counts.max() >= ONE_FILL * pairs.size)


def _keys(pixels: np.ndarray) -> np.ndarray:
    # 15 bits a colour, so that a pair of them (base << 16 | candidate) fits in an int32, which
    # np.unique sorts twice as fast as an int64.
    q = pixels[..., :3].astype(np.int32) >> 3
    keys: np.ndarray = (q[..., 0] << 10) | (q[..., 1] << 5) | q[..., 2]
    return keys


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
    before = _colours(a[y : y + h, x : x + w])
    after = _colours(b[y : y + h, x : x + w])
    # A photo has many colours and none dominates; what is left has few, and one dominates.
    return before[0] >= 64 and before[1] < 0.5 and after[1] >= 0.6 and after[0] * 2 <= before[0]


def _gradient(pixels: np.ndarray) -> np.ndarray:
    """The squared magnitude of the luma gradient."""
    luma = pixels[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    if min(luma.shape) < 2:
        return np.zeros(luma.shape, np.float32)
    gy, gx = np.gradient(luma)
    squared: np.ndarray = np.multiply(gx, gx)
    squared += gy * gy
    return squared


def _count(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def _colours(pixels: np.ndarray) -> tuple[int, float]:
    """How many colours an area has, and the share of the commonest."""
    flat = pixels[..., :3].reshape(-1, 3)
    packed = (flat[:, 0].astype(np.int32) << 16) | (flat[:, 1].astype(np.int32) << 8) | flat[:, 2]
    _, counts = np.unique(packed, return_counts=True)
    return int(counts.size), float(counts.max() / packed.size)
