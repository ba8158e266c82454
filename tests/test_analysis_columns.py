"""A column that moved sideways and wrapped its lines again (analysis/columns.py): a sidebar
widened, a margin grown. Drawn pages pin the rule and what it must not take for a column (an
icon gone from the start of a line, centred text that grew); the style corpus's "column" pairs
are the real Chromium renders (test_analysis_styles)."""

from __future__ import annotations

import numpy as np

from viewfinder.imaging import compare, png
from viewfinder.imaging.analysis import Analysis, Signal
from viewfinder.imaging.analysis.columns import column_shift
from viewfinder.imaging.analysis.reach import SET

PAPER, INK, RULE = 250, 40, 190


def words(pixels: np.ndarray, y: int, x: int, widths: list[int]) -> None:
    """A line of "words": bars 9 px tall, each with a notch so that no two look alike."""
    for i, w in enumerate(widths):
        pixels[y : y + 9, x : x + w] = INK
        pixels[y + 2 + i % 5, x + 1 : x + w - 1] = PAPER
        x += w + 5


def two_columns(edge: int, lines: list[list[int]]) -> np.ndarray:
    """A sidebar ending in a rule at ``edge`` and a column of lines to its right."""
    pixels = np.full((200, 320, 3), PAPER, np.uint8)
    pixels[:, edge] = RULE
    for i, line in enumerate(lines):
        words(pixels, 12 + 16 * i, edge + 14, line)
    return pixels


PARAGRAPH = [[30, 22, 40, 18, 26, 34, 20], [24, 38, 16, 30, 28, 22], [36, 20, 26, 18]]
# The same words, first one first, wrapped into a column 10 px narrower.
REWRAPPED = [[30, 22, 40, 18, 26, 34], [20, 24, 38, 16, 30, 28], [22, 36, 20, 26, 18]]


def analysis(base: np.ndarray, candidate: np.ndarray) -> Analysis:
    return compare(png.encode(base), png.encode(candidate)).analysis


def test_a_widened_sidebar_is_a_layout_shift_of_the_column_beside_it() -> None:
    base = two_columns(60, PARAGRAPH * 3)
    candidate = two_columns(70, REWRAPPED * 3)
    assert column_shift(base, candidate, (60, 0, 250, 200), SET) == 10
    result = analysis(base, candidate)
    assert result.kind == "layout_shift", result
    (change,) = [c for c in result.changes if c.kind == "move"]
    assert (change.dx, change.dy, change.signal) == (10, 0, Signal.REWRAPPED)
    assert change.note == "re-wrapped" and result.summary == "Content moved right 10 px."
    assert "moved right 10 px, its lines wrapped to its new width." in result.reasoning


def lettered(lines: list[list[int]], edge: int) -> np.ndarray:
    """Like two_columns, but with no rule at the edge (a border too faint to count as content),
    each word told apart by its own width, not its place in its line (a line that starts with
    another word starts with other pixels), and a descender under each word of a width
    divisible by 3: rows below a line that start wherever such a word happens to sit."""
    pixels = np.full((200, 320, 3), PAPER, np.uint8)
    for i, line in enumerate(lines):
        top, x = 12 + 16 * i, edge + 14
        for w in line:
            pixels[top : top + 9, x : x + w] = INK
            pixels[top + 2 + w % 5, x + 1 : x + w - 1] = PAPER
            pixels[top : top + 9, x + 3 : x + w : 7] = PAPER  # strokes: no two offsets alike
            if w % 3 == 0:
                pixels[top + 9 : top + 12, x + w // 2 : x + w // 2 + 3] = INK
            x += w + 5
    return pixels


def test_a_paragraph_wrapped_again_is_a_column_though_its_later_lines_start_otherwise() -> None:
    # Only the first line of each paragraph keeps its first word; the rows of descenders start
    # at whichever word has one. The rows at the column's edge still moved by one offset.
    base = lettered(PARAGRAPH * 3, 60)
    candidate = lettered(REWRAPPED * 3, 70)
    assert column_shift(base, candidate, (60, 0, 250, 200), SET) == 10


def test_an_icon_gone_from_each_line_is_not_a_column_even_without_a_rule() -> None:
    # Every line moved its left edge by the icon's width, but what starts it now was beside the
    # icon all along: no row starts with what started it before.
    base = lettered(PARAGRAPH * 3, 72)
    for i in range(9):
        base[12 + 16 * i : 21 + 16 * i, 74:82] = INK
    candidate = lettered(PARAGRAPH * 3, 72)
    assert column_shift(base, candidate, (74, 0, 240, 200), SET) is None


def test_a_column_moved_left_is_found_too() -> None:
    base = two_columns(70, REWRAPPED * 3)
    candidate = two_columns(60, PARAGRAPH * 3)
    assert column_shift(base, candidate, (60, 0, 250, 200), SET) == -10


def test_an_icon_gone_from_the_start_of_lines_is_not_a_column() -> None:
    base = two_columns(60, PARAGRAPH * 3)
    candidate = base.copy()
    for i in range(9):  # every line loses its first "word": what is at the edge now was not
        candidate[12 + 16 * i : 21 + 16 * i, 74:104] = PAPER
    assert column_shift(base, candidate, (74, 0, 240, 200), SET) is None
    assert analysis(base, candidate).kind == "content"


def test_centred_lines_that_grew_are_not_a_column() -> None:
    base = np.full((200, 320, 3), PAPER, np.uint8)
    candidate = base.copy()
    for i in range(9):
        words(base, 12 + 16 * i, 100, [40, 40])  # 85 px, centred on x = 142
        words(candidate, 12 + 16 * i, 90, [40, 40, 15])  # 105 px, still centred there
    assert column_shift(base, candidate, (90, 0, 120, 200), SET) is None


def test_a_few_rows_are_not_a_column() -> None:
    base = two_columns(60, PARAGRAPH[:1])
    candidate = two_columns(70, REWRAPPED[:1])
    assert column_shift(base, candidate, (60, 10, 250, 11), SET) is None
