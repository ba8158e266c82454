"""Before/after crops around each changed region, and a side-by-side composite of each pair.

Reviewers, people and vision models alike, judge a change far better from a close crop of both
versions than from a full-page diff; this is what `before_after` views are made of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from viewfinder.errors import InvalidInput
from viewfinder.imaging import png
from viewfinder.imaging.compare import Region

GUTTER = 8  # pixels between the two halves of a side-by-side image
GUTTER_RGBA = (136, 136, 136, 255)


@dataclass(frozen=True, slots=True)
class RegionCrop:
    """One region's crops. ``x, y, width, height`` is the padded box on the compared canvas."""

    region: Region
    x: int
    y: int
    width: int
    height: int
    before_png: bytes = field(repr=False)
    after_png: bytes = field(repr=False)
    side_by_side_png: bytes = field(repr=False)


def crop_regions(
    base: bytes,
    candidate: bytes,
    regions: Sequence[Region],
    *,
    padding: int = 16,
    limits: png.Limits = png.DEFAULT_LIMITS,
) -> tuple[RegionCrop, ...]:
    """Crop both images around each region (grown by ``padding``, clipped to the canvas).

    Parts of a box outside one of the images are transparent. Raises InvalidInput for a negative
    padding, and InvalidImage or ImageTooLarge for bad images.
    """
    if padding < 0:
        raise InvalidInput(f"padding must be 0 or more (got {padding})")
    if not regions:
        return ()
    a = png.to_rgba(png.decode(base, limits, name="base"))
    b = png.to_rgba(png.decode(candidate, limits, name="candidate"))
    width, height = max(a.shape[1], b.shape[1]), max(a.shape[0], b.shape[0])
    crops = []
    for region in regions:
        x0, y0 = max(region.x - padding, 0), max(region.y - padding, 0)
        x1 = min(region.x + region.width + padding, width)
        y1 = min(region.y + region.height + padding, height)
        before, after = _window(a, x0, y0, x1, y1), _window(b, x0, y0, x1, y1)
        crops.append(
            RegionCrop(
                region=region,
                x=x0,
                y=y0,
                width=x1 - x0,
                height=y1 - y0,
                before_png=png.encode(before, level=3),
                after_png=png.encode(after, level=3),
                side_by_side_png=png.encode(side_by_side(before, after), level=3),
            )
        )
    return tuple(crops)


def side_by_side(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Two RGBA images next to each other, top-aligned, with a gray gutter between them."""
    height = max(left.shape[0], right.shape[0])
    out = np.zeros((height, left.shape[1] + GUTTER + right.shape[1], 4), np.uint8)
    out[: left.shape[0], : left.shape[1]] = left
    out[:, left.shape[1] : left.shape[1] + GUTTER] = GUTTER_RGBA
    out[: right.shape[0], left.shape[1] + GUTTER :] = right
    return out


def _window(image: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    """The box of an image, transparent where the box reaches past the image's edges."""
    out = np.zeros((y1 - y0, x1 - x0, 4), np.uint8)
    part = image[y0:y1, x0:x1]
    out[: part.shape[0], : part.shape[1]] = part
    return out
