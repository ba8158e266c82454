"""The analysis's C kernels against plain numpy statements of what they compute."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from viewfinder.imaging import _analysis

KERNEL = np.array([1, 2, 3, 2, 1], np.float64) / 9


def reference_blur(src: np.ndarray, x0: int, y0: int, w: int, h: int) -> np.ndarray:
    area = src[y0 : y0 + h, x0 : x0 + w, :3].astype(np.float64)
    padded = np.pad(area, ((2, 2), (2, 2), (0, 0)), mode="edge")
    rows = sum(KERNEL[i] * padded[:, i : i + w] for i in range(5))
    return sum(KERNEL[i] * rows[i : i + h] for i in range(5))


@pytest.mark.parametrize("channels", [3, 4])
# Areas 1 to 6 px wide too: each end's two pixels are summed apart from the middle, and an
# area under 5 px wide has no middle.
@pytest.mark.parametrize(
    ("x0", "y0", "w", "h"),
    [(0, 0, 37, 23), (5, 3, 20, 11), (0, 0, 1, 1)] + [(3, 2, w, 4) for w in range(2, 7)],
)
def test_blur_is_the_separable_kernel_with_the_area_edges_repeated(
    channels: int, x0: int, y0: int, w: int, h: int
) -> None:
    rng = np.random.default_rng(channels * 1000 + w)
    src = rng.integers(0, 256, (30, 40, channels), dtype=np.uint8)
    out = np.empty((h, w, 3), np.float32)
    _analysis.blur(src, x0, y0, out)
    np.testing.assert_allclose(out, reference_blur(src, x0, y0, w, h), atol=1e-3)


def test_blur_refuses_an_area_outside_the_image() -> None:
    src = np.zeros((10, 10, 4), np.uint8)
    with pytest.raises(ValueError, match="outside the image"):
        _analysis.blur(src, 5, 0, np.empty((4, 6, 3), np.float32))


def test_blur_of_an_empty_area_writes_nothing() -> None:
    src = np.full((4, 4, 3), 200, np.uint8)
    plane = np.full((4, 4, 3), -1.0, np.float32)
    # Empty views into a live plane (no rows, no columns, none in the middle): a stray write
    # through any of them would show in the plane.
    for empty in (plane[:0], plane[:, :0], plane[2:2, 1:3]):
        assert _analysis.blur(src, 0, 0, empty) is None
    assert (plane == -1.0).all()
    # An empty area is still placed: outside the image it is refused like any other.
    with pytest.raises(ValueError, match="outside the image"):
        _analysis.blur(src, 3, 0, plane[:0, :2])


def reference_envelope(
    a: np.ndarray, b: np.ndarray, mask: np.ndarray, x: int, y: int, skip_edges: bool
) -> bool:
    height, width = a.shape[:2]

    def within(p: np.ndarray, q: np.ndarray, py: int, px: int) -> bool:
        near = q[max(py - 1, 0) : py + 2, max(px - 1, 0) : px + 2, :3].reshape(-1, 3).astype(int)
        colour = p[py, px, :3].astype(int)
        return not ((colour < near.min(0) - 2) | (colour > near.max(0) + 2)).any()

    for j, i in zip(*np.nonzero(mask), strict=True):
        py, px = y + j, x + i
        if skip_edges and not (2 <= px < width - 2 and 2 <= py < height - 2):
            continue
        if not within(b, a, py, px) and not within(a, b, py, px):
            return False
    return True


@pytest.mark.parametrize("seed", range(6))
def test_envelope_agrees_with_its_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(100, 140, (12, 14, 4), dtype=np.uint8)
    b = a.copy()
    b[4:8, 5:9, :3] += rng.integers(0, 8, (4, 4, 3), dtype=np.uint8)
    if seed % 2:
        b[6, 6, :3] = 255  # new ink
    mask = np.zeros((6, 6), bool)
    mask[1:5, 1:5] = True
    for skip in (False, True):
        expected = reference_envelope(a, b, mask, 4, 3, skip)
        assert _analysis.envelope(a, b, mask, 4, 3, skip) is expected
    # The mask at the image's corner: skip_edges leaves its outer pixels out.
    corner = np.ones((3, 3), bool)
    for skip in (False, True):
        assert _analysis.envelope(a, b, corner, 0, 0, skip) is reference_envelope(
            a, b, corner, 0, 0, skip
        )


def test_motion_residual_finds_a_sub_pixel_shift_and_explains_it() -> None:
    # A smooth pattern shifted right by 0.3 px: the motion is found and little is left.
    yy, xx = np.mgrid[0:80, 0:90].astype(np.float64)

    def pattern(shift: float) -> np.ndarray:
        grey = 128 + 90 * np.sin((xx - shift) / 5) * np.cos(yy / 7)
        return np.repeat(np.rint(grey)[..., None], 3, axis=2).astype(np.uint8)

    a, b = pattern(0), pattern(0.3)
    box = (8, 8, 56, 56)
    residual, motion, unmoved = _analysis.motion_residual(a, b, (10, 5, 74, 69), box, box, 0.03)
    assert motion == pytest.approx(0.3, abs=0.05)
    planes = [np.empty((64, 64, 3), np.float32) for _ in "ab"]
    for image, plane in zip((a, b), planes, strict=True):
        _analysis.blur(image, 10, 5, plane)
    uncompensated = np.abs(planes[1] - planes[0])[8:56, 8:56].max()
    assert residual < uncompensated / 4
    assert unmoved == pytest.approx(uncompensated, abs=1e-3)  # what is left with no motion
    # Nothing moved: no motion, and the residual is what differs.
    assert _analysis.motion_residual(a, a, (10, 5, 74, 69), box, box, 0.03) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("channels", [3, 4])
def test_motion_residual_in_strips_is_the_residual_of_the_planes(channels: int) -> None:
    # Large windows are blurred a few rows at a time: every figure must be the same, whatever
    # the motion (none, sub-pixel either way, clipped at a pixel) and the boxes.
    rng = np.random.default_rng(channels)
    yy, xx = np.mgrid[0:70, 0:90].astype(np.float64)
    for dx, dy in ((0, 0), (0.3, -0.2), (-0.6, 0.45), (3, 2), (-3, -2)):
        grey = 128 + 100 * np.tanh(3 * np.sin((xx - dx) / 3) * np.cos((yy - dy) / 4))
        a = np.repeat(
            np.rint(128 + 100 * np.tanh(3 * np.sin(xx / 3) * np.cos(yy / 4)))[..., None],
            channels,
            2,
        )
        b = np.repeat(np.rint(grey)[..., None], channels, axis=2)
        a, b = a.astype(np.uint8), b.astype(np.uint8)
        b[rng.random((70, 90)) < 0.05] = 255
        for window in ((0, 0, 90, 70), (3, 2, 80, 66), (10, 20, 13, 25)):
            w, h = window[2] - window[0], window[3] - window[1]
            for inside in ((0, 0, w, h), (w // 4, h // 5, w - w // 3, h - h // 4)):
                trimmed = (min(inside[0] + 1, inside[2]), inside[1], inside[2], inside[3] - 1)
                planes = _analysis.motion_residual(a, b, window, inside, trimmed, 0.03)
                strips = _analysis.motion_residual(a, b, window, inside, trimmed, 0.03, 0)
                assert strips == planes


@pytest.mark.parametrize("channels", [3, 4])
def test_motion_residual_leaves_out_rows_of_one_colour_exactly(channels: int) -> None:
    # Where a's rows within 3 of a row are all one colour, the row adds nothing to the motion's
    # sums and is neither blurred nor summed in planes; in strips every row is. Bands of one
    # colour between shifted content, and windows and boxes across, inside and between them:
    # the figures must be the same to the bit.
    rng = np.random.default_rng(10 + channels)
    yy, xx = np.mgrid[0:90, 0:60].astype(np.float64)
    bands = ((0, 9, 255), (30, 46, 40), (46, 51, 41), (58, 61, 200), (82, 90, 255))

    def page(dx: float, dy: float) -> np.ndarray:
        grey = np.rint(128 + 100 * np.tanh(3 * np.sin((xx - dx) / 3) * np.cos((yy - dy) / 4)))
        image = np.repeat(grey[..., None], channels, axis=2).astype(np.uint8)
        for y0, y1, level in bands:
            image[y0:y1] = level
        return image

    for dx, dy in ((0, 0), (0.3, -0.2), (-0.6, 0.45)):
        a, b = page(0, 0), page(dx, dy)
        b[rng.random((90, 60)) < 0.05] = 255
        for window in ((0, 0, 60, 90), (3, 5, 50, 85), (10, 28, 40, 62), (0, 31, 60, 45)):
            w, h = window[2] - window[0], window[3] - window[1]
            for inside in ((0, 0, w, h), (2, h // 3, w - 2, h // 3 + 4), (0, h - 1, w, h)):
                trimmed = (inside[0], inside[1], inside[2], inside[3])
                # Memory just freed holds another page's rows: a row read but not blurred shows.
                _analysis.motion_residual(255 - a, b, window, inside, trimmed, 0.03)
                planes = _analysis.motion_residual(a, b, window, inside, trimmed, 0.03)
                strips = _analysis.motion_residual(a, b, window, inside, trimmed, 0.03, 0)
                assert strips == planes


def test_motion_residual_refuses_boxes_outside_their_window() -> None:
    a = np.zeros((20, 20, 3), np.uint8)
    with pytest.raises(ValueError, match="window lies outside the image"):
        _analysis.motion_residual(a, a, (0, 0, 21, 20), (0, 0, 1, 1), (0, 0, 1, 1), 0.03)
    with pytest.raises(ValueError, match="inside lies outside the window"):
        _analysis.motion_residual(a, a, (5, 5, 10, 10), (0, 0, 6, 5), (0, 0, 1, 1), 0.03)


def tile_residual(
    a: np.ndarray, b: np.ndarray, tile: tuple[int, int, int, int, int, int], pad: int
) -> float:
    """motion_residual() of a tile's window sliced out of both images, a displaced by d."""
    height, width = a.shape[:2]
    x, y, w, h, dx, dy = tile
    x0, y0 = max(x - pad, dx, 0), max(y - pad, dy, 0)
    x1 = min(x + w + pad, width + min(dx, 0), width)
    y1 = min(y + h + pad, height + min(dy, 0), height)
    wb, wa = b[y0:y1, x0:x1], a[y0 - dy : y1 - dy, x0 - dx : x1 - dx]
    # The part of the tile inside the window: what a displaced base shows of it.
    inside = (max(x - x0, 0), max(y - y0, 0), min(x + w, x1) - x0, min(y + h, y1) - y0)
    if inside[2] <= inside[0] or inside[3] <= inside[1]:
        return 0.0
    return _analysis.motion_residual(wa, wb, (0, 0, x1 - x0, y1 - y0), inside, inside, 0.03)[0]


