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
    least: tuple[int, int] = (0, 0),
    limits: png.Limits = png.DEFAULT_LIMITS,
) -> tuple[RegionCrop, ...]:
    """Crop both images around each region (grown by ``padding``, and to at least ``least``
    (width, height) around its centre, clipped to the canvas): a small change is shown with
    enough of its surroundings to tell where it is.

    Parts of a box outside one of the images are transparent. Raises InvalidInput for a negative
    padding, and InvalidImage or ImageTooLarge for bad images.
    """
    if padding < 0:
        raise InvalidInput(f"padding must be 0 or more (got {padding})")
    if min(least) < 0:
        raise InvalidInput(f"least must be 0 or more in both directions (got {least})")
    if not regions:
        return ()
    sizes = [
        png.read_header(data, limits, name=what)
        for data, what in ((base, "base"), (candidate, "candidate"))
    ]
    width, height = max(h.width for h in sizes), max(h.height for h in sizes)
    crops = []
    for region in regions:
        x0, x1 = _span(region.x, region.width, padding, least[0], width)
        y0, y1 = _span(region.y, region.height, padding, least[1], height)
        # Only the rows of the box are kept: a crop of a huge page never decodes all of it.
        before = _window(_rows(base, y0, y1, limits, "base"), x0, y1 - y0, x1)
        after = _window(_rows(candidate, y0, y1, limits, "candidate"), x0, y1 - y0, x1)
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


def _span(start: int, size: int, padding: int, least: int, limit: int) -> tuple[int, int]:
    """One axis of a crop: the region grown by ``padding`` and clipped to 0..limit; when that
    is under ``least``, a window of ``least`` around the region's centre, kept within 0..limit."""
    low, high = max(start - padding, 0), min(start + size + padding, limit)
    if high - low >= least:
        return low, high
    want = min(least, limit)
    low = min(max(start + size // 2 - want // 2, 0), limit - want)
    return low, low + want


def side_by_side(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Two RGBA images next to each other, top-aligned, with a gray gutter between them."""
    height = max(left.shape[0], right.shape[0])
    out = np.zeros((height, left.shape[1] + GUTTER + right.shape[1], 4), np.uint8)
    out[: left.shape[0], : left.shape[1]] = left
    out[:, left.shape[1] : left.shape[1] + GUTTER] = GUTTER_RGBA
    out[: right.shape[0], left.shape[1] + GUTTER :] = right
    return out


def _rows(data: bytes, top: int, bottom: int, limits: png.Limits, name: str) -> np.ndarray:
    """Rows top..bottom of an image as RGBA (none when the image ends above ``top``)."""
    header = png.read_header(data, limits, name=name)
    if top >= header.height:
        return np.zeros((0, header.width, 4), np.uint8)
    return png.to_rgba(png.decode_rows(data, top, bottom - top, limits, name=name))


def _window(rows: np.ndarray, x0: int, height: int, x1: int) -> np.ndarray:
    """Columns x0..x1 of the rows, ``height`` tall, transparent past the image's edges."""
    out = np.zeros((height, x1 - x0, 4), np.uint8)
    part = rows[:height, x0:x1]
    out[: part.shape[0], : part.shape[1]] = part
    return out
