"""A drop-in for pixelmatch 7.2.0: the same count and the same diff image, byte for byte.

It shares the native classifier with compare(); only the drawing of the output follows
pixelmatch's conventions (a gray copy of the first image, yellow anti-aliasing, optional mask
mode on a transparent background).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viewfinder.imaging import _native
from viewfinder.imaging.compare import max_delta

Color = Sequence[float]


def _check(name: str, arr: object) -> np.ndarray:
    if not isinstance(arr, np.ndarray) or arr.dtype != np.uint8:
        raise TypeError(f"{name}: image data must be a numpy uint8 array")
    return arr


def _to_uint8(values: np.ndarray | float) -> np.ndarray:
    """JavaScript's conversion on a store into a Uint8Array: truncate, then wrap modulo 256."""
    arr = np.nan_to_num(np.trunc(np.asarray(values, np.float64)), nan=0, posinf=0, neginf=0)
    wrapped: np.ndarray = np.mod(arr, 256).astype(np.uint8)
    return wrapped


def pixelmatch(
    img1: np.ndarray,
    img2: np.ndarray,
    output: np.ndarray | None = None,
    *,
    threshold: float = 0.1,
    include_aa: bool = False,
    alpha: float = 0.1,
    aa_color: Color = (255, 255, 0),
    diff_color: Color = (255, 0, 0),
    diff_color_alt: Color | None = None,
    diff_mask: bool = False,
    checkerboard: bool = True,
) -> int:
    """Count the pixels of two (height, width, 4) uint8 RGBA images that differ, as pixelmatch
    7.2.0 does, and draw its diff image into ``output`` when one is given.

    Raises TypeError for data that is not a uint8 array and ValueError for mismatched sizes.
    """
    img1, img2 = _check("img1", img1), _check("img2", img2)
    if output is not None:
        output = _check("output", output)
    if img1.size != img2.size or (output is not None and output.size != img1.size):
        raise ValueError(
            f"Image sizes do not match. Image 1 size: {img1.size}, image 2 size: {img2.size}"
        )
    if img1.ndim != 3 or img1.shape[2] != 4 or img1.shape != img2.shape:
        raise ValueError(
            "Image data size does not match width/height: expected (height, width, 4) arrays, "
            f"got {img1.shape} and {img2.shape}"
        )
    height, width = img1.shape[:2]
    a, b = np.ascontiguousarray(img1), np.ascontiguousarray(img2)
    labels = np.zeros((height, width), np.uint8)
    changed, darker, *_ = _native.classify(
        a, b, width, height, max_delta(threshold), include_aa, checkerboard, labels
    )
    if output is not None:
        _draw(a, labels, output, alpha, aa_color, diff_color, diff_color_alt, diff_mask)
    return int(changed + darker)


def _draw(
    img1: np.ndarray,
    labels: np.ndarray,
    output: np.ndarray,
    alpha: float,
    aa_color: Color,
    diff_color: Color,
    diff_color_alt: Color | None,
    diff_mask: bool,
) -> None:
    out = output.reshape(labels.shape + (4,))
    if not diff_mask:
        # Same operation order as pixelmatch's drawGrayPixel, so the roundings agree.
        rgba = img1.astype(np.float64)
        luma = rgba[..., 0] * 0.29889531 + rgba[..., 1] * 0.58662247 + rgba[..., 2] * 0.11448223
        gray = _to_uint8(255 + (luma - 255) * alpha * rgba[..., 3] / 255)
        out[..., 0] = out[..., 1] = out[..., 2] = gray
        out[..., 3] = 255
        out[labels == _native.LABEL_AA] = [*_to_uint8(np.asarray(aa_color[:3])), 255]
    out[labels == _native.LABEL_CHANGED] = [*_to_uint8(np.asarray(diff_color[:3])), 255]
    alt = diff_color if diff_color_alt is None else diff_color_alt
    out[labels == _native.LABEL_DARKER] = [*_to_uint8(np.asarray(alt[:3])), 255]
