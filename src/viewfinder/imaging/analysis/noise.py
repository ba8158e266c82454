"""Rendering noise: whether a changed region is the same content re-rasterised (sub-pixel
offsets, tiny rotations, smoothing) rather than a change a person would see.

Both images are blurred a little and the base is shifted by the sub-pixel motion that best
explains the candidate (one Lucas-Kanade step over the region and PAD px around it); the region
is noise when what remains is small everywhere. The surroundings pin the motion to zero when
only the region changed, so a real local change is never explained away as motion. The test
itself is the _analysis C kernel's (is_noise, and noise_run for regions in turn)."""

from __future__ import annotations

import numpy as np

from viewfinder.imaging import _analysis, _native, cores
from viewfinder.imaging.analysis.model import Box
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


# The rule's thresholds, in the order the _analysis kernels take them.
RULE = (NOISE_MOVING, NOISE_STILL, STILL, FLIP_STILL, FLIP, FLIP_CONTRAST, FLIP_PLAIN, FLIPS)


def is_noise(a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: Box, reach: Reach) -> bool:
    """Whether a region's changed pixels (``changed``, region-relative) are its content drawn
    again. Every changed pixel's colour must lie, give or take 2 levels per channel, between the
    darkest and brightest of the other image's 3x3 neighbourhood (re-rasterised edges stay
    within their neighbours' range; new ink does not), and once the base is shifted by the
    estimated motion, what remains must be at most NOISE_STILL (no motion) or NOISE_MOVING. A
    motion that leaves as much as no motion does explains nothing, and where there is next to
    none, no pixel may have flipped from one end of its neighbourhood's range to the other (a
    stroke drawn inside a glyph) or changed by far more than its plain neighbourhood's range (a
    faint outline drawn around a box): re-rasterisation a fraction of a pixel off changes a
    pixel by that fraction of the contrast around it. The test is the _analysis kernel's."""
    return _analysis.is_noise(a, b, changed, box[0], box[1], reach.px(PAD), RULE)


def noise_run(
    a: np.ndarray, b: np.ndarray, labels: np.ndarray, boxes: list[Box], start: int, reach: Reach
) -> tuple[int, bytes]:
    """``is_noise`` of boxes[start:] in turn, each region's changed pixels read from the label
    plane and relabelled noise when they are, until one is not: (its index, or len(boxes), and
    a verdict per region judged: 1 noise, 0 nothing changed left in it)."""
    return _analysis.noise_run(
        a,
        b,
        labels,
        boxes,
        start,
        reach.px(PAD),
        RULE,
        (_native.LABEL_CHANGED, _native.LABEL_DARKER),
        _native.LABEL_NOISE,
        2 if cores.may_spread() else 1,
    )