@pytest.mark.parametrize("channels", [3, 4])
def test_tile_residuals_give_the_first_tile_over_its_limit(channels: int) -> None:
    # Glyph-like ink drawn again a fraction of a pixel off, then displaced by whole pixels:
    # tiles at the images' corners and edges, displaced every way, windows clipped by both,
    # and tiles part of which the displacement takes beyond the images' edges.
    rng = np.random.default_rng(channels)
    yy, xx = np.mgrid[0:60, 0:70].astype(np.float64)
    ink = np.tanh(3 * np.sin(xx / 3) * np.cos(yy / 4))
    a = np.repeat(np.rint(128 + 100 * ink)[..., None], channels, 2).astype(np.uint8)
    b = np.roll(a, (1, -2), (0, 1))
    b[rng.random((60, 70)) < 0.03] = 255
    tiles = [
        (x, y, w, h, dx, dy)
        for x, y, w, h in [(0, 0, 16, 16), (50, 40, 20, 20), (20, 8, 32, 30), (2, 44, 9, 16)]
        for dx, dy in [(0, 0), (-2, 1), (2, -1), (-1, -2)]
    ]
    residuals = [tile_residual(a, b, tile, 8) for tile in tiles]
    assert len(set(residuals)) > 3
    for limit in sorted(residuals):
        listed = [(*tile, limit) for tile in tiles]
        first = next((i for i, r in enumerate(residuals) if r > limit), -1)
        assert _analysis.tile_residuals(a, b, listed, 8, 0.03) == first
    assert _analysis.tile_residuals(a, b, [], 8, 0.03) == -1


def test_tile_residuals_refuse_bad_tiles() -> None:
    a = np.zeros((20, 20, 3), np.uint8)
    with pytest.raises(ValueError, match=r"\(x, y, w, h, dx, dy, limit\)"):
        _analysis.tile_residuals(a, a, [(0, 0, 4, 4, 0, 0)], 8, 0.03)
    with pytest.raises(ValueError, match="tile 1 is empty"):
        _analysis.tile_residuals(a, a, [(4, 4, 4, 4, 0, 0, 1.0), (1, 0, 0, 4, 2, 0, 1.0)], 8, 0.03)
    with pytest.raises(ValueError, match="channels"):
        _analysis.tile_residuals(a, np.zeros((20, 20, 4), np.uint8), [], 8, 0.03)


RULE = (41.0, 30.0, 0.03, 0.15, 0.8, 64.0, 32.0, 2)


def reference_is_noise(
    a: np.ndarray, b: np.ndarray, mask: np.ndarray, x: int, y: int, pad: int
) -> bool:
    """The noise rule composed of the kernels it is built from."""
    moving, still_limit, still, flip_still, flip, contrast, plain, flips = RULE
    if not _analysis.envelope(a, b, mask, x, y, True):
        return False
    height, width = a.shape[:2]
    h, w = mask.shape
    x0, y0 = max(x - pad, 0), max(y - pad, 0)
    x1, y1 = min(x + w + pad, width), min(y + h + pad, height)
    left, top = min(max(x, 2), x + w), min(max(y, 2), y + h)
    trimmed = (
        left - x0,
        top - y0,
        max(min(x + w, width - 2), left) - x0,
        max(min(y + h, height - 2), top) - y0,
    )
    inside = (x - x0, y - y0, x - x0 + w, y - y0 + h)
    residual, motion, unmoved = _analysis.motion_residual(
        a, b, (x0, y0, x1, y1), inside, trimmed, still
    )
    if residual > (still_limit if motion < still else moving):
        return False
    crossed = _analysis.flips(a, b, mask, x, y, flip, contrast, plain, flips) >= flips
    if (motion < flip_still or not residual < unmoved) and crossed:
        return False
    return motion >= still or _analysis.envelope(a, b, mask, x, y, False)


def strokes(height: int, width: int, shift: float) -> np.ndarray:
    """Text-like strokes, shift px to the right."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    grey = 128 + 90 * np.sin((xx - shift) / 2.5) * np.cos(yy / 3)
    return np.repeat(np.rint(grey)[..., None], 3, axis=2).astype(np.uint8)


def noise_pair() -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int, int]]]:
    """Text-like strokes drawn again 0.3 px to the right, with a dot of new ink at (70, 40) and
    its box, and a box whose pixels an earlier box takes."""
    a, b = strokes(90, 120, 0), strokes(90, 120, 0.3)
    b[38:43, 68:73] = (250, 0, 0)
    return (
        a,
        b,
        [(5, 5, 30, 20), (10, 10, 10, 10), (40, 50, 40, 30), (66, 36, 9, 9), (5, 60, 20, 20)],
    )


@pytest.mark.parametrize("channels", [3, 4])
def test_is_noise_is_the_rule_its_kernels_compose(channels: int) -> None:
    a, b, boxes = noise_pair()
    if channels == 4:
        a, b = (np.dstack([v, np.full(v.shape[:2], 255, np.uint8)]) for v in (a, b))
    verdicts = []
    for x, y, w, h in boxes:
        mask = (a[y : y + h, x : x + w] != b[y : y + h, x : x + w]).any(axis=2)
        for pad in (0, 8, 32):
            found = _analysis.is_noise(a, b, mask, x, y, pad, RULE)
            assert found is reference_is_noise(a, b, mask, x, y, pad)
        verdicts.append(found)
    assert verdicts == [True, True, True, False, True]  # the new ink is not noise


def test_noise_run_judges_regions_in_turn_from_the_labels() -> None:
    a, b, boxes = noise_pair()
    changed, darker, noise = 1, 2, 7
    labels = np.where((a != b).any(axis=2), changed, 0).astype(np.uint8)
    labels[20:25, 20:30] = np.where(labels[20:25, 20:30] == changed, darker, 0)
    before = labels.copy()
    # Box 1 lies inside box 0: once box 0 is noise, nothing of box 1 is left changed.
    stop, verdicts = _analysis.noise_run(a, b, labels, boxes, 0, 32, RULE, (changed, darker), noise)
    assert (stop, verdicts) == (3, bytes([1, 0, 1]))
    for x, y, w, h in boxes[:3]:
        was = before[y : y + h, x : x + w]
        now = labels[y : y + h, x : x + w]
        assert ((now == noise) == ((was == changed) | (was == darker))).all()
    box = boxes[3]
    assert (labels[box[1] : box[1] + box[3], box[0] : box[0] + box[2]] == changed).any()
    # From the region after it, the run goes to the end.
    stop, verdicts = _analysis.noise_run(a, b, labels, boxes, 4, 32, RULE, (changed, darker), noise)
    assert (stop, verdicts) == (5, bytes([1]))
    assert _analysis.noise_run(a, b, labels, boxes, 5, 32, RULE, (1, 2), 7) == (5, b"")
    with pytest.raises(ValueError, match="inside the images"):
        _analysis.noise_run(a, b, labels, [(100, 80, 30, 20)], 0, 32, RULE, (1, 2), 7)
    with pytest.raises(ValueError, match="start"):
        _analysis.noise_run(a, b, labels, boxes, 6, 32, RULE, (1, 2), 7)
    with pytest.raises(ValueError, match="labels"):
        _analysis.noise_run(a, b, labels[:10], boxes, 0, 32, RULE, (1, 2), 7)


def strokes_page() -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int, int, int]]]:
    """A page of strokes drawn again 0.3 px to the right, with new ink at (300, 50) between the
    rows of boxes, and its labels and boxes: 24 in rows, each after one it lies inside, and the
    ink's 21st. Work enough that a run starts its second thread."""
    a, b = strokes(300, 640, 0), strokes(300, 640, 0.3)
    b[50:55, 300:305] = (250, 0, 0)
    labels = np.where((a != b).any(axis=2), 1, 0).astype(np.uint8)
    labels[::7] = np.where(labels[::7] == 1, 2, 0)
    boxes = []
    for y in range(10, 250, 60):
        for x in range(10, 560, 200):
            boxes += [(x, y, 80, 30), (x + 10, y + 5, 20, 10)]
    boxes.insert(20, (296, 48, 12, 9))
    return a, b, labels, boxes


