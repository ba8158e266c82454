"""pixelmatch() reproduces pixelmatch 7.2.0: every fixture's count and diff image, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from viewfinder.imaging import pixelmatch

ROOT = Path(__file__).parent / "data" / "pixelmatch"
SPEC = json.loads((ROOT / "v7.2.0" / "cases.json").read_text())
OPTION_NAMES = {
    "threshold": "threshold",
    "includeAA": "include_aa",
    "alpha": "alpha",
    "aaColor": "aa_color",
    "diffColor": "diff_color",
    "diffColorAlt": "diff_color_alt",
    "diffMask": "diff_mask",
    "checkerboard": "checkerboard",
}


def load(path: str) -> np.ndarray:
    # pngjs, which produced the expected images, always yields 8-bit RGBA.
    with Image.open(ROOT / path) as image:
        return np.asarray(image.convert("RGBA"))


def options(case: dict[str, Any]) -> dict[str, Any]:
    return {OPTION_NAMES[k]: v for k, v in case["options"].items()}


@pytest.mark.parametrize("case", SPEC["cases"], ids=[c["name"] for c in SPEC["cases"]])
def test_fixture_count_and_diff_image_match_pixelmatch_7_2_0(case: dict[str, Any]) -> None:
    img1, img2 = load(case["a"]), load(case["b"])
    output = np.zeros_like(img1)  # pngjs's new PNG() starts zero-filled

    mismatched = pixelmatch(img1, img2, output, **options(case))

    assert mismatched == case["expected_mismatch"]
    expected = load(case["diff"])
    assert output.shape == expected.shape
    differing = np.argwhere((output != expected).any(axis=2))
    assert differing.size == 0, f"{len(differing)} pixels differ, first at (y, x) {differing[0]}"


@pytest.mark.parametrize("case", SPEC["cases"], ids=[c["name"] for c in SPEC["cases"]])
def test_fixture_count_is_the_same_without_an_output_image(case: dict[str, Any]) -> None:
    assert (
        pixelmatch(load(case["a"]), load(case["b"]), **options(case)) == case["expected_mismatch"]
    )


@pytest.mark.parametrize("case", SPEC["pixel_cases"], ids=[c["name"] for c in SPEC["pixel_cases"]])
def test_semi_transparent_pixels_blend_against_the_chosen_background(case: dict[str, Any]) -> None:
    shape = (case["height"], case["width"], 4)
    img1 = np.array(case["img1"], np.uint8).reshape(shape)
    img2 = np.array(case["img2"], np.uint8).reshape(shape)
    assert pixelmatch(img1, img2, **options(case)) == case["expected_mismatch"]


def test_images_of_different_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="Image sizes do not match"):
        pixelmatch(np.zeros((2, 2, 4), np.uint8), np.zeros((2, 3, 4), np.uint8))


def test_an_output_of_another_size_is_refused() -> None:
    img = np.zeros((2, 2, 4), np.uint8)
    with pytest.raises(ValueError, match="Image sizes do not match"):
        pixelmatch(img, img, np.zeros((3, 2, 4), np.uint8))


def test_data_that_is_not_height_by_width_by_four_is_refused() -> None:
    with pytest.raises(ValueError, match="Image data size does not match width/height"):
        pixelmatch(np.zeros((2, 6), np.uint8), np.zeros((2, 6), np.uint8))


@pytest.mark.parametrize("bad", [[[0, 0, 0, 0]], np.zeros((1, 1, 4), np.float32)])
def test_data_that_is_not_a_uint8_array_is_refused(bad: Any) -> None:
    with pytest.raises(TypeError, match="uint8 array"):
        pixelmatch(bad, np.zeros((1, 1, 4), np.uint8))


def test_identical_images_give_zero_and_a_gray_copy() -> None:
    img = np.full((3, 3, 4), 255, np.uint8)
    img[1, 1] = (0, 0, 0, 255)
    output = np.zeros_like(img)
    assert pixelmatch(img, img.copy(), output) == 0
    assert output[1, 1].tolist() == [229, 229, 229, 255]  # 255 + (0 - 255) * 0.1
    assert output[0, 0].tolist() == [255, 255, 255, 255]


def test_every_small_colour_difference_counts_as_its_yiq_distance_says() -> None:
    # Every difference of up to 40 levels a channel, as one pixel each, at thresholds a
    # thousandth apart: some of those just past a threshold lie where a bound that skips the
    # distance for small differences would err if it were set a fraction of a percent too low.
    span = np.arange(-40, 41)
    d = np.stack(np.meshgrid(span, span, span, indexing="ij"), axis=-1).reshape(-1, 3)
    dr, dg, db = (d[:, k].astype(np.float64) for k in range(3))
    # pixelmatch's distance, operation for operation (numpy fuses no multiply-add).
    y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223
    i = dr * 0.59597799 - dg * 0.27417610 - db * 0.32180189
    q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694
    delta = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
    side = 729  # 81 ** 3 == 729 * 729
    img1 = np.full((side, side, 4), 128, np.uint8)
    img1[..., 3] = 255
    img2 = img1.copy()
    img2[..., :3] = (128 - d).reshape(side, side, 3)
    for threshold in [0.03, 0.2, 0.3] + [round(0.06 + 0.001 * k, 3) for k in range(40)]:
        expected = int(np.count_nonzero(delta > 35215 * threshold * threshold))
        counted = pixelmatch(img1, img2, threshold=threshold, include_aa=True)
        assert counted == expected, f"threshold {threshold}"
