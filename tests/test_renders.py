"""Images of a diff for people and agents: whole, in pixel pages, and cropped per region."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, drain, shot
from viewfinder.errors import InvalidInput
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
    assert "region 1 of 1: 8x10 at (2, 100)" in crop.note
    with pytest.raises(InvalidInput, match="past the image's bottom"):
        renders.render_diff(env, keys.agent, diff, "after", offset=5000)
    with pytest.raises(InvalidInput, match="which must be one of"):
        renders.render_diff(env, keys.agent, diff, "sideways")
