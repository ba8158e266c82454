"""Crops of both versions around each changed region, and their side-by-side composite."""

from __future__ import annotations

import numpy as np
import pytest

from viewfinder.errors import InvalidInput
from viewfinder.imaging import compare, crop_regions, decode, png
from viewfinder.imaging.crops import GUTTER, GUTTER_RGBA


def white(h: int, w: int) -> np.ndarray:
    return np.full((h, w, 3), 255, np.uint8)


def test_each_region_gets_a_padded_before_and_after_crop() -> None:
    base, cand = white(100, 200), white(100, 200)
    cand[40:50, 60:80] = (0, 0, 0)
    base_png, cand_png = png.encode(base), png.encode(cand)
    regions = compare(base_png, cand_png).regions

    (crop,) = crop_regions(base_png, cand_png, regions, padding=5)

    assert (crop.x, crop.y, crop.width, crop.height) == (55, 35, 30, 20)
    before, after = decode(crop.before_png), decode(crop.after_png)
    assert before.shape == after.shape == (20, 30, 4)
    assert (before == 255).all()
    assert (after[5:15, 5:25, :3] == 0).all() and (after[:5] == 255).all()


def test_the_side_by_side_image_puts_before_left_of_after() -> None:
    base, cand = white(30, 30), white(30, 30)
    cand[10:20, 10:20] = (0, 0, 0)
    base_png, cand_png = png.encode(base), png.encode(cand)
    (crop,) = crop_regions(base_png, cand_png, compare(base_png, cand_png).regions, padding=0)
    both = decode(crop.side_by_side_png)
    assert both.shape == (10, 10 + GUTTER + 10, 4)
    assert (both[:, :10, :3] == 255).all()
    assert (both[:, 10 : 10 + GUTTER] == GUTTER_RGBA).all()
    assert (both[:, 10 + GUTTER :, :3] == 0).all()


def test_padding_stops_at_the_canvas_and_missing_areas_are_transparent() -> None:
    base, cand = white(20, 20), white(26, 20)  # the candidate is 6 px taller
    base_png, cand_png = png.encode(base), png.encode(cand)
    regions = compare(base_png, cand_png).regions
    (crop,) = crop_regions(base_png, cand_png, regions, padding=50)
    assert (crop.x, crop.y, crop.width, crop.height) == (0, 0, 20, 26)
    before = decode(crop.before_png)
    assert (before[20:, :, 3] == 0).all() and (before[:20, :, 3] == 255).all()


def test_no_regions_give_no_crops_without_decoding() -> None:
    assert crop_regions(b"anything", b"at all", []) == ()


def test_a_negative_padding_is_refused() -> None:
    data = png.encode(white(2, 2))
    regions = compare(data, png.encode(white(3, 2))).regions
    with pytest.raises(InvalidInput, match="padding must be 0 or more"):
        crop_regions(data, data, regions, padding=-1)


def test_a_small_region_is_cropped_with_enough_of_its_surroundings_to_place_it() -> None:
    base = np.full((200, 400, 4), 255, np.uint8)
    cand = base.copy()
    cand[190:196, 395:399] = (0, 0, 0, 255)  # a 4x6 change in the bottom-right corner
    base_png, cand_png = png.encode(base), png.encode(cand)
    (crop,) = crop_regions(base_png, cand_png, compare(base_png, cand_png).regions, least=(120, 80))
    # As large as asked, and moved (not cut) to stay on the canvas.
    assert (crop.x, crop.y, crop.width, crop.height) == (280, 120, 120, 80)
    (big,) = crop_regions(base_png, cand_png, compare(base_png, cand_png).regions, least=(999, 999))
    assert (big.x, big.y, big.width, big.height) == (0, 0, 400, 200)
