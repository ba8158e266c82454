"""Faint tints: an area whose colour shifted to another, each pixel's delta under the colour
threshold. pixelmatch counts none of it (its semantics are kept by ``imaging.pixelmatch``), yet
a person comparing the two side by side sees a card go from one pale tint to another. Such an
area is a colour change, whatever the size of each pixel's delta.

What makes it a change and not rendering noise: it is large, it is solid (it fills most of
its box: the borders of boxes drawn a fraction of a pixel off shift coherently too, but in
lines), it is coherent (most of its
differing pixels go from one colour to one other colour: a fill that changed, not edges
re-rasterised, which go every which way) and that shift is visible (a CIE76 colour difference
of at least TINT_DELTA_E, about the smallest difference a person notices side by side; a one-
level jitter of every background is far below it)."""

from __future__ import annotations

import numpy as np

from viewfinder.imaging import _native
from viewfinder.imaging.analysis.model import pixels_of

TINT_MIN_PIXELS = 1024  # differing pixels of an area before it can be a tint (32 x 32)
TINT_SOLID = 0.5  # share of the area's box they fill: an area, not the lines of a border
TINT_COHERENT = 0.5  # share of them going from the one colour to the one other colour
TINT_DELTA_E = 2.0  # CIE76 difference of that shift, in Lab units
SAMPLE = 4096  # pixels of an area looked at


def mark_tints(a: np.ndarray, b: np.ndarray, labels: np.ndarray) -> int:
    """Relabel as changed the under-threshold pixels of every tinted area in the overlap of
    ``a`` and ``b``; returns how many pixels were relabelled."""
    subtle = bytes([_native.LABEL_SUBTLE])
    marked = 0
    for x, y, w, h, count in _native.regions(labels, subtle, 8, 2, 200):
        if count < TINT_MIN_PIXELS:
            continue
        view = labels[y : y + h, x : x + w]
        # A sample on a grid of about SAMPLE points of the area is enough to judge it.
        step = max(1, int((w * h / SAMPLE) ** 0.5))
        grid = view[::step, ::step] == _native.LABEL_SUBTLE
        if grid.mean() < TINT_SOLID:
            continue  # lines, not an area: the edges of boxes drawn a fraction of a pixel off
        ys, xs = pixels_of(grid)
        ys, xs = ys * step + y, xs * step + x
        if _visible_shift(a[ys, xs, :3], b[ys, xs, :3]):
            view[view == _native.LABEL_SUBTLE] = _native.LABEL_CHANGED
            marked += int(count)
    return marked


def _visible_shift(before: np.ndarray, after: np.ndarray) -> bool:
    """Most sampled pixels go from one colour to one other, and that shift is visible."""
    key = _packed(before) << 24 | _packed(after)
    values, counts = np.unique(key, return_counts=True)
    top = int(counts.argmax())
    if counts[top] < TINT_COHERENT * key.size:
        return False
    pair = int(values[top])
    return delta_e(_unpacked(pair >> 24), _unpacked(pair & 0xFFFFFF)) >= TINT_DELTA_E


def _packed(pixels: np.ndarray) -> np.ndarray:
    p = pixels.astype(np.int64)
    packed: np.ndarray = (p[:, 0] << 16) | (p[:, 1] << 8) | p[:, 2]
    return packed


def _unpacked(colour: int) -> tuple[int, int, int]:
    return colour >> 16, (colour >> 8) & 255, colour & 255


def delta_e(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    """CIE76 difference of two sRGB colours (D65)."""
    l1, a1, b1 = _lab(one)
    l2, a2, b2 = _lab(other)
    return float(((l1 - l2) ** 2 + (a1 - a2) ** 2 + (b1 - b2) ** 2) ** 0.5)


def _lab(rgb: tuple[int, int, int]) -> tuple[float, float, float]:
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)
    ]
    r, g, b = linear
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)