@pytest.mark.parametrize("start", [0, 21])
def test_two_threads_judge_a_run_as_one_does(start: int) -> None:
    a, b, labels, boxes = strokes_page()
    runs = []
    for threads in (1, 2):
        plane = labels.copy()
        found = _analysis.noise_run(a, b, plane, boxes, start, 32, RULE, (1, 2), 7, threads)
        runs.append((found, plane))
    (found, plane), (found_two, plane_two) = runs
    assert found == found_two and (plane == plane_two).all()
    # Each box inside the one before it has nothing left; the run stops at the new ink.
    assert found == ((20, bytes([1, 0] * 10)) if start == 0 else (25, bytes([1, 0] * 2)))
    with pytest.raises(ValueError, match="threads"):
        _analysis.noise_run(a, b, labels, boxes, 0, 32, RULE, (1, 2), 7, 3)


def test_new_ink_is_outside_the_envelope_and_a_one_level_change_inside() -> None:
    a = np.full((12, 12, 3), 128, np.uint8)
    ink = a.copy()
    ink[4:7, 4:7] = 20  # a dot three pixels wide: its centre is dark all around
    mask = np.zeros((12, 12), bool)
    mask[4:7, 4:7] = True
    assert _analysis.envelope(a, ink, mask, 0, 0, False) is False
    assert reference_envelope(a, ink, mask, 0, 0, False) is False
    level = a.copy()
    level[4:7, 4:7] = 127
    assert _analysis.envelope(a, level, mask, 0, 0, False) is True


def reference_run(mask: np.ndarray) -> int:
    """The longest run of True along any row or column."""
    best = 0
    for lines in (mask, mask.T):
        for line in lines:
            run = 0
            for on in line:
                run = run + 1 if on else 0
                best = max(best, run)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_straight_run_finds_the_longest_row_or_column_run(seed: int) -> None:
    rng = np.random.default_rng(seed)
    mask = rng.random((37, 53)) < 0.8
    for view in (mask, mask.T, mask[::2, 1::3], np.asfortranarray(mask), mask.view(np.uint8)):
        longest = reference_run(view)
        assert _analysis.straight_run(view, longest) is True
        assert _analysis.straight_run(view, longest + 1) is False


@pytest.mark.parametrize("seed", range(4))
def test_straight_run_of_labels_counts_every_label_but_the_unset_ones(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 9, (41, 29), dtype=np.uint8)
    unset = bytes([0, 5, 6])
    differs = ~np.isin(labels, list(unset))
    for view, mask in ((labels, differs), (labels[3::2, ::-1], differs[3::2, ::-1])):
        longest = reference_run(mask)
        assert _analysis.straight_run(view, longest, unset) is True
        assert _analysis.straight_run(view, longest + 1, unset) is False
    # With no byte unset, every value is set, zeros included.
    assert _analysis.straight_run(labels, 41, b"") is True


def test_straight_run_sees_a_column_and_refuses_other_shapes() -> None:
    mask = np.zeros((50, 50), bool)
    mask[5:45, 7] = True  # 40 down one column, 1 along any row
    assert _analysis.straight_run(mask, 40) is True
    assert _analysis.straight_run(mask, 41) is False
    with pytest.raises(ValueError, match="2-D"):
        _analysis.straight_run(np.zeros((4, 4, 3), bool), 2)


def reference_ink(area: np.ndarray, colour: tuple[int, int, int], ink: int) -> np.ndarray:
    """Which pixels lie more than ``ink`` levels from ``colour`` in some channel."""
    levels = area[..., :3].astype(np.int16)
    return (np.abs(levels - np.array(colour, np.int16)) > ink).any(axis=2)


@pytest.mark.parametrize("channels", [3, 4])
# Colours near 0 and 255: the range around them reaches past a byte's.
@pytest.mark.parametrize("colour", [(128, 128, 128), (250, 3, 128), (0, 255, 20)])
def test_ink_bounds_are_each_rows_first_and_last_inked_pixel(
    channels: int, colour: tuple[int, int, int]
) -> None:
    rng = np.random.default_rng(channels + sum(colour))
    image = np.empty((40, 60, channels), np.uint8)
    image[...] = (*colour, 255)[:channels]
    # Scattered pixels a little off, some past the ink level and some within it, and rows left
    # plain; alpha differs everywhere and must not count.
    near = rng.integers(-40, 41, (40, 60, 3))
    spots = rng.random((40, 60)) < 0.04
    spots[rng.random(40) < 0.3] = False
    image[..., :3][spots] = np.clip(np.array(colour) + near, 0, 255)[spots]
    if channels == 4:
        image[..., 3] = rng.integers(0, 256, (40, 60))
    x, y, w, h = 5, 3, 50, 34
    left, right = np.empty(h, np.int32), np.empty(h, np.int32)
    found = _analysis.ink_bounds(image, x, y, w, h, colour, 24, left, right)
    inked = reference_ink(image[y : y + h, x : x + w], colour, 24)
    rows = inked.any(axis=1)
    assert found == int(rows.sum()) > 0
    assert (left[~rows] == -1).all() and (right[~rows] == -1).all()
    np.testing.assert_array_equal(left[rows], inked[rows].argmax(axis=1))
    np.testing.assert_array_equal(right[rows], w - 1 - inked[rows][:, ::-1].argmax(axis=1))


def test_ink_bounds_refuse_an_area_outside_the_image_and_short_outputs() -> None:
    image = np.zeros((10, 10, 3), np.uint8)
    out = np.empty(10, np.int32)
    with pytest.raises(ValueError, match="outside the image"):
        _analysis.ink_bounds(image, 5, 0, 6, 10, (0, 0, 0), 24, out, out.copy())
    with pytest.raises(ValueError, match="each row"):
        _analysis.ink_bounds(image, 0, 0, 10, 10, (0, 0, 0), 24, out[:9], out.copy())
    with pytest.raises(ValueError, match="int32"):
        _analysis.ink_bounds(image, 0, 0, 10, 10, (0, 0, 0), 24, out.astype(np.int64), out)


def reference_counts(
    a: np.ndarray, b: np.ndarray, ys: np.ndarray, xs: np.ndarray, dx: int, dy: int
) -> tuple[int, int]:
    """Pixels where b shows a's colour from p - d (arrived), and a's colour shows in b at p + d
    (left), within 3 levels per channel."""
    height, width = a.shape[:2]

    def near(here: np.ndarray, there: np.ndarray, sy: int, sx: int) -> int:
        ty, tx = ys + sy, xs + sx
        inside = (ty >= 0) & (ty < height) & (tx >= 0) & (tx < width)
        p = here[ys[inside], xs[inside], :3].astype(int)
        q = there[ty[inside], tx[inside], :3].astype(int)
        return int((np.abs(p - q) <= 3).all(axis=1).sum())

    return near(b, a, -dy, -dx), near(a, b, dy, dx)


