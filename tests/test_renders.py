"""Images of a diff for people and agents: whole, in pixel pages, and cropped per region."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import Keys, drain, shot
from viewfinder.errors import InvalidInput
from viewfinder.imaging import png
from viewfinder.services import (
    pushes,
    renders,
)
from viewfinder.services.env import Env


def test_diff_images_are_rendered_whole_paged_and_cropped(env: Env, keys: Keys) -> None:
    tall = (64, 1200)
    pushes.push(env, keys.ci, shot(size=tall), name="p", context_key="x", compare=True)
    changed = shot(size=tall, box=(2, 100, 10, 110))
    result = pushes.push(
        env, keys.ci, changed, name="p", context_key="x", compare=True, wait_seconds=0
    )
    drain(env)
    assert result.diff is not None
    diff = result.diff.id
    (whole,) = renders.render_diff(env, keys.agent, diff, "diff")
    assert (whole.width, whole.height) == tall
    (page,) = renders.render_diff(env, keys.agent, diff, "after", offset=500)
    assert page.height == 500 and "next page at offset 1000" in page.note
    (last,) = renders.render_diff(env, keys.agent, diff, "before", offset=1000, height=500)
    assert last.height == 200 and "next page" not in last.note
    (crop,) = renders.render_diff(env, keys.agent, diff, "before_after")
    assert "region 1 of 1 (1 in the diff): 8x10 at (2, 100)" in crop.note
    # An 8x10 change is shown with its surroundings (the image is only 64 px wide).
    assert (crop.width, crop.height) == (2 * 64 + 8, 160)
    with pytest.raises(InvalidInput, match="past the image's bottom"):
        renders.render_diff(env, keys.agent, diff, "after", offset=5000)
    with pytest.raises(InvalidInput, match="which must be one of"):
        renders.render_diff(env, keys.agent, diff, "sideways")


def test_before_after_shows_ten_regions_at_a_time_and_says_where_the_rest_are(
    env: Env, keys: Keys
) -> None:
    size = (64, 2000)
    pushes.push(env, keys.ci, shot(size=size), name="dots", context_key="x", compare=True)
    pixels = np.full((2000, 64, 3), 255, np.uint8)
    for i in range(14):  # 14 dots, 140 px apart, far enough to be separate regions
        pixels[20 + 140 * i : 24 + 140 * i, 30:34] = 0
    result = pushes.push(
        env,
        keys.ci,
        png.encode(pixels),
        name="dots",
        context_key="x",
        compare=True,
        wait_seconds=0,
    )
    drain(env)
    assert result.diff is not None
    first = renders.render_diff(env, keys.agent, result.diff.id, "before_after")
    assert len(first) == 10 and "region 10 of 14 (14 in the diff)" in first[-1].note
    assert first[-1].note.endswith(
        "4 more region(s) not shown: ask again with pxPagination {offset: 1420}"
    )
    rest = renders.render_diff(env, keys.agent, result.diff.id, "before_after", offset=1420)
    assert [r.note.split(":")[0] for r in rest] == [
        f"region {i} of 4 starting in rows 1420-1919 (14 in the diff)" for i in (1, 2, 3, 4)
    ]
    (empty,) = renders.render_diff(
        env, keys.agent, result.diff.id, "before_after", offset=1950, height=50
    )
    assert empty.note.startswith("no changed region starts in rows 1950-1999")
