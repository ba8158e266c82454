"""Moves: whether a translation (dx, dy) explains a region, the candidate equal to the base
shifted by it on the region's changed pixels, and whether the moved content now covers
content that stayed (an overlap). The translations tried come from ``candidates``; the pixel
by pixel checks are the _analysis ``matches``, ``rank`` and ``carried`` kernels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewfinder.imaging import _analysis
from viewfinder.imaging.analysis.candidates import Translations
from viewfinder.imaging.analysis.glyphs import TOLERANCE
from viewfinder.imaging.analysis.model import Box, pixels_of, window
from viewfinder.imaging.analysis.reach import Reach

MOVE_EXPLAINED = 0.9  # share of changed pixels a translation must explain to be a move
MOVE_PARTIAL = 0.4  # ... to be a move beside a band of inserted content
MOVE_MIN_PIXELS = 32  # smaller regions are never taken as moves: too easy to match by chance
INK = 24  # levels from the background colour at which a pixel is content
OVERLAP = 0.15  # share of a move's pixels drawn over content that stayed: an overlap
OVERLAP_SHIFT = 3  # px a move must cover to overlap anything (glyphs jitter by one or two)


@dataclass(frozen=True, slots=True)
class Explained:
    """How well a translation d explains changed pixels p: ``arrived`` marks those where the
    candidate shows what the base had at p - d, ``left`` those whose base content reappears in
    the candidate at p + d, and ``content`` says whether the matches carry content (flat
    background alone matches anywhere)."""

    arrived: np.ndarray
    left: np.ndarray
    content: bool
    share: float  # of the pixels: those that arrived
    left_share: float  # ... and those that left


def explained_share(
    a: np.ndarray, b: np.ndarray, ys: np.ndarray, xs: np.ndarray, dx: int, dy: int
) -> Explained:
    """How well (dx, dy) explains the changed pixels at (ys, xs)."""
    arrived, left = np.empty(ys.size, bool), np.empty(ys.size, bool)
    if ys.size == 0:
        return Explained(arrived, left, False, 0.0, 0.0)
    n_arrived, same, ref = _analysis.matches(b, a, ys, xs, -dx, -dy, arrived, -1)
    n_left, same_left, _ = _analysis.matches(a, b, ys, xs, dx, dy, left, ref)
    total = n_arrived + n_left
    # Judged on both ways together, or on where the content arrived alone: a banner inserted
    # over a row of boxes leaves its own rows to plain background, found again further down,
    # and those many matches must not outvote the boxes' edges that arrived below it.
    content = total > 0 and not (same + same_left) / total > 0.9
    content = content or (n_arrived > 0 and not same / n_arrived > 0.9)
    return Explained(arrived, left, content, n_arrived / ys.size, n_left / ys.size)


@dataclass(frozen=True, slots=True)
class Move:
    """The translation that best explains a region, and what it explains."""

    dx: int
    dy: int
    share: float  # of the region's changed pixels: where the moved content arrived
    mask: np.ndarray  # those pixels, region-relative
    ink: int  # pixels of content (not background) that arrived
    covered: int  # ... drawn over content of the base that stayed put


class Ranking:
    """What the translations tried on one region's changed pixels told, kept for the region's
    second look, which tries the same ones and the moves found since: the exact pick among
    those tried, and the first round's best four of the ranked ones. The pick among more is
    then the pick among these and the new ones (see _analysis.rank)."""

    def __init__(self) -> None:
        self.exact: tuple[frozenset[tuple[int, int]], tuple[int, int] | None] | None = None
        self.ranked: tuple[frozenset[tuple[int, int]], list[tuple[int, int]]] | None = None


def find_move(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    box: Box,
    reach: Reach,
    known: tuple[tuple[int, int], ...] = (),
    candidates: Translations | None = None,
    ranking: Ranking | None = None,
) -> Move | None:
    """The translation that explains most of the region's changed pixels, if one carries
    content. Moves already found elsewhere in the pair are tried first: what pushed one block
    down usually pushed its neighbours by as much. ``candidates`` gives the translations to
    try (by default those the region suggests); ``ranking``, what trying them on these
    pixels told before."""
    x, y, w, h = box
    ys, xs = pixels_of(changed)
    ys += y
    xs += x

    best = _known(a, b, ys, xs, known)
    if best is None:
        source = candidates or Translations(a, b, box, reach)
        ranking = ranking or Ranking()
        # Known moves stay in the running: beside the band of content that pushed it, a move
        # explains only part of a region.
        best = _exact(a, b, ys, xs, frozenset(source.exact | set(known)), ranking)
        if best is None:
            tried = frozenset(source.exact | source.phase | set(known))
            best = _ranked(a, b, ys, xs, tried, ranking)
        if best is None:
            return None
    dx, dy = best
    found = explained_share(a, b, ys, xs, dx, dy)
    arrived = found.arrived
    # Background matches background anywhere: a "move" that carries no content is none.
    if arrived.sum() < reach.area(MOVE_MIN_PIXELS) or not found.content:
        return None
    mask = np.zeros((h, w), bool)
    mask[ys[arrived] - y, xs[arrived] - x] = True
    # Content that arrived where the base had content of its own, which did not move along
    # (nor is it found again d further on, give or take the TOLERANCE allowed to glyphs drawn
    # again at another sub-pixel phase): one element drawn over another. Text moved a few px
    # onto its own old place is not drawn over anything.
    colour = tuple(background(a, box).tolist())
    inked, covered = _analysis.carried(
        a, b, ys, xs, arrived, found.left, dx, dy, colour, INK, TOLERANCE
    )
    return Move(dx, dy, found.share, mask, inked, covered)


def _ranked(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    tried: frozenset[tuple[int, int]],
    ranking: Ranking,
) -> tuple[int, int] | None:
    """The translation that explains most of the pixels at (ys, xs). Every one tried is
    scored on a sample of them, the best few on more, and only the winner on all of them;
    ties go to the shortest vector. Where content arrived decides; where it left breaks ties:
    in smooth gradients several vectors match where content arrived, only the true one both
    ways."""
    scored = tried
    if ranking.ranked is not None and ranking.ranked[0] <= tried:
        scored = frozenset(ranking.ranked[1]) | (tried - ranking.ranked[0])
    found, best = _analysis.rank(a, b, ys, xs, scored, False, True)
    ranking.ranked = (tried, best)
    return found


def _exact(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    tried: frozenset[tuple[int, int]],
    ranking: Ranking,
) -> tuple[int, int] | None:
    """The shortest of the translations that explain every one of a sample of (at most 4096
    of) the pixels both ways, where the content arrived and where it left: no other
    translation can explain more of them, so phase correlation need not look for one."""
    scored = tried
    if ranking.exact is not None and ranking.exact[0] <= tried:
        # Of those tried before, only the pick can win again: the ones before it in the order
        # failed, and the ones after it come after it.
        before, pick = ranking.exact
        scored = (tried - before) | ({pick} if pick is not None else frozenset())
    found = _analysis.rank(a, b, ys, xs, scored, True)
    ranking.exact = (tried, found)
    return found


def known_move(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    box: Box,
    known: tuple[tuple[int, int], ...],
    *,
    beyond: int = 0,
) -> tuple[int, int] | None:
    """The first of the moves found elsewhere in the pair, longer than ``beyond`` px, that
    explains most of the region's changed pixels (judged on a sample of them)."""
    far = tuple(d for d in known if max(abs(d[0]), abs(d[1])) > beyond)
    if not far:
        return None
    ys, xs = pixels_of(changed)
    return _known(a, b, ys + box[1], xs + box[0], far)


