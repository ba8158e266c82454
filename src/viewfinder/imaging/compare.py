"""Compare a candidate screenshot with its baseline: the engine's entry point."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from viewfinder.errors import InvalidImage, InvalidInput
from viewfinder.imaging import _native, cores, diffimage, png
from viewfinder.imaging.analysis import IDENTICAL, Analysis, analyze, subtle_only
from viewfinder.imaging.analysis.reach import MAX_SCALE, MIN_SCALE, reach_for
from viewfinder.imaging.analysis.tint import TINT_MIN_PIXELS, mark_tints
from viewfinder.imaging.masks import Mask, MaskLike, parse_masks, union_area

# Clusters: cells of 8 px, joined when at most 2 empty cells (16-23 px) apart (cells grow with
# the analysis's reach at device scales above 2).
REGION_CELL = 8
REGION_GAP = 2
MAX_REGIONS = 200
_FLAGGED = bytes([_native.LABEL_CHANGED, _native.LABEL_DARKER, _native.LABEL_SIZE])


@dataclass(frozen=True, slots=True)
class Size:
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Region:
    """Bounding box of one cluster of changed pixels, on the compared canvas."""

    x: int
    y: int
    width: int
    height: int
    changed_pixels: int


@dataclass(frozen=True, slots=True)
class Options:
    """The options a comparison ran with, validated."""

    threshold: float = 0.1
    include_aa: bool = False
    max_diff_ratio: float = 0.0
    masks: tuple[Mask, ...] = ()
    ignore_noise: bool = False
    scale: float | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """What compare() found. ``diff_png`` is None when unchanged or when not asked for."""

    changed: bool
    changed_pixels: int
    compared_pixels: int
    diff_ratio: float
    width: int
    height: int
    base_size: Size
    candidate_size: Size
    regions: tuple[Region, ...]
    identical: bool
    fast_path: Literal["bytes", "pixels"] | None
    antialiased_pixels: int
    masked_pixels: int
    options: Options
    analysis: Analysis = IDENTICAL
    diff_png: bytes | None = field(default=None, repr=False)

    @property
    def noise_ignored(self) -> bool:
        """Unchanged only because ``ignore_noise`` dismissed differences past max_diff_ratio."""
        return not self.changed and self.diff_ratio > self.options.max_diff_ratio

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field but the diff image's bytes."""
        return {
            "changed": self.changed,
            "changed_pixels": self.changed_pixels,
            "compared_pixels": self.compared_pixels,
            "diff_ratio": self.diff_ratio,
            "width": self.width,
            "height": self.height,
            "base_size": {"width": self.base_size.width, "height": self.base_size.height},
            "candidate_size": {
                "width": self.candidate_size.width,
                "height": self.candidate_size.height,
            },
            "regions": [
                {
                    "x": r.x,
                    "y": r.y,
                    "width": r.width,
                    "height": r.height,
                    "changed_pixels": r.changed_pixels,
                }
                for r in self.regions
            ],
            "identical": self.identical,
            "fast_path": self.fast_path,
            "antialiased_pixels": self.antialiased_pixels,
            "masked_pixels": self.masked_pixels,
            "threshold": self.options.threshold,
            "include_aa": self.options.include_aa,
            "max_diff_ratio": self.options.max_diff_ratio,
            "masks": [
                {"x": m.x, "y": m.y, "width": m.width, "height": m.height}
                for m in self.options.masks
            ],
            "ignore_noise": self.options.ignore_noise,
            "scale": self.options.scale,
            "analysis": self.analysis.to_dict(),
        }


def max_delta(threshold: float) -> float:
    """Largest squared YIQ distance still counted as equal (35215 is the metric's maximum)."""
    return 35215 * threshold * threshold


def check_scale(value: float | None) -> float | None:
    """Validate a device scale (device px per CSS px), None when unknown. Raises InvalidInput."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not MIN_SCALE <= value <= MAX_SCALE
    ):
        raise InvalidInput(
            f"scale must be the device scale the screenshots were taken at, a number from "
            f"{MIN_SCALE:g} to {MAX_SCALE:g} (got {value!r})"
        )
    return float(value)


def check_unit(name: str, value: float) -> float:
    """Validate an option that must lie in 0..1. Raises InvalidInput."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput(f"{name} must be a number from 0 to 1 (got {value!r})")
    return float(value)


