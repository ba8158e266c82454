"""Change analysis: noise told apart from real changes, moves with their vectors, kinds and
verdicts, on a labelled corpus rendered by Chromium and on synthetic pairs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from tests import analysis_corpus
from viewfinder.imaging import _native, compare, png
from viewfinder.imaging.analysis import Signal, wording
from viewfinder.imaging.analysis.candidates import Translations
from viewfinder.imaging.analysis.examine import MAX_ANALYSED, MAX_PARTS, _parts, analyze
from viewfinder.imaging.analysis.model import Change, pixels_of
from viewfinder.imaging.analysis.moves import find_move, stayed
from viewfinder.imaging.analysis.reach import SET
from viewfinder.imaging.analysis.verdict import conclude


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    # Shared between xdist workers through the cache folder; rendering happens once.
    yield analysis_corpus.ensure()


def run(pair: dict[str, Any]) -> Any:
    folder = analysis_corpus.OUT
    base = (folder / pair["base"]).read_bytes()
    candidate = (folder / pair["candidate"]).read_bytes()
    return compare(base, candidate).analysis


@pytest.fixture(scope="session")
def results(corpus: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    return [(pair, run(pair)) for pair in corpus]


def test_no_real_change_is_classified_as_noise(results: list[tuple[dict[str, Any], Any]]) -> None:
    dismissed = [p["name"] for p, a in results if p["kind"] != "noise" and a.noise]
    assert dismissed == []


def test_at_least_95_percent_of_noise_pairs_are_noise(
    results: list[tuple[dict[str, Any], Any]],
) -> None:
    noise = [(p, a) for p, a in results if p["kind"] == "noise"]
    missed = [p["name"] for p, a in noise if not a.noise]
    assert len(noise) >= 15
    assert len(missed) <= 0.05 * len(noise), missed


def test_at_least_85_percent_of_kinds_are_right(results: list[tuple[dict[str, Any], Any]]) -> None:
    wrong = [(p["name"], p["kind"], a.kind) for p, a in results if a.kind != p["kind"]]
    assert len(wrong) <= 0.15 * len(results), wrong


def test_every_move_vector_is_exact(results: list[tuple[dict[str, Any], Any]]) -> None:
    for pair, analysis in results:
        found = {(c.dx, c.dy) for c in analysis.changes if c.kind == "move"}
        for dx, dy in pair.get("moves", []):
            assert (dx, dy) in found, (pair["name"], found)


def test_vanished_content_broken_images_clipped_text_and_overlaps_are_likely_regressions(
    results: list[tuple[dict[str, Any], Any]],
) -> None:
    labelled = [(p, a) for p, a in results if p.get("verdict")]
    assert {p["name"].split("/")[1] for p, _ in labelled} >= {
        "removed",
        "broken_image",
        "clipped_text",
        "overlap",
        "overflow",
    }
    for pair, analysis in labelled:
        assert analysis.verdict == pair["verdict"], (pair["name"], analysis.reasoning)


def test_no_intended_change_is_called_a_regression(
    results: list[tuple[dict[str, Any], Any]],
) -> None:
    flagged = [
        (p["name"], a.summary)
        for p, a in results
        if not p.get("verdict") and a.verdict == "likely_regression"
    ]
    assert flagged == []


def test_an_inserted_banner_is_reported_as_inserted_with_the_rest_moved(
    results: list[tuple[dict[str, Any], Any]],
) -> None:
    for pair, analysis in results:
        if pair.get("inserted"):
            assert analysis.summary.startswith("Content inserted at the top"), analysis.summary
            assert "moved down 40 px" in analysis.summary


# ---- synthetic pairs, no browser ---------------------------------------------------------------


def page(height: int = 120, width: int = 160) -> np.ndarray:
    rng = np.random.default_rng(3)
    pixels = np.full((height, width, 3), 250, np.uint8)
    for _ in range(12):  # some "text": short dark bars
        y, x = rng.integers(5, height - 10), rng.integers(5, width - 30)
        pixels[y : y + 3, x : x + rng.integers(8, 25)] = rng.integers(20, 90)
    return pixels


def analysis_of(base: np.ndarray, candidate: np.ndarray, **options: Any) -> Any:
    return compare(png.encode(base), png.encode(candidate), **options)


def test_a_moved_block_is_found_with_its_vector() -> None:
    base = np.full((100, 140, 3), 255, np.uint8)
    base[20:40, 30:70] = (30, 60, 200)
    base[25:28, 35:60] = 255
    cand = np.full_like(base, 255)
    cand[33:53, 37:77] = base[20:40, 30:70]
    result = analysis_of(base, cand)
    moves = [(c.dx, c.dy) for c in result.analysis.changes if c.kind == "move"]
    assert result.analysis.kind == "layout_shift" and moves == [(7, 13)]
    assert "down 13 px and right 7 px" in result.analysis.summary


def test_a_move_the_signatures_explain_needs_no_phase_correlation() -> None:
    # Slid straight down: the row signatures find it exactly. Moved diagonally: only phase
    # correlation suggests the vector, which must then be found as well.
    base = np.full((120, 160, 3), 255, np.uint8)
    base[20:40, 30:90] = (30, 60, 200)
    base[25:28, 35:80] = 255
    for dx, dy in ((0, 17), (7, 13)):
        cand = np.full_like(base, 255)
        cand[20 + dy : 40 + dy, 30 + dx : 90 + dx] = base[20:40, 30:90]
        changed_all = (base != cand).any(axis=2)
        ys, xs = np.nonzero(changed_all)
        box = (int(xs.min()), int(ys.min()), int(np.ptp(xs)) + 1, int(np.ptp(ys)) + 1)
        changed = changed_all[box[1] : box[1] + box[3], box[0] : box[0] + box[2]]
        sources = Translations(base, cand, box, SET)
        move = find_move(base, cand, changed, box, SET, candidates=sources)
        assert move is not None and (move.dx, move.dy) == (dx, dy)
        assert ("phase" in vars(sources)) == (dx != 0), (dx, dy)


def test_a_recoloured_block_is_a_colour_change() -> None:
    base = page()
    base[40:70, 50:110] = (30, 90, 200)
    cand = base.copy()
    cand[40:70, 50:110] = (120, 60, 220)
    analysis = analysis_of(base, cand).analysis
    assert (analysis.kind, analysis.verdict) == ("color", "likely_intended")


def test_vanished_content_is_a_likely_regression() -> None:
    base = page()
    base[30:80, 40:120] = (40, 40, 40)
    base[40:70, 50:110] = (200, 30, 30)
    cand = base.copy()
    cand[30:80, 40:120] = 250
    analysis = analysis_of(base, cand).analysis
    assert analysis.verdict == "likely_regression" and "disappeared" in analysis.reasoning


def test_identical_pairs_need_no_analysis() -> None:
    data = png.encode(page())
    assert compare(data, data).analysis.kind == "identical"


def test_ignore_noise_makes_a_noise_only_pair_unchanged() -> None:
    base = page()
    # A 0.4 px horizontal offset of everything, as a renderer produces it: blended neighbours.
    shifted = base.astype(np.float32)
    shifted[:, 1:] = base[:, 1:] * 0.6 + base[:, :-1] * 0.4
    cand = shifted.round().astype(np.uint8)
    plain = analysis_of(base, cand)
    assert plain.analysis.noise and plain.analysis.kind == "noise"
    assert analysis_of(base, cand, ignore_noise=True).changed is False
    assert plain.changed is (plain.diff_ratio > 0)


def test_the_analysis_is_in_the_json_result() -> None:
    base = page()
    cand = base.copy()
    cand[10:20, 10:20] = 0
    data = analysis_of(base, cand).to_dict()["analysis"]
    assert {
        "kind",
        "noise",
        "verdict",
        "confidence",
        "summary",
        "reasoning",
        "changes",
    } <= data.keys()
    json.dumps(data)


def test_the_readme_example_is_a_recoloured_button_and_a_note_moved_down() -> None:
    # The button and the text below it fall into one region: its parts are told apart.
    examples = analysis_corpus.ROOT / "docs" / "examples"
    analysis = compare(
        (examples / "before.png").read_bytes(), (examples / "after.png").read_bytes()
    ).analysis
    kinds = {(c.kind, c.dx, c.dy) for c in analysis.changes}
    assert ("color", None, None) in kinds and ("move", 0, 4) in kinds, analysis.changes
    assert analysis.kind == "color" and analysis.verdict == "likely_intended"


# ---- signals and their words -------------------------------------------------------------------


def test_every_signal_has_its_own_wording() -> None:
    assert set(wording.NOTES) == set(Signal)
    assert all(words.strip() for words in wording.NOTES.values())
    assert len(set(wording.NOTES.values())) == len(Signal), "two signals would read the same"


def test_every_note_is_its_signals_wording(results: list[tuple[dict[str, Any], Any]]) -> None:
    seen = set()
    for _, analysis in results:
        for c in analysis.changes:
            seen.add(c.signal)
            assert (c.signal is None) is (c.note == "") is ("note" not in c.to_dict())
            if c.signal is not None and c.signal is not Signal.RESIZED:
                assert c.note == c.to_dict()["note"] == wording.NOTES[c.signal]
    # The corpus holds every signal but NOT_EXAMINED (tested below) and REWRAPPED (its pages
    # have no column to widen: tests/test_analysis_columns.py): the check above saw them.
    assert seen == {None, *Signal} - {Signal.NOT_EXAMINED, Signal.REWRAPPED}


def test_a_size_change_notes_both_sizes() -> None:
    base = page()
    taller = np.concatenate([base, np.full((10, 160, 3), 250, np.uint8)])
    analysis = analysis_of(base, taller).analysis
    (size,) = [c for c in analysis.changes if c.kind == "size"]
    assert (size.signal, size.note) == (Signal.RESIZED, "160x120 -> 160x130")
    assert "The image size changed (160x120 -> 160x130)" in analysis.reasoning


def test_regions_beyond_those_examined_are_noted_as_not_examined() -> None:
    # compare() lists at most MAX_ANALYSED regions, so they are handed to analyze() directly.
    base = np.full((440, 440, 3), 250, np.uint8)
    cand = base.copy()
    regions = []
    for i in range(MAX_ANALYSED + 10):  # squares apart from each other
        y, x = 10 + (i // 20) * 20, 10 + (i % 20) * 21
        h = 4 + i % 5
        cand[y : y + h, x : x + 6] = 20
        regions.append((x, y, 6, h, 6 * h))
    labels = np.where((base != cand).any(axis=2), _native.LABEL_CHANGED, _native.LABEL_SAME)
    changed = sum(r[4] for r in regions)
    analysis = analyze(
        base,
        cand,
        labels.astype(np.uint8),
        regions,
        compared_pixels=440 * 440,
        changed_pixels=changed,
    )
    skipped = [c for c in analysis.changes if c.signal is Signal.NOT_EXAMINED]
    assert len(analysis.changes) == MAX_ANALYSED + 10 and len(skipped) == 10
    assert {c.to_dict()["note"] for c in skipped} == {"not examined"}


def test_pixels_of_answers_as_np_nonzero_does() -> None:
    rng = np.random.default_rng(3)
    mask = rng.random((37, 53)) < 0.3
    for view in (mask, mask[5:30, 7:40], mask[::2, ::3], mask.T, np.zeros((4, 5), bool)):
        ys, xs = pixels_of(view)
        expected = np.nonzero(view)
        assert np.array_equal(ys, expected[0]) and np.array_equal(xs, expected[1])


@pytest.mark.parametrize("axis", [0, 1])
def test_a_region_splits_into_its_parts_up_to_max_parts(axis: int) -> None:
    def marks(count: int) -> np.ndarray:
        # count marks 2 px long, 4 px apart (more than SPLIT_GAP): bands along axis 0, or
        # columns along axis 1 when the marks stand on one row band.
        area = np.zeros((6 * count, 9), bool)
        for i in range(count):
            area[6 * i : 6 * i + 2, 3 : 3 + i % 4 + 1] = True
        return area if axis == 0 else area.T

    for count in (1, 2, MAX_PARTS):
        area = marks(count)
        boxes = _parts(area, SET)
        assert len(boxes) == (0 if count == 1 else count)
        # Each part boxed tight around its mark, and together they hold every marked pixel.
        for px, py, pw, ph in boxes:
            assert area[py : py + ph, px : px + pw].all()
        assert not boxes or sum(w * h for _, _, w, h in boxes) == area.sum()
    assert _parts(marks(MAX_PARTS + 1), SET) is None


def dashed_cards(moved: tuple[int, int]) -> bytes:
    """A pale page with two pale cards, dashed along the top and bottom, a few dark marks near
    the top of each; the first and second card drawn moved[0] and moved[1] px lower."""
    page = np.full((260, 220, 3), (246, 248, 250), np.uint8)
    rng = np.random.default_rng(1)
    for top, down in zip((10, 130), moved, strict=True):
        y0, y1 = top + down, top + down + 100
        page[y0:y1, 10:210] = (255, 248, 197)
        dashes = [x for x in range(10, 210) if (x - 10) % 6 < 4]
        page[y0, dashes] = page[y1 - 1, dashes] = (200, 200, 200)
        page[y0:y1, 10] = page[y0:y1, 209] = (200, 200, 200)
        for _ in range(6):
            x, y = rng.integers(18, 190), rng.integers(y0 + 6, y0 + 14)
            page[y : y + 4, x : x + 12] = (60, 60, 70)
            page[y - 1, x : x + 12] = (150, 150, 150)
    return png.encode(page)


def test_a_card_moved_a_pixel_is_a_layout_shift_and_the_page_moved_a_pixel_is_noise() -> None:
    # The card's changes fall into two regions (its top with the marks, its bottom edge),
    # neither of them bare text: both are the card moved, beside a card that stayed.
    card = compare(dashed_cards((0, 0)), dashed_cards((0, 1))).analysis
    assert card is not None and card.kind == "layout_shift"
    assert len(card.changes) == 2 and {(c.kind, c.dx, c.dy) for c in card.changes} == {
        ("move", 0, 1)
    }
    # Everything a pixel lower: nothing stayed to show the move against.
    page = compare(dashed_cards((0, 0)), dashed_cards((1, 1))).analysis
    assert page is not None and page.kind == "noise"


def test_stayed_counts_content_outside_the_boxes_that_a_move_would_have_changed() -> None:
    a = np.full((300, 40, 3), 250, np.uint8)
    a[20:24, 5:35] = 30  # a bar the move (0, 1) changes at its top and bottom rows
    a[280:284, 5:35] = 30  # another, beyond the first band of rows read
    b = a.copy()
    assert stayed(a, b, [], 0, 1, SET)
    assert stayed(a, b, [(0, 0, 40, 30)], 0, 1, SET)  # the second bar is outside the box
    assert not stayed(a, b, [(0, 0, 40, 30), (0, 270, 40, 20)], 0, 1, SET)
    assert not stayed(a, b, [], 1, 0, SET)  # moved sideways, the bars' ends change 8 px only
    b[279:285] = np.roll(a, 1, axis=0)[279:285]  # the second bar moved too
    assert not stayed(a, b, [(0, 0, 40, 30)], 0, 1, SET)


def test_content_that_grew_and_pushed_the_rest_down_is_a_content_change() -> None:
    # Text set larger at the top pushed three blocks down: more pixels moved than changed, but
    # what a person reads first is the text. Without the text it is a layout shift; with the
    # text below what moved, the moves are no push of it.
    text = Change(40, 100, 500, 60, "content", 9000, region=0)
    moved = [
        Change(40, 180 + 80 * i, 500, 60, "move", 12000, 0, 10, region=i + 1) for i in range(3)
    ]
    assert conclude([text, *moved], 640, 560, 358400, 45000).kind == "content"
    assert conclude(moved, 640, 560, 358400, 36000).kind == "layout_shift"
    below = replace(text, y=500)
    assert conclude([below, *moved], 640, 560, 358400, 45000).kind == "layout_shift"


def test_a_pale_block_moved_sideways_is_one_move_with_the_fill_it_carried() -> None:
    # Its fill is too close to the page to have an edge, so the strips it uncovered and covered
    # look like a flat area recoloured; the move found for its text explains them both ways.
    base = np.full((120, 400, 3), 255, np.uint8)
    base[20:100, 30:330] = (236, 232, 250)
    for i in range(5):
        base[30 + 14 * i : 38 + 14 * i, 40:140] = (40, 40, 60)
        base[32 + 14 * i, 42:138:9] = (236, 232, 250)
    cand = np.full_like(base, 255)
    cand[:, 20:] = base[:, :-20]
    analysis = analysis_of(base, cand).analysis
    assert analysis.kind == "layout_shift", analysis.changes
    assert {(c.kind, c.dx, c.dy) for c in analysis.changes} == {("move", 20, 0)}


def test_the_strips_a_pale_block_swept_are_part_of_its_move_when_they_are_examined_first() -> None:
    # The block's text lies away from its edges, and changes fewer pixels than either strip of
    # fill the block uncovered and covered: both strips are examined before the text shows the
    # move, and each alone looks like a flat area recoloured.
    base = np.full((120, 400, 3), 255, np.uint8)
    base[20:100, 30:330] = (236, 232, 250)
    for i in range(3):
        base[40 + 14 * i : 46 + 14 * i, 140:200] = (40, 40, 60)
        base[42 + 14 * i, 142:198:9] = (236, 232, 250)
    cand = np.full_like(base, 255)
    cand[:, 20:] = base[:, :-20]
    analysis = analysis_of(base, cand).analysis
    assert analysis.kind == "layout_shift", analysis.changes
    assert {(c.kind, c.dx, c.dy) for c in analysis.changes} == {("move", 20, 0)}
    assert len(analysis.changes) == 3


def test_a_pale_card_pushed_down_past_the_bottom_edge_is_part_of_the_move() -> None:
    # A banner pushes text and a pale card down 40 px; the strip of the card's fill that now
    # covers the page at the bottom left its place out of view, where it cannot be looked for.
    def bars(img: np.ndarray, y: int, x: int, n: int, w: int = 120) -> None:
        for i in range(n):
            img[y + 12 * i : y + 12 * i + 7, x : x + w - 10 * (i % 3)] = 40
            img[y + 12 * i + 3, x + 2 : x + w - 12 : 9] = 250

    def shot(dy: int) -> np.ndarray:
        img = np.full((600, 400, 3), 255, np.uint8)
        img[:dy] = (30, 60, 120)
        for y in (60, 140, 220):
            bars(img, y + dy, 30, 3)
        img[330 + dy : 530 + dy, 30:370] = (246, 246, 250)
        bars(img, 340 + dy, 40, 2, 200)
        return img

    analysis = analysis_of(shot(0), shot(40)).analysis
    assert analysis.summary == "Content inserted at the top; content moved down 40 px."
    assert {c.kind for c in analysis.changes} == {"content", "move"}


def glyph_rows(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """Rows of glyph-like strokes on a light or dark page, some cut by the page's edges."""
    background = int(rng.integers(200, 256)) if rng.random() < 0.7 else int(rng.integers(0, 40))
    page = np.full((height, width, 3), background, np.uint8)
    for _ in range(int(rng.integers(1, 5))):
        y, x, tall = int(rng.integers(-4, height - 4)), int(rng.integers(-6, width // 2)), 12
        ink = int(np.clip(255 - background + rng.integers(-30, 30), 0, 255))
        while x < width + 4:
            wide = int(rng.integers(2, 9))
            page[max(y, 0) : max(y + tall, 0), max(x, 0) : max(x + wide, 0)] = ink
            if rng.random() < 0.5:  # an open glyph
                page[max(y + 2, 0) : max(y + tall - 2, 0), max(x + 1, 0) : max(x + wide - 1, 0)] = (
                    background
                )
            x += wide + int(rng.integers(1, 4))
    return page


@pytest.mark.parametrize("seed", range(24))
def test_text_cut_by_the_edge_and_drawn_a_few_px_off_is_judged(seed: int) -> None:
    # Text along an edge of the screenshot, drawn again up to 3 px off and a little differently:
    # the glyph test measures each tile's residual over what both images show of it (a
    # displacement brings in pixels from beyond the edge, which neither has).
    rng = np.random.default_rng(seed)
    width, height = int(rng.integers(40, 200)), int(rng.integers(30, 150))
    base = glyph_rows(rng, width, height)
    dx, dy = int(rng.integers(-3, 4)), int(rng.integers(-3, 4))
    moved = np.full_like(base, base[0, 0])
    kept = base[max(-dy, 0) : height - max(dy, 0), max(-dx, 0) : width - max(dx, 0)]
    moved[max(dy, 0) : max(dy, 0) + kept.shape[0], max(dx, 0) : max(dx, 0) + kept.shape[1]] = kept
    spots = (rng.random(moved.shape[:2]) < 0.1)[..., None]
    moved = np.clip(moved + rng.integers(-15, 15, moved.shape) * spots, 0, 255).astype(np.uint8)
    for scale in (None, 2, 3):
        result = compare(png.encode(base), png.encode(moved), scale=scale)
        assert result.changed == (result.changed_pixels > 0)
