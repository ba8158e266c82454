"""Colours read from a screenshot: what a text (or a logo) looks like against what is behind
it, measured from the pixels under its box rather than from its CSS, so that images,
gradients painted flat, overlays and dark-mode rewrites are seen as a person sees them.

In a box around a text, the background is the most common colour (colours are counted in
bins of 8 levels per channel, then averaged within the winning bin). Ink is every pixel
clearly apart from it. Anti-aliasing makes most ink pixels a blend of text and background,
but glyphs always have some fully covered pixels, even 10 px text at device scale 1; so the
text colour is the ink pixel of highest contrast with the background, ignoring up to two
outliers. Measured this way on Chromium renders of grey, blue and red text from 10 to 24 px,
the ratio is within 3% of the CSS colours' from 11 px up at scale 1, and exact at scale 2.
A box whose background is not mostly one colour (a photo, a gradient) is not measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# WCAG's relative luminance of each 8-bit sRGB channel value.
_LINEAR = np.array(
    [
        c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
        for c in range(256)
    ]
)
_WEIGHTS = np.array([0.2126, 0.7152, 0.0722])
# Ink differs from the background by more than this, summed over the three channels.
_INK_DISTANCE = 24
# Below this share of the box in its most common colour, the background is not flat enough.
_FLAT_BACKGROUND = 0.25
MIN_INK = 3


def luminance(rgb: np.ndarray) -> np.ndarray:
    """Relative luminance (0 black to 1 white) of an (..., 3) array of 8-bit colours."""
    result: np.ndarray = _LINEAR[rgb] @ _WEIGHTS
    return result


def contrast(a: float, b: float) -> float:
    """WCAG contrast ratio of two luminances, 1 to 21."""
    high, low = max(a, b), min(a, b)
    return (high + 0.05) / (low + 0.05)


@dataclass(frozen=True, slots=True)
class Measure:
    """A text's colour and its background's, their contrast ratio, and how many pixels of
    ink there were (none: the patch is flat, whatever was meant to show there does not)."""

    ink: tuple[int, int, int]
    background: tuple[int, int, int]
    ratio: float
    ink_pixels: int


def hex_colour(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def crop(pixels: np.ndarray, box: tuple[float, float, float, float], scale: float) -> np.ndarray:
    """The (rows, columns, 3) pixels under a box given in CSS px, clipped to the image."""
    x, y, w, h = box
    height, width = pixels.shape[:2]
    x0, y0 = max(0, int(x * scale)), max(0, int(y * scale))
    x1, y1 = min(width, int(np.ceil((x + w) * scale))), min(height, int(np.ceil((y + h) * scale)))
    return pixels[y0:y1, x0:x1]


def measure(area: np.ndarray) -> Measure | None:
    """Text and background colours in a patch of pixels, or None when the patch is too small
    or has no flat background (then there is nothing to judge). A flat patch without ink
    measures 1:1."""
    flat = area.reshape(-1, 3)
    if len(flat) < 16:
        return None
    binned = flat >> 3
    keys = (
        (binned[:, 0].astype(np.int32) << 10) | (binned[:, 1].astype(np.int32) << 5) | binned[:, 2]
    )
    counts = np.bincount(keys, minlength=32768)
    mode = int(counts.argmax())
    if counts[mode] < _FLAT_BACKGROUND * len(flat):
        return None
    background = flat[keys == mode].mean(axis=0).round().astype(np.int16)
    distance = np.abs(flat.astype(np.int16) - background).sum(axis=1)
    ink = flat[distance > _INK_DISTANCE]
    shade = (int(background[0]), int(background[1]), int(background[2]))
    if len(ink) < MIN_INK:
        return Measure(ink=shade, background=shade, ratio=1.0, ink_pixels=len(ink))
    lum_background = float(luminance(background.astype(np.uint8)))
    lum_ink = luminance(ink)
    high = np.maximum(lum_ink, lum_background)
    low = np.minimum(lum_ink, lum_background)
    ratios = (high + 0.05) / (low + 0.05)
    rank = len(ratios) - 1 - min(2, len(ratios) // 200)
    pick = int(np.argpartition(ratios, rank)[rank])
    return Measure(
        ink=(int(ink[pick][0]), int(ink[pick][1]), int(ink[pick][2])),
        background=shade,
        ratio=float(ratios[pick]),
        ink_pixels=len(ink),
    )
