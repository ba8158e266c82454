"""Rendering noise: whether a changed region is the same content re-rasterised (sub-pixel
offsets, tiny rotations, smoothing) rather than a change a person would see.

Both images are blurred a little and the base is shifted by the sub-pixel motion that best
explains the candidate (one Lucas-Kanade step over the region and PAD px around it); the region
is noise when what remains is small everywhere. The surroundings pin the motion to zero when
only the region changed, so a real local change is never explained away as motion. The loops
are the _analysis C kernels."""

from __future__ import annotations

import numpy as np

from viewfinder.imaging import _analysis
from viewfinder.imaging.analysis.model import Box, window
from viewfinder.imaging.analysis.reach import Reach

PAD = 32  # context around a region for the motion estimate
NOISE_MOVING = 41.0  # largest residual of a region whose surroundings moved sub-pixel
NOISE_STILL = 30.0  # ... and of a region whose surroundings did not move
STILL = 0.03  # px of estimated motion below which a region is taken as not moving
FLIP_STILL = 0.15  # px of motion below which no pixel can flip from dark to light
FLIP = 0.8  # share of the neighbourhood's range a pixel changes by to have flipped
FLIP_CONTRAST = 64.0  # luma range of a neighbourhood with a stroke in it
FLIP_PLAIN = 32.0  # luma change of a stroke drawn on a plain neighbourhood (twice its range)
FLIPS = 2  # flipped pixels that make a region content


def noise_residual(
    a: np.ndarray, b: np.ndarray, box: Box, reach: Reach
) -> tuple[float, float, float]:
    """(largest residual inside the box after motion compensation, motion in px, largest
    residual inside the box with no motion)."""
    height, width = a.shape[:2]
    area = window(box, reach.px(PAD), width, height)
    x0, y0 = area[:2]
    x, y, bw, bh = box
    inside = (x - x0, y - y0, x - x0 + bw, y - y0 + bh)
    # A sub-pixel shift uncovers up to a pixel of new content along the image's own edges.
    # (Kept within the box: on an image a few pixels wide, nothing is left.)
    left, top = min(max(x, 2), x + bw), min(max(y, 2), y + bh)
    trimmed = (
        left - x0,
        top - y0,
        max(min(x + bw, width - 2), left) - x0,
        max(min(y + bh, height - 2), top) - y0,
    )
    return _analysis.motion_residual(a, b, area, inside, trimmed, STILL)


def in_envelope(
    a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box, skip_edges: bool = False
) -> bool:
    """Every changed pixel's colour is found, give or take 2 levels per channel, between the
    darkest and brightest of the other image's 3x3 neighbourhood (in one direction or the
    other): re-rasterised edges stay within their neighbours' range; new ink does not."""
    return _analysis.envelope(a, b, changed, box[0], box[1], skip_edges)


def is_noise(a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box, reach: Reach) -> bool:
    # The envelope test is cheap and fails fast on new ink; its edge-skipping form is implied
    # by the strict one, so it can go first whatever the motion turns out to be.
    if not in_envelope(a, b, changed, box, skip_edges=True):
        return False
    residual, motion, unmoved = noise_residual(a, b, box, reach)
    if residual > (NOISE_STILL if motion < STILL else NOISE_MOVING):
        return False
    # A motion that leaves as much as no motion does explains nothing (a faint line drawn
    # beside a box's edge looks to the estimate like the edge moving): strokes that appeared
    # are then a change, as they are where nothing moved.
    explains = residual < unmoved
    if (motion < FLIP_STILL or not explains) and flipped(a, b, changed, box):
        return False
    return motion >= STILL or in_envelope(a, b, changed, box, skip_edges=False)


def flipped(a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box) -> bool:
    """Some changed pixels went from one end of their neighbourhood's range to the other (a
    stroke drawn where there was none, inside a glyph), or changed by far more than their
    plain neighbourhood's range (a faint 1 px outline drawn around a box on a dark page): a
    content change. Re-rasterisation a fraction of a pixel off changes a pixel by that
    fraction of the contrast around it; where the motion is next to none, no pixel flips."""
    found = _analysis.flips(a, b, changed, box[0], box[1], FLIP, FLIP_CONTRAST, FLIP_PLAIN, FLIPS)
    return found >= FLIPS
