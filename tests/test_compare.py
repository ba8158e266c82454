"""compare(): the rules of C-1..C-7, as properties over generated images and as examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewfinder.errors import InvalidInput, InvalidMask
from viewfinder.imaging import _native, compare, decode, diffimage, pixelmatch, png
from viewfinder.imaging.diffimage import CHANGED_RGB, MASKED_RGB, MOVED_RGB, NOISE_RGB, SIZE_RGB
from viewfinder.runtime import tune_allocator

settings.register_profile("default", max_examples=60, deadline=None)
settings.load_profile("default")


def encode(pixels: np.ndarray, level: int = 6) -> bytes:
    return png.encode(pixels, level=level)


def changed_in(diff_png: bytes | None, shape: tuple[int, int]) -> np.ndarray:
    """Changed pixels of the diff image, whatever the analysis made of them (changed, moved
    or rendering noise): all of them count as changed."""
    return (
        painted(diff_png, shape, CHANGED_RGB)
        | painted(diff_png, shape, MOVED_RGB)
        | painted(diff_png, shape, NOISE_RGB)
    )


def painted(
    diff_png: bytes | None, shape: tuple[int, int], rgb: tuple[int, int, int]
) -> np.ndarray:
    """Pixels of the diff image painted in one of its flag colours."""
    if diff_png is None:
        return np.zeros(shape, bool)
    image = decode(diff_png)
    return (image[..., :3] == rgb).all(axis=2)


@st.composite
def image_pairs(draw: st.DrawFn, same_size: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A base image and a candidate with a few rectangles repainted (and maybe resized)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    channels = draw(st.sampled_from([3, 4]))
    h, w = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    base = rng.integers(0, 256, (h, w, channels), dtype=np.uint8)
    if channels == 4 and draw(st.booleans()):
        base[..., 3] = 255
    cand = base.copy()
    for _ in range(draw(st.integers(0, 4))):
        y, x = rng.integers(0, h), rng.integers(0, w)
        cand[y : y + rng.integers(1, 6), x : x + rng.integers(1, 6)] = rng.integers(
            0, 256, channels
        )
    if not same_size:
        ch, cw = draw(st.integers(1, 24)), draw(st.integers(1, 24))
        grown = rng.integers(0, 256, (ch, cw, channels), dtype=np.uint8)
        oh, ow = min(h, ch), min(w, cw)
        grown[:oh, :ow] = cand[:oh, :ow]
        cand = grown
    return base, cand


masks_strategy = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(1, 30), st.integers(1, 30)),
    max_size=5,
)


def mask_plane(masks: list[tuple[int, int, int, int]], h: int, w: int) -> np.ndarray:
    plane = np.zeros((h, w), bool)
    for x, y, mw, mh in masks:
        plane[y : y + mh, x : x + mw] = True
    return plane


@given(image_pairs())
def test_an_image_compared_with_itself_has_no_changes(pair: tuple[np.ndarray, np.ndarray]) -> None:
    data = encode(pair[0])
    result = compare(data, data)
    assert (result.changed, result.changed_pixels, result.diff_ratio) == (False, 0, 0.0)
    assert result.fast_path == "bytes" and result.identical and result.diff_png is None


@given(image_pairs())
def test_the_same_pixels_encoded_differently_are_identical(pair: tuple[np.ndarray, ...]) -> None:
    base = pair[0]
    result = compare(encode(base, level=9), encode(base, level=1) + b"")
    if encode(base, level=9) != encode(base, level=1):
        assert result.fast_path == "pixels"
    assert result.identical and not result.changed and result.changed_pixels == 0


@given(image_pairs())
def test_changed_pixels_agree_with_pixelmatch(pair: tuple[np.ndarray, np.ndarray]) -> None:
    base, cand = pair
    result = compare(encode(base), encode(cand))
    rgba = [
        p if p.shape[2] == 4 else np.dstack([p, np.full(p.shape[:2], 255, np.uint8)]) for p in pair
    ]
    assert result.changed_pixels == pixelmatch(rgba[0], rgba[1])
    assert result.compared_pixels == base.shape[0] * base.shape[1]
    assert result.changed == (result.changed_pixels > 0)


@given(image_pairs(), masks_strategy)
def test_masks_leave_both_numerator_and_denominator(
    pair: tuple[np.ndarray, np.ndarray], masks: list[tuple[int, int, int, int]]
) -> None:
    base, cand = encode(pair[0]), encode(pair[1])
    h, w = pair[0].shape[:2]
    unmasked = compare(base, cand)
    changed = changed_in(unmasked.diff_png, (h, w))
    plane = mask_plane(masks, h, w)

    result = compare(base, cand, masks=masks)

    assert result.masked_pixels == plane.sum()  # overlaps counted once, clipped to the canvas
    assert result.compared_pixels == h * w - plane.sum()
    assert result.changed_pixels == (changed & ~plane).sum()
    expected_ratio = result.changed_pixels / result.compared_pixels if result.compared_pixels else 0
    assert result.diff_ratio == pytest.approx(expected_ratio)
    if result.diff_png is not None:
        assert (painted(result.diff_png, (h, w), MASKED_RGB) == plane).all()


@given(image_pairs())
def test_masking_everything_gives_a_ratio_of_zero(pair: tuple[np.ndarray, np.ndarray]) -> None:
    h, w = pair[0].shape[:2]
    result = compare(encode(pair[0]), encode(pair[1]), masks=[(0, 0, w, h), (0, 0, 1, 1)])
    assert (result.changed_pixels, result.compared_pixels, result.diff_ratio) == (0, 0, 0.0)
    assert not result.changed


@pytest.mark.parametrize("channels", [3, 4])
def test_two_threads_label_a_heavily_changed_pair_as_one_does(channels: int) -> None:
    # Noise over most of the image puts thousands of pixels through the anti-aliasing test, so
    # the second thread starts and the two share the rows; masked pixels stay masked.
    rng = np.random.default_rng(channels)
    a = rng.integers(0, 256, (301, 257, channels), dtype=np.uint8)
    b = a.copy()
    b[40:300:3] = rng.integers(0, 256, b[40:300:3].shape, dtype=np.uint8)
    b[5, :200] ^= 0x40
    found = []
    for threads in (1, 2):
        labels = np.zeros((301, 257), np.uint8)
        labels[100:150, 50:90] = _native.LABEL_MASKED
        counts = _native.classify(a, b, 257, 301, 35215 * 0.01, False, True, labels, threads)
        found.append((counts, labels))
    (one, once), (two, twice) = found
    assert one == two and np.array_equal(once, twice)
    assert one[0] + one[1] + one[2] > 2000 and one[4] > 0
    with pytest.raises(ValueError, match="threads must be 1 or 2"):
        _native.classify(a, b, 257, 301, 352.0, False, True, once, 3)


@given(image_pairs(same_size=False))
def test_regions_cover_every_changed_pixel(pair: tuple[np.ndarray, np.ndarray]) -> None:
    result = compare(encode(pair[0]), encode(pair[1]))
    shape = (result.height, result.width)
    flagged = changed_in(result.diff_png, shape) | painted(result.diff_png, shape, SIZE_RGB)
    covered = np.zeros(shape, int)
    for r in result.regions:
        covered[r.y : r.y + r.height, r.x : r.x + r.width] += 1
        assert flagged[r.y : r.y + r.height, r.x : r.x + r.width].sum() == r.changed_pixels
    assert (covered <= 1).all(), "regions overlap"
    assert (covered[flagged] == 1).all()
    assert sum(r.changed_pixels for r in result.regions) == result.changed_pixels == flagged.sum()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 90),
    st.integers(1, 40),
    st.sampled_from([(1,), (1, 2, 5), (4,)]),
    st.floats(0.0, 0.5),
    st.integers(0, 2**32 - 1),
)
def test_regions_of_a_label_plane_hold_exactly_its_flagged_pixels(
    width: int, height: int, flags: tuple[int, ...], density: float, seed: int
) -> None:
    # Labels of every kind side by side, on widths that end inside an 8- or 32-byte block.
    rng = np.random.default_rng(seed)
    labels = np.where(rng.random((height, width)) < density, rng.integers(0, 9, (height, width)), 0)
    labels = labels.astype(np.uint8)
    flagged = np.isin(labels, flags)
    covered = np.zeros(labels.shape, int)
    for x, y, w, h, count in _native.regions(labels, bytes(flags), 4, 1, 500):
        covered[y : y + h, x : x + w] += 1
        inside = flagged[y : y + h, x : x + w]
        assert inside.sum() == count
        # Bounds drawn tight around what they hold.
        assert inside[0].any() and inside[-1].any() and inside[:, 0].any() and inside[:, -1].any()
    assert (covered <= 1).all(), "regions overlap"
    assert (covered[flagged] == 1).all()


@settings(max_examples=80)
@given(
    st.integers(1, 90),
    st.integers(1, 40),
    st.sampled_from([3, 8, 12]),
    st.integers(0, 2),
    st.integers(0, 2**32 - 1),
)
def test_regions_of_solid_areas_are_the_regions_of_the_plane_transposed(
    width: int, height: int, cell: int, gap: int, seed: int
) -> None:
    # Whole blocks flagged, as a tinted card is: runs of eight flagged labels along a row, in
    # one cell or across two, beside scattered ones. Transposed, the same pixels lie in the same
    # cells but along columns: the regions must be the same boxes, transposed.
    rng = np.random.default_rng(seed)
    labels = np.where(rng.random((height, width)) < 0.05, 1, 0).astype(np.uint8)
    for _ in range(int(rng.integers(1, 4))):
        x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
        labels[y : y + int(rng.integers(1, 30)), x : x + int(rng.integers(1, 60))] = 2
    flagged = labels > 0
    found = _native.regions(labels, bytes([1, 2]), cell, gap, 5000)
    for x, y, w, h, count in found:
        inside = flagged[y : y + h, x : x + w]
        assert inside.sum() == count
        assert inside[0].any() and inside[-1].any() and inside[:, 0].any() and inside[:, -1].any()
    across = _native.regions(np.ascontiguousarray(labels.T), bytes([1, 2]), cell, gap, 5000)
    assert sorted(found) == sorted((y, x, h, w, n) for x, y, w, h, n in across)


@given(image_pairs(same_size=False))
def test_size_mismatch_counts_the_area_outside_the_smaller_image(
    pair: tuple[np.ndarray, np.ndarray],
) -> None:
    base, cand = pair
    result = compare(encode(base), encode(cand))
    h, w = max(base.shape[0], cand.shape[0]), max(base.shape[1], cand.shape[1])
    oh, ow = min(base.shape[0], cand.shape[0]), min(base.shape[1], cand.shape[1])
    assert (result.width, result.height) == (w, h)
    assert (result.base_size.width, result.base_size.height) == (base.shape[1], base.shape[0])
    outside = h * w - oh * ow
    inner = compare(
        encode(np.ascontiguousarray(base[:oh, :ow])), encode(np.ascontiguousarray(cand[:oh, :ow]))
    )
    assert result.changed_pixels == inner.changed_pixels + outside
    if outside:
        blue = painted(result.diff_png, (h, w), SIZE_RGB)
        assert blue.sum() == outside and not blue[:oh, :ow].any()


@given(image_pairs(), st.floats(0, 1))
def test_max_diff_ratio_decides_changed(
    pair: tuple[np.ndarray, np.ndarray], max_ratio: float
) -> None:
    result = compare(encode(pair[0]), encode(pair[1]), max_diff_ratio=max_ratio)
    assert result.changed == (result.diff_ratio > max_ratio)
    assert (result.diff_png is not None) == result.changed


# ---- examples ---------------------------------------------------------------------------------


def flat(h: int, w: int, rgb: tuple[int, int, int] = (255, 255, 255)) -> np.ndarray:
    return np.full((h, w, 3), rgb, np.uint8)


def test_a_ratio_exactly_at_the_maximum_is_unchanged() -> None:
    base, cand = flat(10, 10), flat(10, 10)
    cand[0, :5] = (0, 0, 0)
    result = compare(encode(base), encode(cand), max_diff_ratio=0.05)
    assert result.diff_ratio == 0.05 and not result.changed and result.diff_png is None


def test_two_separate_changes_make_two_regions_in_reading_order() -> None:
    base, cand = flat(200, 300), flat(200, 300)
    cand[150:160, 20:40] = (0, 0, 0)
    cand[10:30, 200:260] = (200, 0, 0)
    regions = compare(encode(base), encode(cand)).regions
    assert [(r.x, r.y, r.width, r.height, r.changed_pixels) for r in regions] == [
        (200, 10, 60, 20, 1200),
        (20, 150, 20, 10, 200),
    ]


def test_nearby_changes_form_one_region() -> None:
    base, cand = flat(100, 100), flat(100, 100)
    cand[10:12, 10:12] = (0, 0, 0)
    cand[10:12, 20:22] = (0, 0, 0)  # 8 px apart: one word, one region
    assert len(compare(encode(base), encode(cand)).regions) == 1


def test_an_anti_aliased_edge_is_not_counted_unless_asked() -> None:
    base = flat(9, 9)
    base[:, 4:] = (0, 0, 0)
    cand = base.copy()
    cand[:, 4] = (128, 128, 128)  # the edge softened by half a pixel
    assert compare(encode(base), encode(cand)).changed_pixels == 0
    assert compare(encode(base), encode(cand)).antialiased_pixels == 9
    assert compare(encode(base), encode(cand), include_aa=True).changed_pixels == 9


def test_the_diff_image_is_a_faded_copy_of_the_candidate_with_changes_in_red() -> None:
    base, cand = flat(4, 4, (0, 0, 0)), flat(4, 4, (0, 0, 0))
    cand[0, 0] = (255, 255, 255)
    image = decode(compare(encode(base), encode(cand)).diff_png or b"")
    assert tuple(image[0, 0, :3]) == CHANGED_RGB
    gray = image[1, 1, :3]
    assert gray[0] == gray[1] == gray[2] and 190 < gray[0] < 255  # black, faded toward white


def test_every_label_paints_its_colour_and_the_rest_keep_the_faded_gray() -> None:
    # Every byte value a label plane can hold, over rows as long as a vector step and not.
    colours = {
        _native.LABEL_CHANGED: CHANGED_RGB,
        _native.LABEL_DARKER: CHANGED_RGB,
        _native.LABEL_SIZE: SIZE_RGB,
        _native.LABEL_MASKED: MASKED_RGB,
        _native.LABEL_MOVED: MOVED_RGB,
        _native.LABEL_NOISE: NOISE_RGB,
    }
    for width in (37, 256):
        labels = np.resize(np.arange(256, dtype=np.uint8), (256 // width + 1, width))
        candidate = flat(*labels.shape)
        rows = np.empty((labels.shape[0], width + 1), np.uint8)
        _native.render_diff(labels, candidate, rows)
        image = decode(png.encode_indexed(rows, diffimage.PALETTE))[..., :3]
        gray = tuple(image[0, 0])  # label 0: the candidate's white, faded
        for (y, x), label in np.ndenumerate(labels):
            assert tuple(image[y, x]) == colours.get(int(label), gray), (label, width)


def test_a_mixed_rgb_and_rgba_pair_compares_by_pixels() -> None:
    rgb = flat(5, 5, (10, 20, 30))
    rgba = np.dstack([rgb, np.full((5, 5), 255, np.uint8)])
    result = compare(encode(rgb), encode(rgba))
    assert result.identical and result.fast_path == "pixels"


def test_without_a_diff_image_the_result_is_the_same() -> None:
    base, cand = flat(20, 20), flat(20, 20)
    cand[5:9, 5:9] = (0, 0, 255)
    with_image = compare(encode(base), encode(cand))
    without = compare(encode(base), encode(cand), diff_image=False)
    assert without.diff_png is None and with_image.diff_png is not None
    assert without.to_dict() == with_image.to_dict()


def test_to_dict_has_the_documented_fields() -> None:
    data = compare(encode(flat(3, 3)), encode(flat(4, 3))).to_dict()
    assert {
        "changed",
        "changed_pixels",
        "compared_pixels",
        "diff_ratio",
        "width",
        "height",
        "base_size",
        "candidate_size",
        "regions",
    } <= data.keys()
    assert data["base_size"] == {"width": 3, "height": 3}
    assert data["candidate_size"] == {"width": 3, "height": 4}
    assert data["regions"] == [{"x": 0, "y": 3, "width": 3, "height": 1, "changed_pixels": 3}]


# ---- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threshold": 1.5}, "threshold must be a number from 0 to 1"),
        ({"threshold": -0.1}, "threshold must be a number from 0 to 1"),
        ({"max_diff_ratio": 2}, "max_diff_ratio must be a number from 0 to 1"),
        ({"masks": [(0, 0, 0, 5)]}, r"mask 1: width must be between 1 and 99999 \(got 0\)"),
        ({"masks": [(-1, 0, 5, 5)]}, r"mask 1: x must be between 0 and 99999 \(got -1\)"),
        ({"masks": [(0, 0, 100000, 5)]}, r"mask 1: width must be between 1 and 99999"),
        (
            {"masks": [{"x": 0, "y": 0, "width": 1}]},
            "mask 1 must have exactly the fields x, y, width, height; missing height",
        ),
        ({"masks": [{"x": 0, "y": 0, "width": 1, "height": 1, "z": 2}]}, "unknown z"),
        ({"masks": [(0, 0, 1.5, 5)]}, "mask 1: width must be an integer"),
        ({"masks": [(0, 0, 1, 1)] * 21}, "21 masks given; at most 20 are allowed"),
        ({"masks": ["0,0,1,1"]}, r"mask 1 must be \{x, y, width, height\} or four integers"),
    ],
)
def test_bad_options_are_refused_with_the_reason(options: dict[str, object], message: str) -> None:
    data = encode(flat(2, 2))
    error = InvalidMask if "mask" in message else InvalidInput
    with pytest.raises(error, match=message):
        compare(data, data, **options)  # type: ignore[arg-type]


def test_a_bad_candidate_is_refused_even_when_the_base_is_fine() -> None:
    with pytest.raises(InvalidInput, match="candidate is not a PNG file"):
        compare(encode(flat(2, 2)), b"not a png at all")


def test_identical_truncated_inputs_are_refused() -> None:
    data = encode(flat(8, 8))[:-6]
    with pytest.raises(InvalidInput, match="base is truncated"):
        compare(data, data)


def test_the_allocator_tuning_applies_on_glibc_and_changes_no_result() -> None:
    base, cand = flat(30, 30), flat(30, 30)
    cand[3:7, 3:7] = (0, 0, 0)
    before = compare(encode(base), encode(cand)).to_dict()
    assert tune_allocator() is True  # this project's machines run glibc
    assert compare(encode(base), encode(cand)).to_dict() == before