def reference_rank(
    a: np.ndarray, b: np.ndarray, ys: np.ndarray, xs: np.ndarray, tried: set, exact: bool
) -> tuple[int, int] | None:
    """Shortest first; exact: the first explaining every one of a sample of at most 4096 pixels
    both ways. Ranked: by (arrived, left) on a sample of about 256, the best four again on about
    4096, ties kept in order."""
    ranked = sorted(tried, key=lambda d: (abs(d[0]) + abs(d[1]), d))
    if exact:
        step = max(1, ys.size // 4096)
        sy, sx = ys[::step], xs[::step]
        whole = [d for d in ranked if reference_counts(a, b, sy, sx, *d) == (sy.size, sy.size)]
        return whole[0] if whole else None
    for size, keep in ((256, 4), (4096, 1)):
        step = max(1, ys.size // size)
        counts = [reference_counts(a, b, ys[::step], xs[::step], *d) for d in ranked]
        order = sorted(range(len(ranked)), key=lambda i: (-counts[i][0], -counts[i][1], i))
        ranked = [ranked[i] for i in order][:keep]
        if step == 1:
            break
    return ranked[0] if ranked else None


def moved_block(channels: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Few colours, so that many translations match somewhere, and a block moved by (5, -3)."""
    rng = np.random.default_rng(seed + channels)
    a = (rng.integers(0, 3, (120, 160, channels)) * 100).astype(np.uint8)
    b = a.copy()
    b[10:90, 20:140] = a[13:93, 15:135]
    return a, b


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("exact", [True, False])
def test_rank_picks_the_translation_its_definition_does(channels: int, exact: bool) -> None:
    a, b = moved_block(channels)
    ys, xs = (v.astype(np.int32) for v in np.nonzero((a != b).any(axis=2)))
    assert ys.size > 4096  # both samples are taken
    rng = np.random.default_rng(7)
    decoys = {(int(dx), int(dy)) for dx, dy in rng.integers(-9, 10, (60, 2))} - {(5, -3)}
    for tried in (set(), decoys, decoys | {(5, -3)}, {(1, 0), (0, 1), (-1, 0), (0, -1)}):
        for sample in (slice(None), slice(None, 300), slice(None, None, 7)):
            sy, sx = ys[sample].copy(), xs[sample].copy()
            found = _analysis.rank(a, b, sy, sx, tried, exact)
            assert found == reference_rank(a, b, sy, sx, tried, exact)
    # Where the block left, other content arrived: no translation explains it both ways.
    expected = None if exact else (5, -3)
    assert _analysis.rank(a, b, ys, xs, decoys | {(5, -3)}, exact) == expected


@pytest.mark.parametrize("seed", range(4))
def test_rank_keeps_the_best_four_that_decide_any_larger_set(seed: int) -> None:
    # A region's second look ranks the translations of its first and the moves found since:
    # the first's best four and the new ones must pick as all of them would.
    a, b = moved_block(3, seed)
    ys, xs = (v.astype(np.int32) for v in np.nonzero((a != b).any(axis=2)))
    rng = np.random.default_rng(seed)
    for sample in (slice(None), slice(None, 300), slice(None, None, 7)):
        sy, sx = ys[sample].copy(), xs[sample].copy()
        first = {(int(dx), int(dy)) for dx, dy in rng.integers(-12, 13, (80, 2))}
        added = {(int(dx), int(dy)) for dx, dy in rng.integers(-12, 13, (3, 2))} | {(5, -3)}
        pick, best = _analysis.rank(a, b, sy, sx, first, False, True)
        assert pick == _analysis.rank(a, b, sy, sx, first, False) and pick in best
        assert len(best) == 4 and set(best) <= first
        whole = _analysis.rank(a, b, sy, sx, first | added, False)
        assert _analysis.rank(a, b, sy, sx, set(best) | added, False) == whole
        assert _analysis.rank(a, b, sy, sx, first, True, True)[1] == []


@pytest.mark.parametrize("seed", range(6))
def test_rank_gives_up_only_translations_that_could_not_win(seed: int) -> None:
    """Stripes and blocks of two colours: many translations explain the same number of pixels,
    and whole runs of them tie, so a translation given up too early, or one kept over an
    earlier tie, changes the pick."""
    rng = np.random.default_rng(seed)
    height, width = 90, 130
    stripes = (rng.integers(0, 2, width) * 200).astype(np.uint8)
    a = np.repeat(np.broadcast_to(stripes, (height, width))[:, :, None], 3, axis=2).copy()
    a[rng.integers(0, height, 40), :] ^= 200  # rows that break the vertical symmetry
    b = np.roll(a, (int(rng.integers(-6, 7)), int(rng.integers(-6, 7))), axis=(0, 1))
    ys, xs = (v.astype(np.int32) for v in np.nonzero((a != b).any(axis=2)))
    tried = {(dx, dy) for dx in range(-8, 9) for dy in range(-8, 9)}
    for sample in (slice(None), slice(None, None, 3), slice(5, 5000)):
        sy, sx = ys[sample].copy(), xs[sample].copy()
        for picked in (tried, set(sorted(tried)[::5])):
            assert _analysis.rank(a, b, sy, sx, picked, False) == reference_rank(
                a, b, sy, sx, picked, False
            )
    # Inside one flat block every short translation explains every pixel: the shortest wins.
    flat = np.full((height, width, 3), 90, np.uint8)
    ys, xs = (v.ravel().astype(np.int32) for v in np.mgrid[20:70, 20:110])
    assert _analysis.rank(flat, flat, ys, xs, tried - {(0, 0)}, False) == (-1, 0)


def test_rank_refuses_pixels_outside_the_image_and_bad_translations() -> None:
    a = np.zeros((8, 8, 3), np.uint8)
    one = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match="outside the image"):
        _analysis.rank(a, a, np.array([8], np.int32), one, {(1, 0)}, True)
    with pytest.raises(ValueError, match="one length"):
        _analysis.rank(a, a, np.zeros(2, np.int32), one, {(1, 0)}, True)
    with pytest.raises(ValueError, match="one width and height"):
        _analysis.rank(a, a[:4], one, one, {(1, 0)}, True)
    with pytest.raises(ValueError, match="contiguous"):
        _analysis.rank(a, a, np.zeros(4, np.int32)[::2], one.repeat(2), {(1, 0)}, True)
    with pytest.raises(ValueError, match="ys must be a 1-D contiguous int32 array"):
        _analysis.rank(a, a, np.zeros(1, np.intp), one, {(1, 0)}, True)
    for tried in ([(1, 0, 2)], [1], [("x", 0)], 5):
        with pytest.raises(TypeError, match=r"\(dx, dy\) pairs"):
            _analysis.rank(a, a, one, one, tried, False)


def reference_votes(
    a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int], least: int, columns: bool
) -> list[int]:
    """Offsets at which b's lines across the box equal a's lines (by their (r, g, b) bytes) that
    far before them, most voted first, ties to the first seen; one-colour lines and offset 0
    do not vote."""
    if columns:
        a, b = a.transpose(1, 0, 2), b.transpose(1, 0, 2)
        x, y, w, h = box[1], box[0], box[3], box[2]
    else:
        x, y, w, h = box
    search = max(w, h, least)
    first, last = max(y - search, 0), min(y + h + search, a.shape[0])

    def line(image: np.ndarray, at: int) -> bytes | None:
        pixels = image[at, x : x + w, :3]
        return None if (pixels == pixels[0]).all() else pixels.tobytes()

    votes: dict[int, list[int]] = {}
    seen = 0
    for at in range(y, y + h):
        key = line(b, at)
        for base in range(first, last):
            if key is not None and line(a, base) == key and at != base:
                votes.setdefault(at - base, [0, seen])[0] += 1
                seen += 1
    return sorted(votes, key=lambda d: (-votes[d][0], votes[d][1]))[:3]


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize(
    ("box", "least"), [((20, 10, 120, 80), 8), ((0, 0, 7, 5), 64), ((150, 110, 10, 10), 4)]
)
def test_votes_count_the_offsets_their_definition_does(
    channels: int, columns: bool, box: tuple[int, int, int, int], least: int
) -> None:
    # Lines drawn from a few patterns, so that equal lines lie at many offsets and votes tie;
    # some of one colour; alpha differing where (r, g, b) do not.
    rng = np.random.default_rng(channels)
    patterns = (rng.integers(0, 3, (6, 160, channels)) * 100).astype(np.uint8)
    patterns[0] = 200
    a = patterns[rng.integers(0, 6, 120)]
    b = patterns[rng.integers(0, 6, 120)]
    b[30:70] = a[33:73]
    if columns:
        a, b = (np.ascontiguousarray(v[:, :120].transpose(1, 0, 2)) for v in (a, b))
        a, b = np.pad(a, ((0, 0), (0, 40), (0, 0))), np.pad(b, ((0, 0), (0, 40), (0, 0)))
    if channels == 4:
        a[..., 3] = rng.integers(0, 256, a.shape[:2])
    found = _analysis.votes(a, b, box, least, columns)
    assert found == reference_votes(a, b, box, least, columns)
    assert found or box[2] < 100  # the wide box finds offsets


@pytest.mark.parametrize("channels", [3, 4])
def test_votes_tell_apart_lines_that_differ_in_one_byte_or_order(channels: int) -> None:
    """Odd columns of the candidate are the base's 5 px to their left; even ones the base's
    9 px to their left altered in one place: a byte off by one, two pixels swapped, a pixel's
    red and green swapped. Nearly equal lines must not vote for 9."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 256, (90, 140, channels), dtype=np.uint8)
    b = a.copy()
    for x in range(30, 110):
        b[:, x] = a[:, x - 5] if x % 2 else a[:, x - 9]
        if x % 2:
            continue
        y, kind = int(rng.integers(0, 89)), x % 3
        if kind == 0:
            b[y, x, int(rng.integers(0, 3))] ^= 1
        elif kind == 1:
            b[[y, y + 1], x] = b[[y + 1, y], x]
        else:
            b[y, x, [0, 1]] = b[y, x, [1, 0]]
    box = (30, 0, 80, 90)
    assert _analysis.votes(a, b, box, 8, True) == [5]
    assert _analysis.votes(a, b, box, 8, False) == reference_votes(a, b, box, 8, False)
    # The same lines as rows.
    at, bt = (np.ascontiguousarray(v.transpose(1, 0, 2)) for v in (a, b))
    assert _analysis.votes(at, bt, (0, 30, 90, 80), 8, False) == [5]


def test_votes_find_the_move_of_a_block_and_refuse_areas_outside_the_image() -> None:
    a, _ = moved_block(3)
    up, right = a.copy(), a.copy()
    up[10:90, 20:140] = a[13:93, 20:140]
    right[10:90, 20:140] = a[10:90, 15:135]
    assert _analysis.votes(a, up, (20, 10, 120, 80), 8, False)[0] == -3
    assert _analysis.votes(a, right, (20, 10, 120, 80), 8, True)[0] == 5
    b = right
    with pytest.raises(ValueError, match="outside the image"):
        _analysis.votes(a, b, (150, 110, 20, 10), 8, False)
    with pytest.raises(ValueError, match="one width and height"):
        _analysis.votes(a, b[:50], (0, 0, 10, 10), 8, False)


def reference_carried(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    arrived: np.ndarray,
    left: np.ndarray,
    d: tuple[int, int],
    colour: tuple[int, int, int],
) -> tuple[int, int]:
    level, tolerance = 24, 12
    here = np.flatnonzero(arrived)
    step = max(1, here.size // 4096)
    here = here[::step]
    height, width = a.shape[:2]
    ink = covered = 0
    for y, x, gone in zip(ys[here], xs[here], left[here], strict=True):
        pb, pa = b[y, x, :3].astype(int), a[y, x, :3].astype(int)
        if not (np.abs(pb - colour) > level).any():
            continue
        ink += 1
        if gone or not (np.abs(pa - colour) > level).any():
            continue
        ty, tx = y + d[1], x + d[0]
        inside = 0 <= ty < height and 0 <= tx < width
        rows = np.clip(np.arange(ty - 1, ty + 2), 0, height - 1)
        cols = np.clip(np.arange(tx - 1, tx + 2), 0, width - 1)
        near = b[np.ix_(rows, cols)][..., :3].reshape(-1, 3).astype(int)
        along = inside and ((pa >= near.min(0) - tolerance) & (pa <= near.max(0) + tolerance)).all()
        covered += not along
    return ink * step, covered * step


@pytest.mark.parametrize("channels", [3, 4])
def test_carried_counts_ink_and_covered_pixels_as_their_definition_does(channels: int) -> None:
    rng = np.random.default_rng(channels)
    a = rng.integers(0, 256, (100, 90, channels), dtype=np.uint8)
    b = rng.integers(0, 256, (100, 90, channels), dtype=np.uint8)
    ys, xs = (v.astype(np.int32) for v in np.nonzero(np.ones((100, 90), bool)))
    for share, d in ((0.9, (3, -2)), (0.3, (-89, 0)), (0.0, (0, 1))):
        arrived, left = rng.random(ys.size) < share, rng.random(ys.size) < 0.5
        for colour in ((255, 255, 255), (10, 200, 30)):
            found = _analysis.carried(a, b, ys, xs, arrived, left, *d, colour, 24, 12)
            assert found == reference_carried(a, b, ys, xs, arrived, left, d, colour)
    with pytest.raises(ValueError, match="one per pixel"):
        _analysis.carried(a, b, ys, xs, arrived[:5], left, 0, 1, (0, 0, 0), 24, 12)


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("area", [(0, 0, 30, 20), (5, 7, 6, 8), (3, 3, 4, 4), (2, 9, 3, 10)])
def test_frame_colour_is_the_commonest_colour_of_the_areas_edges(
    channels: int, area: tuple[int, int, int, int]
) -> None:
    rng = np.random.default_rng(channels)
    src = (rng.integers(0, 2, (20, 30, channels)) * 255).astype(np.uint8)
    x0, y0, x1, y1 = area
    part = src[y0:y1, x0:x1, :3].astype(np.int64)
    frame = np.concatenate([part[0], part[-1], part[:, 0], part[:, -1]])
    colours, counts = np.unique(
        (frame[:, 0] << 16) | (frame[:, 1] << 8) | frame[:, 2], return_counts=True
    )
    common = int(colours[counts.argmax()])
    expected = (common >> 16, (common >> 8) & 255, common & 255)
    assert _analysis.frame_colour(src, *area) == expected
    with pytest.raises(ValueError, match="outside the image"):
        _analysis.frame_colour(src, 25, 0, 31, 4)


@pytest.mark.parametrize("shape", [(1, 1), (7, 9), (33, 70), (4, 8)])
def test_pixels_are_what_nonzero_lists(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[1])
    for share in (0.0, 0.03, 0.5, 1.0):
        mask = rng.random(shape) < share
        ys, xs = np.empty(int(mask.sum()), np.int32), np.empty(int(mask.sum()), np.int32)
        _analysis.pixels(mask, ys, xs)
        expected = np.nonzero(mask)
        assert np.array_equal(ys, expected[0]) and np.array_equal(xs, expected[1])
    with pytest.raises(ValueError, match="set pixels, not"):
        _analysis.pixels(np.ones(shape, bool), np.empty(0, np.int32), np.empty(0, np.int32))
    with pytest.raises(ValueError, match="int32"):
        _analysis.pixels(mask, np.empty(mask.sum(), np.intp), np.empty(mask.sum(), np.intp))


def reference_flips(
    a: np.ndarray,
    b: np.ndarray,
    mask: np.ndarray,
    x: int,
    y: int,
    share: float,
    contrast: float,
    plain: float,
) -> int:
    height, width = a.shape[:2]
    ys, xs = np.nonzero(mask)
    ys, xs = ys + y, xs + x
    weights = np.array([0.299, 0.587, 0.114])

    def luma(image: np.ndarray, yy: np.ndarray, xx: np.ndarray) -> np.ndarray:
        return image[yy, xx, :3].astype(np.float64) @ weights

    near = [
        luma(a, np.clip(ys + dy, 0, height - 1), np.clip(xs + dx, 0, width - 1))
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    span = np.max(near, axis=0) - np.min(near, axis=0)
    moved = np.abs(luma(b, ys, xs) - luma(a, ys, xs))
    crossed = (moved >= share * span) & (span >= contrast)
    inner = (ys >= 2) & (ys < height - 2) & (xs >= 2) & (xs < width - 2)
    drawn = (moved >= plain) & (2 * span < moved) & inner
    return int((crossed | drawn).sum())


@pytest.mark.parametrize("seed", range(4))
def test_flips_count_pixels_that_crossed_their_neighbourhood(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Dark strokes on a light page, some of them moved or removed in the candidate.
    a = np.full((30, 40, 3 + seed % 2), 240, np.uint8)
    a[rng.random((30, 40)) < 0.2, :3] = 20
    b = a.copy()
    b[rng.random((30, 40)) < 0.1, :3] = 240
    b[rng.random((30, 40)) < 0.1, :3] = 20
    mask = (a != b).any(axis=2)[2:28, 0:40]
    expected = reference_flips(a, b, mask, 0, 2, 0.8, 64.0, 300.0)
    assert expected > 10
    assert _analysis.flips(a, b, mask, 0, 2, 0.8, 64.0, 300.0, 10**6) == expected
    assert _analysis.flips(a, b, mask, 0, 2, 0.8, 64.0, 300.0, 3) == 3  # counting stops at need
    # A faint change (under the contrast asked for) flips nothing.
    assert _analysis.flips(a, b, mask, 0, 2, 0.8, 255.0, 300.0, 10**6) == 0
    with pytest.raises(ValueError, match="outside"):
        _analysis.flips(a, b, mask, 1, 2, 0.8, 64.0, 300.0, 2)


def test_a_stroke_drawn_on_a_plain_neighbourhood_flips_and_a_faint_one_does_not() -> None:
    # A 1 px line 60 levels lighter than a dark page whose own range is about 11 levels.
    a = np.full((20, 30, 3), (18, 16, 25), np.uint8)
    a[10:, :] = (29, 26, 43)
    b = a.copy()
    b[9, 2:28] = (75, 85, 99)
    mask = (a != b).any(axis=2)
    expected = reference_flips(a, b, mask, 0, 0, 0.8, 64.0, 32.0)
    assert expected == 26 == _analysis.flips(a, b, mask, 0, 0, 0.8, 64.0, 32.0, 10**6)
    assert _analysis.flips(a, b, mask, 0, 0, 0.8, 64.0, 300.0, 10**6) == 0
    b[9, 2:28] = (40, 38, 50)  # 20 levels: re-rasterisation could blend that much
    assert _analysis.flips(a, b, mask, 0, 0, 0.8, 64.0, 32.0, 10**6) == 0
    # At the image's edge a sub-pixel motion uncovers what lay beyond: no stroke drawn there.
    b = a.copy()
    b[5:9, 0:2] = (75, 85, 99)
    edge = (a != b).any(axis=2)
    assert _analysis.flips(a, b, edge, 0, 0, 0.8, 64.0, 32.0, 10**6) == 0


@pytest.mark.parametrize("channels", [3, 4])
def test_spread_is_the_largest_channel_deviation(channels: int) -> None:
    rng = np.random.default_rng(channels)
    image = rng.integers(0, 256, (20, 30, channels), dtype=np.uint8)
    image[:, :, 1] //= 4  # one channel spread less than the others
    for x, y, w, h in ((0, 0, 30, 20), (5, 3, 7, 11), (29, 19, 1, 1)):
        area = image[y : y + h, x : x + w, :3].astype(np.float64)
        expected = area.std(axis=(0, 1)).max()
        assert _analysis.spread(image, x, y, w, h) == pytest.approx(expected, abs=1e-9)
    flat = np.full((4, 4, channels), 200, np.uint8)
    assert _analysis.spread(flat, 0, 0, 4, 4) == 0.0
    with pytest.raises(ValueError, match="outside"):
        _analysis.spread(image, 25, 0, 6, 1)
    with pytest.raises(ValueError, match="empty"):
        _analysis.spread(image, 0, 0, 0, 5)


def envelope3(area: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's 3x3 lowest and highest value, channel by channel, edges repeated."""
    h, w = area.shape[:2]
    padded = np.pad(area, ((1, 1), (1, 1), (0, 0)), mode="edge")
    near = [padded[i : i + h, j : j + w] for i in range(3) for j in range(3)]
    return np.ascontiguousarray(np.min(near, axis=0)), np.ascontiguousarray(np.max(near, axis=0))


@pytest.mark.parametrize("shape", [(17, 23), (1, 5), (6, 1), (1, 1), (4, 2), (3, 40)])
def test_ranges_are_each_pixels_3x3_lowest_and_highest(shape: tuple[int, int]) -> None:
    area = np.random.default_rng(shape[0]).integers(-300, 300, (*shape, 3)).astype(np.int16)
    lo, hi = np.empty_like(area), np.empty_like(area)
    _analysis.ranges(area, lo, hi)
    expected = envelope3(area)
    assert np.array_equal(lo, expected[0]) and np.array_equal(hi, expected[1])
    with pytest.raises(ValueError, match="the area's size"):
        _analysis.ranges(area, lo[:, :0], hi)


def reference_fits(
    a: np.ndarray, b: np.ndarray, ys: np.ndarray, xs: np.ndarray, dx: int, dy: int, tol: int
) -> np.ndarray:
    """b's colour within a's 3x3 range at p - d and a's within b's at p + d, all positions
    clamped to the area."""
    h, w = a.shape[:2]
    (lo_a, hi_a), (lo_b, hi_b) = envelope3(a), envelope3(b)
    sy, sx = np.clip(ys - dy, 0, h - 1), np.clip(xs - dx, 0, w - 1)
    ty, tx = np.clip(ys + dy, 0, h - 1), np.clip(xs + dx, 0, w - 1)
    came = (b[ys, xs] >= lo_a[sy, sx] - tol) & (b[ys, xs] <= hi_a[sy, sx] + tol)
    went = (a[ys, xs] >= lo_b[ty, tx] - tol) & (a[ys, xs] <= hi_b[ty, tx] + tol)
    return np.asarray((came & went).all(axis=1))


def reference_tile_shifts(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    tiles: np.ndarray,
    totals: np.ndarray,
    order: list[tuple[int, int]],
) -> list[tuple[int, int, int, bool]] | None:
    """Displacements tried in order on the tiles still open: a tile closes on the first that
    leaves at most max(2.01, 0.08 * its total) of its pixels unexplained; the rest take the one
    that left the fewest, unless it left more than 0.15 of them."""
    found, fewest, nearest = [], {}, {}
    open_tiles = sorted(set(tiles.tolist()))
    for dx, dy in order:
        if not open_tiles:
            break
        ok = reference_fits(a, b, ys, xs, dx, dy, 8)
        still = []
        for tile in open_tiles:
            misses = int((~ok[tiles == tile]).sum())
            if misses < fewest.get(tile, np.inf):
                fewest[tile], nearest[tile] = misses, (dx, dy)
            if misses <= max(2.01, 0.08 * totals[tile]):
                found.append((tile, dx, dy, False))
            else:
                still.append(tile)
        open_tiles = still
    if any(fewest[tile] > 0.15 * totals[tile] for tile in open_tiles):
        return None
    return found + [(tile, *nearest[tile], True) for tile in open_tiles]


@pytest.mark.parametrize("seed", range(4))
def test_tile_shifts_agree_with_their_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = (rng.integers(0, 4, (40, 48, 3)) * 80).astype(np.int16)
    b = a.copy()
    # Each 16 px tile displaced on its own, some with stray pixels, one redrawn at random.
    for ty in range(0, 40, 16):
        for tx in range(0, 48, 16):
            dy, dx = rng.integers(-2, 3, 2)
            b[ty : ty + 16, tx : tx + 16] = np.roll(a, (dy, dx), axis=(0, 1))[
                ty : ty + 16, tx : tx + 16
            ]
    b[rng.random((40, 48)) < 0.02 * seed] += 40
    if seed == 3:
        b[16:32, 16:32] = rng.integers(0, 4, (16, 16, 3)) * 80
    (lo_a, hi_a), (lo_b, hi_b) = envelope3(a), envelope3(b)
    ys, xs = (v.astype(np.int32) for v in np.nonzero((a != b).any(axis=2)))
    tiles = (ys // 16) * 3 + xs // 16
    totals = np.bincount(tiles, minlength=9).astype(np.int32)
    order = sorted(
        ((dx, dy) for dx in range(-2, 3) for dy in range(-2, 3)),
        key=lambda d: abs(d[0]) + abs(d[1]),
    )
    found = _analysis.tile_shifts(
        a, b, lo_a, hi_a, lo_b, hi_b, ys, xs, tiles, totals, order, 8, 0.08, 0.15
    )
    assert found == reference_tile_shifts(a, b, ys, xs, tiles, totals, order)
    assert (found is None) == (seed == 3)  # the redrawn tile is no displacement of the base


GLYPH_ORDER = sorted(
    ((dx, dy) for dx in range(-2, 3) for dy in range(-2, 3)), key=lambda d: abs(d[0]) + abs(d[1])
)
# (tile, pixels a tile needs, tiles needed, most pixels, tolerance, pad, misses, near, still,
# limit when near, limit): the tolerances reference_tile_shifts states.
GLYPH_RULES = [
    (32, 4, 3, 30000, 8, 8, 0.08, 0.15, 0.03, 30.0, 90.0),
    (16, 4, 1, 30000, 8, 8, 0.08, 0.15, 0.03, 30.0, 90.0),
    (32, 4, 3, 500, 8, 8, 0.08, 0.15, 0.03, 30.0, 90.0),
]


def reference_glyph_tiles(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    x: int,
    y: int,
    rule: tuple[int, int, int, int, int, int, float, float, float, float, float],
) -> bool:
    """Each counting tile on its own, over its own area: a displacement reference_tile_shifts
    finds, then tile_residuals() within the tile's limit."""
    size, min_tile, min_tiles, most, _, pad, _, _, still, near_limit, limit = rule
    if not 0 < changed.sum() <= most:
        return False
    ys, xs = np.nonzero(changed)
    columns = changed.shape[1] // size + 1
    tiles = ((ys // size) * columns + xs // size).astype(np.int32)
    totals = np.bincount(tiles).astype(np.int32)
    counted = np.flatnonzero(totals >= min_tile)
    if counted.size < min_tiles:
        return False
    height, width = a.shape[:2]
    for tile in counted.tolist():
        py, px = ys[tiles == tile] + y, xs[tiles == tile] + x
        x0, y0 = max(px.min() - 3, 0), max(py.min() - 3, 0)
        x1, y1 = min(px.max() + 4, width), min(py.max() + 4, height)
        area_a, area_b = (i[y0:y1, x0:x1, :3].astype(np.int16) for i in (a, b))
        found = reference_tile_shifts(
            area_a,
            area_b,
            (py - y0).astype(np.int32),
            (px - x0).astype(np.int32),
            tiles[tiles == tile],
            totals,
            GLYPH_ORDER,
        )
        if found is None:
            return False
        ((_, dx, dy, near),) = found
        tx, ty = x + (tile % columns) * size, y + (tile // columns) * size
        box = (tx, ty, min(size, x + changed.shape[1] - tx), min(size, y + changed.shape[0] - ty))
        worst = (*box, dx, dy, near_limit if near else limit)
        if _analysis.tile_residuals(a, b, [worst], pad, still) >= 0:
            return False
    return True


def shifted_ink(ink: np.ndarray, fy: float, fx: float) -> np.ndarray:
    """ink sampled bilinearly at (y - fy, x - fx), edges repeated: drawn again that far off."""
    h, w = ink.shape
    yy, xx = np.mgrid[0:h, 0:w]
    sy, sx = np.clip(yy - fy, 0, h - 1), np.clip(xx - fx, 0, w - 1)
    y0, x0 = np.floor(sy).astype(int), np.floor(sx).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy, wx = sy - y0, sx - x0
    top = ink[y0, x0] * (1 - wx) + ink[y0, x1] * wx
    return np.asarray(top * (1 - wy) + (ink[y1, x0] * (1 - wx) + ink[y1, x1] * wx) * wy)


def glyph_pair(seed: int, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Strokes on a light page, each 32 px tile of the candidate drawn again up to 1.5 px off
    on its own (none off for seeds divisible by 3), a block of new ink in every fourth."""
    rng = np.random.default_rng(seed)
    ink = np.zeros((80, 108))
    for _ in range(180):
        y, x = rng.integers(0, 78), rng.integers(0, 104)
        ink[y, x : x + rng.integers(1, 4)] = ink[y : y + rng.integers(1, 4), x] = 1
    for axis in (0, 1):  # anti-aliased: [1 2 1] / 4 along each axis
        ink = (np.roll(ink, 1, axis) + 2 * ink + np.roll(ink, -1, axis)) / 4
    ink = ink[4:76, 4:104]
    moved = ink.copy()
    for ty in range(0, 72, 32):
        for tx in range(0, 100, 32):
            fy, fx = rng.uniform(-1.5, 1.5, 2) * (seed % 3 != 0)
            moved[ty : ty + 32, tx : tx + 32] = shifted_ink(ink, fy, fx)[ty : ty + 32, tx : tx + 32]
    if seed % 4 == 1:
        moved[rng.integers(0, 60) :][:8, 40:52] = 1.0

    def image(v: np.ndarray) -> np.ndarray:
        grey = np.clip(250 - 210 * v, 0, 255).astype(np.uint8)
        planes = [grey, grey, (grey * 0.9).astype(np.uint8), np.full_like(grey, 255)]
        # Inside a larger image: the views have rows further apart than their width.
        canvas = np.zeros((76, 110, channels), np.uint8)
        canvas[2:74, 5:105] = np.stack(planes[:channels], axis=2)
        return canvas[2:74, 5:105]

    return image(ink), image(moved)


@pytest.mark.parametrize("channels", [3, 4])
def test_glyph_tiles_judge_each_counting_tile_on_its_own(channels: int) -> None:
    # Tiles are searched in groups over one area each: what a tile is judged on must not
    # depend on which others share its group.
    verdicts = []
    for seed in range(24):
        a, b = glyph_pair(seed, channels)
        changed = (a != b).any(axis=2)
        ys, xs = np.nonzero(changed)
        x, y = (int(v.min()) if v.size else 0 for v in (xs, ys))
        region = changed[y:, x:]
        for rule in GLYPH_RULES:
            got = _analysis.glyph_tiles(a, b, region, x, y, GLYPH_ORDER, rule)
            assert got == reference_glyph_tiles(a, b, region, x, y, rule), (seed, rule)
            verdicts.append(got)
    assert 0 < sum(verdicts) < len(verdicts) / 2  # drawn again, and new ink or no change


def test_glyph_tiles_refuse_bad_arguments() -> None:
    a = np.zeros((8, 8, 3), np.uint8)
    rule = GLYPH_RULES[0]
    with pytest.raises(ValueError, match="outside the images"):
        _analysis.glyph_tiles(a, a, np.ones((4, 4), bool), 6, 0, GLYPH_ORDER, rule)
    with pytest.raises(ValueError, match="tile size"):
        _analysis.glyph_tiles(a, a, np.ones((4, 4), bool), 0, 0, GLYPH_ORDER, (0, *rule[1:]))
    with pytest.raises(TypeError, match=r"\(dx, dy\) pairs"):
        _analysis.glyph_tiles(a, a, np.ones((4, 4), bool), 0, 0, [(0, 0, 1)], rule)


def test_tile_shifts_refuse_pixels_outside_the_area_and_bad_arrays() -> None:
    a = np.zeros((8, 8, 3), np.int16)
    one, total = np.zeros(1, np.int32), np.ones(1, np.int32)
    with pytest.raises(ValueError, match="outside the area"):
        _analysis.tile_shifts(a, a, a, a, a, a, one + 8, one, one, total, [(0, 0)], 8, 0.1, 0.2)
    with pytest.raises(ValueError, match="no total"):
        _analysis.tile_shifts(a, a, a, a, a, a, one, one, one + 1, total, [(0, 0)], 8, 0.1, 0.2)
    with pytest.raises(ValueError, match="int16"):
        _analysis.tile_shifts(
            a.astype(np.uint8), a, a, a, a, a, one, one, one, total, [(0, 0)], 8, 0.1, 0.2
        )
    with pytest.raises(TypeError, match=r"\(dx, dy\) pairs"):
        _analysis.tile_shifts(a, a, a, a, a, a, one, one, one, total, [(0, 0, 1)], 8, 0.1, 0.2)


def keys15(pixels: np.ndarray) -> np.ndarray:
    q = pixels[..., :3].astype(np.int64) >> 3
    return np.asarray((q[..., 0] << 10) | (q[..., 1] << 5) | q[..., 2])


def palette_pair(seed: int, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Two images of few colours (so that colours repeat and ties happen), b a partial recolour
    of a with some noise."""
    rng = np.random.default_rng(seed)
    colours = rng.integers(0, 256, (6, channels), dtype=np.uint8)
    a = colours[rng.integers(0, 6, (40, 50))]
    b = a.copy()
    b[a[..., 0] == colours[0, 0]] = colours[1]
    b[rng.random((40, 50)) < 0.15] = colours[rng.integers(0, 6)]
    return a, b


def filled_pair(seed: int, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of fills (runs of 1 to 60 px of one colour, two of the colours a level apart: one
    colour key), each run of b one of two colours, so that where a colour went is a close
    vote of long runs; spots of another colour inside the fills."""
    rng = np.random.default_rng(seed)
    colours = rng.integers(0, 256, (6, channels), dtype=np.uint8)
    colours[1] = colours[0] ^ 1  # the same key, another colour
    a = np.empty((40, 90, channels), np.uint8)
    b = np.empty_like(a)
    for y in range(40):
        x = 0
        while x < 90:
            run = int(rng.integers(1, 61))
            a[y, x : x + run] = colours[rng.integers(0, 4)]
            b[y, x : x + run] = colours[rng.integers(2, 4)]
            x += run
    b[rng.random((40, 90)) < 0.02] = colours[5]
    return a, b


def went_along(a: np.ndarray, b: np.ndarray, mask: np.ndarray, x: int, y: int) -> int:
    """How many masked pixels went where the commonest pixel of their colour went."""
    h, w = mask.shape
    before, after = keys15(a[y : y + h, x : x + w]).ravel(), keys15(b[y : y + h, x : x + w]).ravel()
    # Where each base colour went: its commonest candidate colour, the higher one on a tie.
    target = {}
    for colour in np.unique(before):
        found, counts = np.unique(after[before == colour], return_counts=True)
        target[int(colour)] = int(found[counts == counts.max()].max())
    flags = mask.ravel()
    return sum(target[int(c)] == int(d) for c, d in zip(before[flags], after[flags], strict=True))


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("make", [palette_pair, filled_pair])
def test_recoloured_counts_the_pixels_that_went_where_their_colour_went(
    seed: int, channels: int, make: Callable[[int, int], tuple[np.ndarray, np.ndarray]]
) -> None:
    a, b = make(seed, channels)
    x, y, w, h = 5, 3, 37, 29
    mask = np.random.default_rng(seed + 10).random((h, w)) < (0.3 if seed % 2 else 0.95)
    hits = went_along(a, b, mask, x, y)
    assert _analysis.recoloured(a, b, mask, x, y) == (hits, int(mask.sum()))


@pytest.mark.parametrize("scattered", [59, 61])
def test_recoloured_counts_a_fill_along_a_row_pixel_for_pixel(scattered: int) -> None:
    # One colour went to q along a fill of 60 px, and to r at pixels apart from each other: the
    # larger count wins, and a fill miscounted by one pixel would tie them, which the other
    # colour (the higher key) would win.
    p, q, r, other = [0, 0, 0], [0, 0, 80], [0, 0, 160], [200, 200, 200]
    if scattered > 60:
        q, r = r, q
    a = np.full((3, 130, 3), other, np.uint8)
    b = a.copy()
    a[0, 10:70], b[0, 10:70] = p, q
    a[1, : 2 * scattered : 2], b[1, : 2 * scattered : 2] = p, r
    mask = np.ones((3, 130), bool)
    hits = went_along(a, b, mask, 0, 0)
    assert hits == max(60, scattered) + 390 - 60 - scattered
    assert _analysis.recoloured(a, b, mask, 0, 0) == (hits, 390)


@pytest.mark.parametrize("samples", [1, 7, 2048])
def test_one_fill_counts_the_commonest_pair_of_every_kth_masked_pixel(samples: int) -> None:
    a, b = palette_pair(samples, 3)
    mask = np.random.default_rng(samples).random((20, 30)) < 0.5
    x, y = 11, 9
    where = np.flatnonzero(mask)
    where = where[:: max(1, where.size // samples)]
    ys, xs = np.divmod(where, mask.shape[1])
    pairs = keys15(a[ys + y, xs + x]) << 15 | keys15(b[ys + y, xs + x])
    _, counts = np.unique(pairs, return_counts=True)
    assert _analysis.one_fill(a, b, mask, x, y, samples) == (int(counts.max()), pairs.size)
    empty = np.zeros_like(mask)
    assert _analysis.one_fill(a, b, empty, x, y, samples) == (0, 0)


def with_alpha(pixels: np.ndarray) -> np.ndarray:
    return np.dstack([pixels, np.full(pixels.shape[:2], 255, np.uint8)])


# Each layout has its own loop: RGB, RGBA, and images of either.
@pytest.mark.parametrize("channels", [(3, 3), (4, 4), (3, 4)])
@pytest.mark.parametrize(("x0", "y0", "x1", "y1"), [(0, 0, 50, 40), (3, 4, 21, 9), (2, 2, 3, 30)])
def test_edges_count_the_gradient_numpy_computes(
    x0: int, y0: int, x1: int, y1: int, channels: tuple[int, int]
) -> None:
    rng = np.random.default_rng(x1)
    a = (rng.integers(0, 3, (40, 50, 3)) * 100).astype(np.uint8)
    b = np.clip(a.astype(int) + rng.integers(-30, 30, a.shape), 0, 255).astype(np.uint8)
    a, b = (with_alpha(p) if c == 4 else p for p, c in zip((a, b), channels, strict=True))

    def squared(pixels: np.ndarray) -> np.ndarray:
        luma = pixels[y0:y1, x0:x1, :3].astype(np.float64) @ np.array([0.299, 0.587, 0.114])
        if min(luma.shape) < 2:
            return np.zeros(luma.shape)
        gy, gx = np.gradient(luma)
        return np.asarray(gx * gx + gy * gy)

    strong, faint = 24.0**2, 6.0**2
    ga, gb = squared(a), squared(b)
    expected = (
        int((ga > strong).sum()),
        int((gb > strong).sum()),
        int(((gb > strong) & (ga > faint)).sum()),
        int(((ga > strong) & (gb > faint)).sum()),
    )
    assert _analysis.edges(a, b, x0, y0, x1, y1, strong, faint) == expected
    with pytest.raises(ValueError, match="outside"):
        _analysis.edges(a, b, 0, 0, 51, 40, strong, faint)


@pytest.mark.parametrize("channels", [3, 4])
def test_colours_counts_distinct_colours_and_the_commonest(channels: int) -> None:
    a, _ = palette_pair(channels, channels)
    a[10:20, 10:20, :3] = (np.arange(300) % 256).reshape(10, 10, 3)  # many colours there
    x, y, w, h = 4, 6, 30, 25
    packed = (
        (a[y : y + h, x : x + w, 0].astype(np.int64) << 16)
        | (a[y : y + h, x : x + w, 1].astype(np.int64) << 8)
        | a[y : y + h, x : x + w, 2]
    )
    _, counts = np.unique(packed, return_counts=True)
    assert _analysis.colours(a, x, y, w, h) == (counts.size, int(counts.max()))
    # A photo: tens of thousands of colours, in runs of one or two pixels.
    photo = np.random.default_rng(channels).integers(0, 256, (150, 200, channels), np.uint8)
    photo[:, ::2] = photo[:, 1::2]
    packed = (photo[..., 0].astype(np.int64) << 16) | (photo[..., 1].astype(np.int64) << 8)
    _, counts = np.unique(packed | photo[..., 2], return_counts=True)
    assert _analysis.colours(photo, 0, 0, 200, 150) == (counts.size, int(counts.max()))
    with pytest.raises(ValueError, match="outside"):
        _analysis.colours(a, 40, 0, 20, 5)


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize(
    ("x0", "y0", "step", "rows", "cols"), [(0, 0, 1, 30, 40), (3, 5, 2, 9, 12)]
)
def test_grey_pair_samples_zero_mean_grey_levels_as_numpy_does(
    channels: int, x0: int, y0: int, step: int, rows: int, cols: int
) -> None:
    rng = np.random.default_rng(channels + step)
    a, b = (rng.integers(0, 256, (30, 40, channels), dtype=np.uint8) for _ in range(2))
    out = np.empty((2, rows, cols))
    _analysis.grey_pair(a, b, x0, y0, step, out)
    for plane, image in zip(out, (a, b), strict=True):
        picked = image[y0 : y0 + rows * step : step, x0 : x0 + cols * step : step, :3]
        grey = picked.astype(np.float64).sum(axis=2)
        # Exactly: the sum of integer grey levels is exact in any order.
        np.testing.assert_array_equal(plane, grey - grey.mean())


def test_grey_pair_refuses_samples_beyond_the_image_and_a_bad_plane() -> None:
    a = np.zeros((10, 10, 4), np.uint8)
    with pytest.raises(ValueError, match="outside the image"):
        _analysis.grey_pair(a, a, 0, 0, 2, np.empty((2, 6, 5)))
    with pytest.raises(ValueError, match="shape"):
        _analysis.grey_pair(a, a, 0, 0, 1, np.empty((3, 4, 4)))
    with pytest.raises(ValueError, match="8-byte"):
        _analysis.grey_pair(a, a, 0, 0, 1, np.empty((2, 4, 4), np.float32))


def test_cross_power_is_the_normalised_product_and_correlation_peaks_at_the_shift() -> None:
    rng = np.random.default_rng(7)
    base = rng.random((48, 60))
    moved = np.roll(base, (5, -9), axis=(0, 1))
    spectra = np.fft.rfft2(np.stack([base - base.mean(), moved - moved.mean()]))
    out = np.empty(spectra.shape[1:], spectra.dtype)
    _analysis.cross_power(spectra, out)
    product = spectra[1] * np.conj(spectra[0])
    np.testing.assert_allclose(out, product / (np.abs(product) + 1e-9), rtol=1e-12, atol=1e-15)
    corr = np.fft.irfft2(out, s=base.shape)
    assert _analysis.peaks(corr, 1) == [(5, 60 - 9)]


def test_cross_power_refuses_spectra_of_another_shape() -> None:
    spectra = np.zeros((2, 4, 3), np.complex128)
    with pytest.raises(ValueError, match="shape"):
        _analysis.cross_power(spectra, np.empty((4, 4), np.complex128))
    with pytest.raises(ValueError, match="16-byte"):
        _analysis.cross_power(spectra.real.copy(), np.empty((4, 3), np.complex128))


@pytest.mark.parametrize("seed", range(6))
def test_peaks_are_the_highest_values_but_the_origin_highest_first(seed: int) -> None:
    rng = np.random.default_rng(seed)
    corr = rng.random((17, 23))
    corr[0, 0] = 2.0  # the origin is never a peak, however high
    flat = corr.ravel().copy()
    flat[0] = -np.inf
    expected = np.argsort(-flat, kind="stable")[:4]
    assert _analysis.peaks(corr, 4) == [(int(i) // 23, int(i) % 23) for i in expected]


def test_peaks_of_equal_values_come_in_row_order_and_count_is_bounded() -> None:
    corr = np.zeros((3, 3))
    assert _analysis.peaks(corr, 3) == [(0, 1), (0, 2), (1, 0)]
    assert _analysis.peaks(np.zeros((1, 2)), 4) == [(0, 1)]
    assert _analysis.peaks(corr, 0) == []
    with pytest.raises(ValueError, match="count"):
        _analysis.peaks(corr, 17)
