"""Where to look for a move: the translations worth trying for a region, found cheaply and
checked exactly later (in ``moves``). Row and column signatures find content that slid along
one axis, lines equal in both images voting for the offset between them; phase correlation of
the region's surroundings finds any other translation."""

from __future__ import annotations

import functools

import numpy as np

from viewfinder.imaging import _analysis
from viewfinder.imaging.analysis.model import Box, window
from viewfinder.imaging.analysis.reach import Reach

NEAR = 64  # px around a region searched at least, however small the region


class Translations:
    """The translations worth trying for a region, each source computed when first asked for
    (a region's parts share their region's): ``exact`` from row and column signatures, and
    ``phase`` from phase correlation, which costs several times more and is needed only when
    the signatures suggest nothing that explains the region."""

    def __init__(self, a: np.ndarray, b: np.ndarray, box: Box, reach: Reach) -> None:
        self.a, self.b, self.box, self.near = a, b, box, reach.px(NEAR)

    @functools.cached_property
    def exact(self) -> set[tuple[int, int]]:
        # Offsets d along y (then x) at which the candidate's lines across the region equal the
        # base's lines d before them, most voted first; lines up to the region's size away
        # (near px at least) are searched.
        a, b, box, near = self.a, self.b, self.box, self.near
        found = {(0, d) for d in _analysis.votes(a, b, box, near, False)}
        found |= {(d, 0) for d in _analysis.votes(a, b, box, near, True)}
        return self._valid(found)

    @functools.cached_property
    def phase(self) -> set[tuple[int, int]]:
        found = set()
        for dx, dy, step in _phase_peaks(self.a, self.b, self.box, self.near):
            # Peaks of a downsampled correlation are refined around their position.
            around = range(-step, step + 1)
            found |= {(dx + i, dy + j) for i in around for j in around}
        return self._valid(found)

    def _valid(self, found: set[tuple[int, int]]) -> set[tuple[int, int]]:
        height, width = self.a.shape[:2]
        return {d for d in found if d != (0, 0) and abs(d[0]) < width and abs(d[1]) < height}


def _fast_length(n: int) -> int:
    """The largest m <= n whose only prime factors are 2, 3 and 5."""
    for m in range(n, 0, -1):
        k = m
        for p in (2, 3, 5):
            while k % p == 0:
                k //= p
        if k == 1:
            return m
    return n


def _phase_peaks(a: np.ndarray, b: np.ndarray, box: Box, near: int) -> list[tuple[int, int, int]]:
    """Translations suggested by phase correlation of the region's surroundings (coarse for
    large regions, refined later by exact matching)."""
    height, width = a.shape[:2]
    x, y, w, h = box
    x0, y0, x1, y1 = window(box, max(min(max(w, h), near), 8), width, height)
    # Correlated at most 256 samples across: a peak is only a candidate, tried exactly within
    # +-step of it, and halving the samples along each axis makes the transforms 4x cheaper
    # (the move search is most of the analysis of a changed line of text).
    step = max(1, -(-max(x1 - x0, y1 - y0) // 256))
    rows, cols = -(-(y1 - y0) // step), -(-(x1 - x0) // step)
    if rows * cols < 64:
        return []
    # Transforms of lengths with large prime factors are many times slower: the window is
    # cropped to the largest length below it made of 2, 3 and 5 only.
    shape = _fast_length(rows), _fast_length(cols)
    # Grey levels (r + g + b) less their mean, both images transformed in one call. Float64:
    # numpy transforms it faster than float32 (3.7 against 6.3 ms for a 300x500 correlation).
    grey = np.empty((2, *shape))
    _analysis.grey_pair(a, b, x0, y0, step, grey)
    # rfft2 in its two steps: the same transform to the bit, and 2-3x faster on a stack of two
    # images of 128 px and more (numpy 2.4: 186 against 490 us for two 128x128 images).
    spectra = np.fft.fft(np.fft.rfft(grey, axis=2), axis=1)
    cross = np.empty(spectra.shape[1:], spectra.dtype)
    _analysis.cross_power(spectra, cross)
    corr = np.fft.irfft2(cross, s=shape)
    peaks = []
    for py, px in _analysis.peaks(corr, 4):
        dy = py if py <= shape[0] // 2 else py - shape[0]
        dx = px if px <= shape[1] // 2 else px - shape[1]
        peaks.append((dx * step, dy * step, step - 1))
    return peaks