def compare(
    base: bytes,
    candidate: bytes,
    *,
    threshold: float = 0.1,
    include_aa: bool = False,
    masks: Iterable[MaskLike] = (),
    max_diff_ratio: float = 0.0,
    diff_image: bool = True,
    ignore_noise: bool = False,
    scale: float | None = None,
    limits: png.Limits = png.DEFAULT_LIMITS,
) -> Comparison:
    """Compare two PNG screenshots.

    The canvas is the larger of the two sizes; pixels outside the smaller image count as changed.
    Masked pixels leave both the changed count and the compared count. Pixels are changed when
    their colour delta exceeds the threshold, as pixelmatch counts them, and also when they
    belong to an area tinted visibly from one colour to another (analysis.tint), however small
    each delta. The result is "changed"
    when changed / compared exceeds ``max_diff_ratio``, unless ``ignore_noise`` is set and the
    analysis finds only rendering noise. ``scale`` is the device scale both screenshots were
    taken at (device px per CSS px), when known: above 2 the analysis looks further (see
    analysis.reach) and changed pixels group into regions over a longer gap.

    Raises InvalidInput (bad option), InvalidMask, InvalidImage or ImageTooLarge; nothing is
    decoded before the options and headers have been checked.
    """
    options = Options(
        threshold=check_unit("threshold", threshold),
        include_aa=bool(include_aa),
        max_diff_ratio=check_unit("max_diff_ratio", max_diff_ratio),
        masks=parse_masks(masks),
        ignore_noise=bool(ignore_noise),
        scale=check_scale(scale),
    )
    reach = reach_for(options.scale)
    base_header = png.read_header(base, limits, name="base")
    png.read_header(candidate, limits, name="candidate")

    if base == candidate:
        if not png.is_complete(base):
            raise InvalidImage("base is truncated: the PNG ends before its IEND chunk")
        width, height = base_header.width, base_header.height
        masked = union_area(_clipped(options.masks, width, height))
        return Comparison(
            changed=False,
            changed_pixels=0,
            compared_pixels=width * height - masked,
            diff_ratio=0.0,
            width=width,
            height=height,
            base_size=Size(width, height),
            candidate_size=Size(width, height),
            regions=(),
            identical=True,
            fast_path="bytes",
            antialiased_pixels=0,
            masked_pixels=masked,
            options=options,
        )

    a, b = png.decode_pair(base, candidate, limits)
    if a.shape[2] != b.shape[2]:
        a, b = png.to_rgba(a), png.to_rgba(b)
    width, height = max(a.shape[1], b.shape[1]), max(a.shape[0], b.shape[0])
    overlap_w, overlap_h = min(a.shape[1], b.shape[1]), min(a.shape[0], b.shape[0])
    same_size = a.shape[:2] == b.shape[:2]

    # The label plane is the one record of what each pixel is: size mismatch and masks are
    # painted first, the classifier skips masked pixels, and the diff image and regions read it.
    labels = np.zeros((height, width), np.uint8)
    labels[overlap_h:, :] = _native.LABEL_SIZE
    labels[:overlap_h, overlap_w:] = _native.LABEL_SIZE
    clipped = _clipped(options.masks, width, height)
    for x0, y0, x1, y1 in clipped:
        labels[y0:y1, x0:x1] = _native.LABEL_MASKED
    masked = union_area(clipped)
    changed, darker, aa, subtle, masked_differing = _native.classify(
        a,
        b,
        overlap_w,
        overlap_h,
        max_delta(options.threshold),
        options.include_aa,
        True,
        labels,
        2 if cores.may_spread() else 1,
    )
    identical = same_size and changed + darker + aa + subtle + masked_differing == 0
    if subtle >= TINT_MIN_PIXELS:
        # A visible tint over an area is a change however small each pixel's delta: its pixels
        # count as changed here (imaging.pixelmatch keeps pixelmatch's count).
        changed += mark_tints(a, b, labels)
    regions: tuple[Region, ...] = ()
    if changed + darker > 0 or not same_size:
        cell = reach.px(REGION_CELL)
        boxes = _native.regions(labels, _FLAGGED, cell, REGION_GAP, MAX_REGIONS)
        regions = tuple(Region(*box) for box in boxes)
    changed_pixels = sum(r.changed_pixels for r in regions)
    compared = width * height - masked
    if identical:
        analysis = IDENTICAL
    elif changed_pixels == 0:
        analysis = subtle_only()
    else:
        analysis = analyze(
            a,
            b,
            labels,
            [(r.x, r.y, r.width, r.height, r.changed_pixels) for r in regions],
            compared_pixels=compared,
            changed_pixels=changed_pixels,
            reach=reach,
        )
    ratio = changed_pixels / compared if compared else 0.0
    is_changed = ratio > options.max_diff_ratio and not (options.ignore_noise and analysis.noise)
    return Comparison(
        changed=is_changed,
        changed_pixels=changed_pixels,
        compared_pixels=compared,
        diff_ratio=ratio,
        width=width,
        height=height,
        base_size=Size(a.shape[1], a.shape[0]),
        candidate_size=Size(b.shape[1], b.shape[0]),
        regions=regions,
        identical=identical,
        fast_path="pixels" if identical else None,
        antialiased_pixels=aa,
        masked_pixels=masked,
        options=options,
        analysis=analysis,
        diff_png=diffimage.render(labels, b) if is_changed and diff_image else None,
    )


def _clipped(masks: tuple[Mask, ...], width: int, height: int) -> list[tuple[int, int, int, int]]:
    return [box for m in masks if (box := m.clip(width, height)) is not None]
