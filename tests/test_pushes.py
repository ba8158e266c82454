"""Pushing screenshots into contexts: markdown, replacement, compare, masks and refusals."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.conftest import Keys, drain, shot
from viewfinder.errors import Forbidden, InvalidImage, InvalidInput, InvalidMask, NotFound
from viewfinder.services import diffs, images, pushes
from viewfinder.services.env import Env


def jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (10, 10), (200, 10, 10)).save(buf, "JPEG")
    return buf.getvalue()


def test_a_push_returns_paste_ready_markdown_that_serves_the_image(env: Env, keys: Keys) -> None:
    result = pushes.push(env, keys.ci, shot(), name="home", context_key="release-notes")
    assert result.markdown == f"![home]({result.view_url})"
    data, media = images.delivered_image(env, result.view_url.rsplit("/", 1)[1])
    assert data == shot() and media == "image/png"
    assert not result.diff_requested and result.diff is None


def test_pushing_a_name_again_expires_the_older_image(env: Env, keys: Keys) -> None:
    first = pushes.push(env, keys.ci, shot(), name="home", viewport="64x48", context_key="docs")
    other = pushes.push(env, keys.ci, shot(), name="home", viewport="390x844", context_key="docs")
    second = pushes.push(
        env, keys.ci, shot(box=(0, 0, 3, 3)), name="home", viewport="64x48", context_key="docs"
    )
    assert second.replaced_image_id == first.image_id and other.replaced_image_id is None
    assert images.get_image(env, keys.ci, first.image_id).expired
    assert not images.get_image(env, keys.ci, other.image_id).expired
    with pytest.raises(NotFound, match="expired"):
        images.delivered_image(env, first.view_url.rsplit("/", 1)[1])


def test_compare_registers_a_baseline_then_reports_a_change(env: Env, keys: Keys) -> None:
    first = pushes.push(env, keys.ci, shot(), name="home", context_key="docs", compare=True)
    assert first.diff is not None and first.diff.outcome == "registered"
    second = pushes.push(
        env,
        keys.ci,
        shot(box=(0, 0, 8, 8)),
        name="home",
        context_key="docs",
        compare=True,
        wait_seconds=0,
    )
    assert second.diff is not None and second.diff.state == "requested"
    drain(env)
    diff = diffs.latest_for_image(env, keys.ci, second.image_id)
    assert diff is not None and diff.outcome == "changed"
    assert diff.diff_ratio == pytest.approx(64 / 3072) and diff.urls.diff


def test_masks_and_a_max_ratio_need_the_approve_role(env: Env, keys: Keys) -> None:
    for loosen in ({"masks": [(0, 0, 4, 4)]}, {"max_diff_ratio": 0.01}):
        with pytest.raises(Forbidden, match="'approve' role"):
            pushes.push(env, keys.ci, shot(), name="a", context_key="x", **loosen)  # type: ignore[arg-type]
    pushes.push(env, keys.admin, shot(), name="a", context_key="x", compare=True)
    masked = pushes.push(
        env,
        keys.admin,
        shot(box=(0, 0, 4, 4)),
        name="a",
        context_key="x",
        compare=True,
        masks=[{"x": 0, "y": 0, "width": 4, "height": 4}],
        wait_seconds=0,
    )
    drain(env)
    diff = diffs.latest_for_image(env, keys.ci, masked.image_id)
    assert diff is not None and diff.outcome == "unchanged" and diff.compared_pixels == 3072 - 16


def test_compare_works_on_png_only_and_a_refused_push_stores_nothing(env: Env, keys: Keys) -> None:
    assert pushes.push(env, keys.ci, jpeg(), name="photo", context_key="x").markdown
    before = images.usage(env, keys.ci)
    with pytest.raises(InvalidInput, match="compare works on PNG images only"):
        pushes.push(env, keys.ci, jpeg(), name="photo2", context_key="x", compare=True)
    assert images.usage(env, keys.ci) == before


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"context_key": None}, InvalidInput, "exactly one of context_key and pr_number"),
        ({"pr_number": 3}, InvalidInput, "exactly one of context_key and pr_number"),
        ({"context_key": "acme/web#x", "context_type": "github_pr"}, InvalidInput, "owner/repo#N"),
        ({"data": b"not an image"}, InvalidImage, "not a PNG, JPEG or WebP"),
        (
            {"data": b"\x89PNG\r\n\x1a\n" + b"\0" * (5 * 1024 * 1024)},
            InvalidImage,
            "at most 5,242,880",
        ),
        ({"viewport": "1280*800"}, InvalidInput, "WIDTHxHEIGHT"),
        ({"name": " "}, InvalidInput, "name is empty"),
        ({"masks": [(0, 0, 0, 1)]}, InvalidMask, "width must be between 1 and 99999"),
        ({"max_diff_ratio": 1.5}, InvalidInput, "max_diff_ratio must be a number from 0 to 1"),
    ],
)
def test_bad_pushes_are_refused_with_the_reason(
    env: Env, keys: Keys, fields: dict[str, object], error: type[Exception], message: str
) -> None:
    call = {"data": shot(), "name": "home", "context_key": "docs"} | fields
    data = call.pop("data")
    with pytest.raises(error, match=message):
        pushes.push(env, keys.admin, data, **call)  # type: ignore[arg-type]
    assert images.usage(env, keys.admin).images == 0


def test_a_cut_jpeg_is_refused_and_nothing_is_kept(env: Env, keys: Keys) -> None:
    cut = jpeg()[:-40]
    with pytest.raises(InvalidImage, match="corrupt or cut short"):
        pushes.push(env, keys.ci, cut, name="photo", context_key="x")
    assert images.usage(env, keys.ci).images == 0


def test_a_phone_screenshot_pushed_with_its_scale_is_compared_at_it(env: Env, keys: Keys) -> None:
    from tests import style_corpus

    base, respaced = style_corpus.phone_pair("landing-light-3x/glyph_spacing")
    outcomes = {}
    for name, scale in (("told", 3.0), ("untold", None)):
        pushes.push(env, keys.ci, base, name=name, context_key="app", compare=True, scale=scale)
        second = pushes.push(
            env,
            keys.ci,
            respaced,
            name=name,
            context_key="app",
            compare=True,
            scale=scale,
            wait_seconds=0,
        )
        drain(env)
        diff = diffs.latest_for_image(env, keys.ci, second.image_id)
        assert diff is not None
        outcomes[name] = diff.outcome
        assert images.get_image(env, keys.ci, second.image_id).scale == scale
    assert outcomes == {"told": "unchanged", "untold": "changed"}
    with pytest.raises(InvalidInput, match="scale must be the device scale"):
        pushes.push(env, keys.ci, base, name="bad", context_key="app", scale=0.1)
