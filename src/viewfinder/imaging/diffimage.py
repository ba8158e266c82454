"""The diff image: changed pixels red, content that moved orange, rendering noise pink, size
mismatch blue, masks gray, the rest a faded copy of the candidate. It is a palette PNG because
the faded copy needs only 32 gray levels, which makes it 4x smaller in memory than RGBA and
several times faster to compress."""

from __future__ import annotations

import numpy as np

from viewfinder.imaging import _native, png

FADE = 0.2  # share of the candidate's contrast kept in the faded copy
CHANGED_RGB = (255, 0, 0)
SIZE_RGB = (0, 0, 255)
MASKED_RGB = (128, 128, 128)
MOVED_RGB = (255, 140, 0)
NOISE_RGB = (255, 182, 193)


def _palette() -> bytes:
    grays = []
    for level in range(_native.PAL_GRAYS):
        luma = min(level * 8 + 4, 255)
        value = round(255 - (255 - luma) * FADE)
        grays.append((value, value, value))
    colors = [*grays, CHANGED_RGB, SIZE_RGB, MASKED_RGB, MOVED_RGB, NOISE_RGB]
    return bytes(c for rgb in colors for c in rgb)


PALETTE = _palette()


def render(labels: np.ndarray, candidate: np.ndarray, *, level: int = 1) -> bytes:
    """Encode the diff image of a (height, width) label plane over the candidate's pixels."""
    height, width = labels.shape
    rows = np.empty((height, width + 1), np.uint8)
    _native.render_diff(labels, candidate, rows)
    return png.encode_indexed(rows, PALETTE, level=level)