def swept(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    box: Box,
    known: tuple[tuple[int, int], ...],
) -> tuple[int, int] | None:
    """The first of the moves found elsewhere in the pair that explains a plain region both
    ways (MOVE_EXPLAINED of its changed pixels where the content arrived and where it left): a
    block's own fill carried over background, its edge too faint to count as one. Flat colour
    matches flat colour anywhere, so only a move already found for content says so."""
    if not known:
        return None
    ys, xs = pixels_of(changed)
    ys += box[1]
    xs += box[0]
    height, width = a.shape[:2]
    for dx, dy in known:
        found = explained_share(a, b, ys, xs, dx, dy)
        # Where it left is looked for only inside the image: a block pushed down by the move
        # goes out of view at the bottom edge.
        stays = (ys + dy < height) & (ys + dy >= 0) & (xs + dx < width) & (xs + dx >= 0)
        left = found.left[stays].mean() if stays.any() else 0.0
        if found.share >= MOVE_EXPLAINED and left >= MOVE_EXPLAINED:
            return dx, dy
    return None


def _known(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    known: tuple[tuple[int, int], ...],
) -> tuple[int, int] | None:
    step = max(1, ys.size // 256)
    sample_y, sample_x = ys[::step], xs[::step]
    return next(
        (d for d in known if explained_share(a, b, sample_y, sample_x, *d).share >= MOVE_EXPLAINED),
        None,
    )


def stayed(a: np.ndarray, b: np.ndarray, boxes: list[Box], dx: int, dy: int, reach: Reach) -> bool:
    """Whether content outside the boxes that a move of (dx, dy) would have changed is drawn
    where it was (within 3 levels): neighbours that stayed put, so what moved in the boxes is
    a block, not the whole page drawn a pixel off (which changes content everywhere, if only
    faintly). Read a band of rows at a time: it stops at the first neighbours found, and a
    screenshot of any size needs little memory."""
    height, width = a.shape[:2]
    x0, x1 = max(dx, 0), width + min(dx, 0)
    y0, y1 = max(dy, 0), height + min(dy, 0)
    found = 0
    for top in range(y0, y1, 64):
        bottom = min(top + 64, y1)
        here = a[top:bottom, x0:x1]
        before = a[top - dy : bottom - dy, x0 - dx : x1 - dx]
        now = b[top:bottom, x0:x1]
        shows = np.ones((bottom - top, x1 - x0), bool)
        for x, y, w, h in boxes:
            # The pixel around a box too: a box is drawn tight around what changed.
            rows = slice(max(y - 1 - top, 0), max(y + h + 1 - top, 0))
            shows[rows, max(x - 1 - x0, 0) : max(x + w + 1 - x0, 0)] = False
        moves = np.zeros_like(shows)
        # Channel by channel, each difference as max - min of the uint8 values (no wider copy).
        for c in range(3):
            was, came, drawn = here[..., c], before[..., c], now[..., c]
            moves |= np.maximum(was, came) - np.minimum(was, came) > INK
            shows &= np.maximum(was, drawn) - np.minimum(was, drawn) <= 3
        found += int(np.count_nonzero(shows & moves))
        if found >= reach.area(MOVE_MIN_PIXELS):
            return True
    return False


def accepted(move: Move | None, changed: np.ndarray) -> bool:
    """Whether a move explains the region: most of it, or part of it beside a band of
    inserted content that pushed it."""
    if move is None:
        return False
    return move.share >= MOVE_PARTIAL or band(changed & ~move.mask, move.dx, move.dy) is not None


def overlapping(move: Move | None, reach: Reach) -> bool:
    """The moved content now covers content that stayed where it was."""
    return (
        move is not None
        and max(abs(move.dx), abs(move.dy)) >= reach.px(OVERLAP_SHIFT)
        and move.covered >= max(reach.area(MOVE_MIN_PIXELS), OVERLAP * move.ink)
    )


def band(rest: np.ndarray, dx: int, dy: int) -> slice | None:
    """The rows at the top or bottom of a region, as tall as a vertical move, that hold what
    the move leaves unexplained: the content inserted there, which pushed the rest. Inserted
    rows push what follows them straight down or up: beside a move that also went sideways,
    such rows are a chance match."""
    if dx or not dy or not rest.any():
        return None
    reach = int(1.25 * abs(dy)) + 4
    total = rest.sum()
    if rest[:reach].sum() >= 0.9 * total:
        return slice(0, reach)
    if rest[-reach:].sum() >= 0.9 * total:
        return slice(rest.shape[0] - reach, rest.shape[0])
    return None


def background(image: np.ndarray, box: Box) -> np.ndarray:
    """The commonest colour on the frame just around a region: what it sits on."""
    height, width = image.shape[:2]
    return np.array(_analysis.frame_colour(image, *window(box, 2, width, height)), np.int16)
