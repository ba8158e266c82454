"""What changed, in words: rendering noise, moves, colour changes and content changes, with a
verdict a reviewer can start from. Offline, deterministic, no model.

Each changed region is examined on its own, in this order:
- noise: both images are blurred a little and the base is shifted by the sub-pixel motion that
  best explains the candidate (Lucas-Kanade over the region and 32 px around it); when what
  remains is small everywhere, the region is re-rasterisation noise (sub-pixel offsets, tiny
  rotations, smoothing). The surroundings pin the motion to zero when only the region changed,
  so a real local change is never explained away as motion.
- move: a translation (dx, dy) under which the candidate equals the base exactly on the
  region's changed pixels, found from row and column signatures or phase correlation (moves
  found in earlier regions first). Moved content landing on content that stayed: an overlap.
- color: the shapes (edges) are where they were, only colours differ.
- parts: a region that is none of these is split where unchanged rows or columns part it,
  and its parts examined the same way.
- content: anything else; content that vanished into background, or a detailed picture that
  turned plain (a broken image), is a regression signal.

The whole pair then gets its kind, verdict and words: content inserted above what moved down
pushed it; vanished pieces along one line are content cut off.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from viewfinder.imaging import _analysis, _native

Kind = Literal["identical", "noise", "layout_shift", "color", "content", "size"]
Verdict = Literal["noise", "likely_intended", "likely_regression"]

PAD = 32  # context around a region for the motion estimate
NOISE_MOVING = 41.0  # largest residual of a region whose surroundings moved sub-pixel
NOISE_STILL = 30.0  # ... and of a region whose surroundings did not move
STILL = 0.03  # px of estimated motion below which a region is taken as not moving
MOVE_EXPLAINED = 0.9  # share of changed pixels a translation must explain to be a move
MOVE_PARTIAL = 0.4  # ... to be a move beside a band of inserted content
MOVE_MIN_PIXELS = 32  # smaller regions are never taken as moves: too easy to match by chance
INK = 24  # levels from the background colour at which a pixel is content
OVERLAP = 0.15  # share of a move's pixels drawn over content that stayed: an overlap
OVERLAP_SHIFT = 3  # px a move must cover to overlap anything (glyphs jitter by one or two)
EDGE_STRONG = 24.0  # luma gradient of an edge
EDGE_FAINT = 6.0  # ... and of a faint one, which a recolour may leave of it
SPLIT_GAP = 2  # unchanged rows or columns that separate the parts of a region
MAX_ANALYSED = 64  # regions examined in detail; the rest are summarised by size


@dataclass(frozen=True, slots=True)
class Change:
    """One changed region as the analysis sees it. ``x, y, width, height`` on the canvas."""

    x: int
    y: int
    width: int
    height: int
    kind: Literal["noise", "move", "color", "content", "size"]
    changed_pixels: int
    dx: int | None = None
    dy: int | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "x": self.x,
            "y": self.y,
            "width": self.width,
            "height": self.height,
            "kind": self.kind,
            "changed_pixels": self.changed_pixels,
        }
        if self.kind == "move":
            data |= {"dx": self.dx, "dy": self.dy}
        if self.note:
            data["note"] = self.note
        return data


@dataclass(frozen=True, slots=True)
class Analysis:
    kind: Kind
    noise: bool
    verdict: Verdict | None
    confidence: float
    summary: str
    reasoning: str
    changes: tuple[Change, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "noise": self.noise,
            "verdict": self.verdict,
            "confidence": round(self.confidence, 2),
            "summary": self.summary,
            "reasoning": self.reasoning,
            "changes": [c.to_dict() for c in self.changes],
        }


IDENTICAL = Analysis("identical", False, None, 1.0, "Identical.", "The images are identical.")


def subtle_only() -> Analysis:
    return Analysis(
        "noise",
        True,
        "noise",
        0.9,
        "Only imperceptible differences.",
        "Some pixels differ, but none by more than the colour threshold: rendering noise or "
        "a change too small to see.",
    )


# ---- image helpers ----------------------------------------------------------------------------


def _window(box: tuple[int, int, int, int], pad: int, w: int, h: int) -> tuple[int, int, int, int]:
    x, y, bw, bh = box
    return max(x - pad, 0), max(y - pad, 0), min(x + bw + pad, w), min(y + bh + pad, h)


def noise_residual(
    a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]
) -> tuple[float, float]:
    """(largest residual inside the box after motion compensation, motion in px)."""
    height, width = a.shape[:2]
    window = _window(box, PAD, width, height)
    x0, y0 = window[:2]
    x, y, bw, bh = box
    inside = (x - x0, y - y0, x - x0 + bw, y - y0 + bh)
    # A sub-pixel shift uncovers up to a pixel of new content along the image's own edges.
    # (Kept within the box: on an image a few pixels wide, nothing is left.)
    left, top = min(max(x, 2), x + bw), min(max(y, 2), y + bh)
    trimmed = (
        left - x0,
        top - y0,
        max(min(x + bw, width - 2), left) - x0,
        max(min(y + bh, height - 2), top) - y0,
    )
    residual, motion = _analysis.motion_residual(a, b, window, inside, trimmed, STILL)
    return residual, motion


def in_envelope(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    box: tuple[int, int, int, int],
    skip_edges: bool = False,
) -> bool:
    """Every changed pixel's colour is found, give or take 2 levels per channel, between the
    darkest and brightest of the other image's 3x3 neighbourhood (in one direction or the
    other): re-rasterised edges stay within their neighbours' range; new ink does not."""
    return _analysis.envelope(a, b, changed, box[0], box[1], skip_edges)


def is_noise(
    a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: tuple[int, int, int, int]
) -> bool:
    # The envelope test is cheap and fails fast on new ink; its edge-skipping form is implied
    # by the strict one, so it can go first whatever the motion turns out to be.
    if not in_envelope(a, b, changed, box, skip_edges=True):
        return False
    residual, motion = noise_residual(a, b, box)
    if residual > (NOISE_STILL if motion < STILL else NOISE_MOVING):
        return False
    return motion >= STILL or in_envelope(a, b, changed, box, skip_edges=False)


# ---- moves ------------------------------------------------------------------------------------


def _line_keys(
    image: np.ndarray, area: tuple[int, int, int, int], columns: bool
) -> tuple[np.ndarray, np.ndarray]:
    """A hash per row (or column) of the area (x0, y0, x1, y1) that equal lines share, and
    which lines are one flat colour (they say nothing about where content went)."""
    x0, y0, x1, y1 = area
    n = x1 - x0 if columns else y1 - y0
    keys, flat = np.empty(n, np.uint64), np.empty(n, bool)
    _analysis.signatures(image, x0, y0, x1, y1, columns, keys, flat)
    return keys, flat


def _signature_votes(
    a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int], columns: bool
) -> list[int]:
    """Offsets d along y (or x, with ``columns``) for which the candidate's lines across the
    region equal the base's lines d before them, most voted first; lines up to the region's
    size away are searched. Lines of one flat colour say nothing and are skipped."""
    x, y, w, h = box
    search = max(h, w, 64)
    if columns:
        lo, hi, limit = x, x + w, a.shape[1]
        first, last = max(lo - search, 0), min(hi + search, limit)
        near, here = (first, y, last, y + h), (lo, y, hi, y + h)
    else:
        lo, hi, limit = y, y + h, a.shape[0]
        first, last = max(lo - search, 0), min(hi + search, limit)
        near, here = (x, first, x + w, last), (x, lo, x + w, hi)
    base_keys, base_flat = _line_keys(a, near, columns)
    cand_keys, cand_flat = _line_keys(b, here, columns)
    index: dict[int, list[int]] = {}
    base_lines = np.flatnonzero(~base_flat).tolist()
    for line, key in zip(base_lines, base_keys[~base_flat].tolist(), strict=True):
        index.setdefault(key, []).append(line + first)
    votes: dict[int, int] = {}
    cand_lines = np.flatnonzero(~cand_flat).tolist()
    for line, key in zip(cand_lines, cand_keys[~cand_flat].tolist(), strict=True):
        for match in index.get(key, ()):
            if match != line + lo:
                votes[line + lo - match] = votes.get(line + lo - match, 0) + 1
    return sorted(votes, key=lambda d: -votes[d])[:3]


def _grey(pixels: np.ndarray) -> np.ndarray:
    """r + g + b as float32 (channel by channel: a reduction over the last axis is slow)."""
    grey: np.ndarray = pixels[..., 0].astype(np.float32)
    grey += pixels[..., 1]
    grey += pixels[..., 2]
    return grey


def _fast_length(n: int) -> int:
    """The largest m <= n whose only prime factors are 2, 3 and 5."""
    for m in range(n, 0, -1):
        k = m
        for p in (2, 3, 5):
            while k % p == 0:
                k //= p
        if k == 1:
            return m
    return n


def _phase_peaks(
    a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]
) -> list[tuple[int, int, int]]:
    """Translations suggested by phase correlation of the region's surroundings (coarse for
    large regions, refined later by exact matching)."""
    height, width = a.shape[:2]
    x, y, w, h = box
    x0, y0, x1, y1 = _window(box, max(min(max(w, h), 64), 8), width, height)
    step = max(1, int(np.ceil(max(x1 - x0, y1 - y0) / 512)))
    la, lb = (_grey(image[y0:y1:step, x0:x1:step]) for image in (a, b))
    if la.size < 64:
        return []
    # Transforms of lengths with large prime factors are many times slower: the window is
    # cropped to the largest length below it made of 2, 3 and 5 only.
    fast = _fast_length(la.shape[0]), _fast_length(la.shape[1])
    la, lb = la[: fast[0], : fast[1]], lb[: fast[0], : fast[1]]
    spectrum = np.fft.rfft2(lb - lb.mean()) * np.conj(np.fft.rfft2(la - la.mean()))
    spectrum /= np.abs(spectrum) + 1e-9
    corr = np.fft.irfft2(spectrum, s=la.shape)
    corr[0, 0] = -np.inf  # no motion is what unchanged surroundings vote for
    peaks = []
    top = np.argpartition(corr, corr.size - 4, axis=None)[-4:]
    for flat in top[np.argsort(corr.ravel()[top])[::-1]]:
        py, px = np.unravel_index(int(flat), corr.shape)
        dy = py if py <= corr.shape[0] // 2 else py - corr.shape[0]
        dx = px if px <= corr.shape[1] // 2 else px - corr.shape[1]
        peaks.append((int(dx) * step, int(dy) * step, step - 1))
    return peaks


@dataclass(frozen=True, slots=True)
class Explained:
    """How well a translation d explains changed pixels p: ``arrived`` marks those where the
    candidate shows what the base had at p - d, ``left`` those whose base content reappears in
    the candidate at p + d, and ``content`` says whether the matches carry content (flat
    background alone matches anywhere)."""

    arrived: np.ndarray
    left: np.ndarray
    content: bool

    @property
    def share(self) -> float:
        return float(self.arrived.mean()) if self.arrived.size else 0.0

    @property
    def left_share(self) -> float:
        return float(self.left.mean()) if self.left.size else 0.0


def explained_share(
    a: np.ndarray, b: np.ndarray, ys: np.ndarray, xs: np.ndarray, dx: int, dy: int
) -> Explained:
    """How well (dx, dy) explains the changed pixels at (ys, xs)."""
    arrived, left = np.empty(ys.size, bool), np.empty(ys.size, bool)
    if ys.size == 0:
        return Explained(arrived, left, False)
    n_arrived, same, ref = _analysis.matches(b, a, ys, xs, -dx, -dy, arrived, -1)
    n_left, same_left, _ = _analysis.matches(a, b, ys, xs, dx, dy, left, ref)
    total = n_arrived + n_left
    content = total > 0 and not (same + same_left) / total > 0.9
    return Explained(arrived, left, content)


def _candidates(
    a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]
) -> set[tuple[int, int]]:
    """Translations worth trying: from row and column signatures, and phase correlation."""
    candidates = {(0, d) for d in _signature_votes(a, b, box, columns=False)}
    candidates |= {(d, 0) for d in _signature_votes(a, b, box, columns=True)}
    for dx, dy, step in _phase_peaks(a, b, box):
        # Peaks of a downsampled correlation are refined around their position.
        around = range(-step, step + 1)
        candidates |= {(dx + i, dy + j) for i in around for j in around}
    return {
        d for d in candidates if d != (0, 0) and abs(d[0]) < a.shape[1] and abs(d[1]) < a.shape[0]
    }


@dataclass(frozen=True, slots=True)
class Move:
    """The translation that best explains a region, and what it explains."""

    dx: int
    dy: int
    share: float  # of the region's changed pixels: where the moved content arrived
    mask: np.ndarray  # those pixels, region-relative
    ink: int  # pixels of content (not background) that arrived
    covered: int  # ... drawn over content of the base that stayed put


def find_move(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    box: tuple[int, int, int, int],
    known: tuple[tuple[int, int], ...] = (),
    candidates: Callable[[], set[tuple[int, int]]] | None = None,
) -> Move | None:
    """The translation that explains most of the region's changed pixels, if one carries
    content. Moves already found elsewhere in the pair are tried first: what pushed one block
    down usually pushed its neighbours by as much. ``candidates`` gives the translations to
    try (by default those the region suggests)."""
    x, y, w, h = box
    ys, xs = np.nonzero(changed)
    ys += y
    xs += x

    def score(d: tuple[int, int], step: int) -> tuple[float, float]:
        # Where content arrived decides; where it left breaks ties: in smooth gradients
        # several vectors match where content arrived, only the true one both ways.
        e = explained_share(a, b, ys[::step], xs[::step], *d)
        return e.share, e.left_share

    coarse = max(1, ys.size // 256)
    best = next((d for d in known if score(d, coarse)[0] >= MOVE_EXPLAINED), None)
    if best is None:
        tried = candidates() if candidates else _candidates(a, b, box)
        ranked = sorted(tried, key=lambda d: (abs(d[0]) + abs(d[1]), d))
        # Every candidate is scored on a sample of the changed pixels, the best few on more,
        # and only the winner on all of them; ties go to the shortest vector.
        for size, keep in ((256, 4), (4096, 1)):
            step = max(1, ys.size // size)
            scored = {d: score(d, step) for d in ranked}
            ranked = sorted(ranked, key=lambda d: (-scored[d][0], -scored[d][1]))[:keep]
            if step == 1:
                break
        if not ranked:
            return None
        best = ranked[0]
    dx, dy = best
    found = explained_share(a, b, ys, xs, dx, dy)
    arrived = found.arrived
    # Background matches background anywhere: a "move" that carries no content is none.
    if arrived.sum() < MOVE_MIN_PIXELS or not found.content:
        return None
    mask = np.zeros((h, w), bool)
    mask[ys[arrived] - y, xs[arrived] - x] = True
    # Content that arrived where the base had content of its own, which did not move along
    # (it is not found d further on): one element drawn over another.
    # Counted on a sample of at most 4096 of the arrived pixels, scaled back up.
    here = np.flatnonzero(arrived)
    step = max(1, here.size // 4096)
    here = here[::step]
    background = _background(a, box)
    py, px = ys[here], xs[here]
    ink_b = np.abs(b[py, px, :3].astype(np.int16) - background).max(axis=1) > INK
    ink_a = np.abs(a[py, px, :3].astype(np.int16) - background).max(axis=1) > INK
    covered = int((ink_b & ink_a & ~found.left[here]).sum()) * step
    return Move(dx, dy, found.share, mask, int(ink_b.sum()) * step, covered)


def accepted(move: Move | None, changed: np.ndarray) -> bool:
    """Whether a move explains the region: most of it, or part of it beside a band of
    inserted content that pushed it."""
    if move is None:
        return False
    return move.share >= MOVE_PARTIAL or _band(changed & ~move.mask, move.dy) is not None


def overlapping(move: Move | None) -> bool:
    """The moved content now covers content that stayed where it was."""
    return (
        move is not None
        and max(abs(move.dx), abs(move.dy)) >= OVERLAP_SHIFT
        and move.covered >= max(MOVE_MIN_PIXELS, OVERLAP * move.ink)
    )


def _background(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The commonest colour on the frame just around a region: what it sits on."""
    height, width = image.shape[:2]
    x0, y0, x1, y1 = _window(box, 2, width, height)
    window = image[y0:y1, x0:x1, :3]
    frame = np.concatenate([window[0], window[-1], window[:, 0], window[:, -1]]).astype(np.int32)
    packed = (frame[:, 0] << 16) | (frame[:, 1] << 8) | frame[:, 2]
    colours, counts = np.unique(packed, return_counts=True)
    common = int(colours[counts.argmax()])
    return np.array([common >> 16, (common >> 8) & 255, common & 255], np.int16)


def _band(rest: np.ndarray, dy: int) -> slice | None:
    """The rows at the top or bottom of a region, as tall as a vertical move, that hold what
    the move leaves unexplained: the content inserted there, which pushed the rest."""
    if not dy or not rest.any():
        return None
    reach = int(1.25 * abs(dy)) + 4
    total = rest.sum()
    if rest[:reach].sum() >= 0.9 * total:
        return slice(0, reach)
    if rest[-reach:].sum() >= 0.9 * total:
        return slice(rest.shape[0] - reach, rest.shape[0])
    return None


# ---- colour and content -----------------------------------------------------------------------


def _gradient(pixels: np.ndarray) -> np.ndarray:
    luma = pixels[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    if min(luma.shape) < 2:
        return np.zeros(luma.shape, np.float32)
    gy, gx = np.gradient(luma)
    magnitude: np.ndarray = np.hypot(gx, gy)
    return magnitude


def same_shapes(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """The edges in both images are where they were: only colours changed. Every strong edge
    of one image must be at least a faint edge of the other (a recolour can make an edge
    stronger or weaker, never move it)."""
    height, width = a.shape[:2]
    x0, y0, x1, y1 = _window(box, 2, width, height)
    ga, gb = _gradient(a[y0:y1, x0:x1]), _gradient(b[y0:y1, x0:x1])
    strong_a, strong_b = ga > EDGE_STRONG, gb > EDGE_STRONG
    if not strong_a.any() and not strong_b.any():
        return True
    kept = (strong_b & (ga > EDGE_FAINT)).sum() / max(strong_b.sum(), 1)
    found = (strong_a & (gb > EDGE_FAINT)).sum() / max(strong_a.sum(), 1)
    return bool(kept >= 0.95 and found >= 0.95)


def vanished(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """The base had content here and the candidate shows only flat background. Slivers less
    than 3 px across say nothing: glyphs re-rasterised a pixel off leave those behind."""
    x, y, w, h = box
    if min(w, h) < 3:
        return False
    after = b[y : y + h, x : x + w, :3].astype(np.float32)
    if after.std(axis=(0, 1)).max() >= 3:
        return False
    before = a[y : y + h, x : x + w, :3].astype(np.float32)
    return bool(before.std(axis=(0, 1)).max() > 12)


def image_lost(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """A detailed picture became mostly plain: an image that failed to load (a broken-image
    icon or its alt text at most is left) or was hidden."""
    x, y, w, h = box
    if w * h < 256:
        return False
    before = _colours(a[y : y + h, x : x + w])
    after = _colours(b[y : y + h, x : x + w])
    # A photo has many colours and none dominates; what is left has few, and one dominates.
    return before[0] >= 64 and before[1] < 0.5 and after[1] >= 0.6 and after[0] * 2 <= before[0]


def _colours(pixels: np.ndarray) -> tuple[int, float]:
    """How many colours an area has, and the share of the commonest."""
    flat = pixels[..., :3].reshape(-1, 3)
    packed = (flat[:, 0].astype(np.int32) << 16) | (flat[:, 1].astype(np.int32) << 8) | flat[:, 2]
    _, counts = np.unique(packed, return_counts=True)
    return int(counts.size), float(counts.max() / packed.size)


# ---- the whole pair ---------------------------------------------------------------------------


def _where(c: Change, width: int, height: int) -> str:
    if c.width >= width * 0.9 and c.height >= height * 0.9:
        return "the whole image"
    middle = c.y + c.height / 2
    vertical = (
        "near the top"
        if middle < height / 3
        else ("near the bottom" if middle > 2 * height / 3 else "in the middle")
    )
    return f"a {c.width}x{c.height} area at ({c.x}, {c.y}) {vertical}"


def _count(n: int, thing: str) -> str:
    return f"one {thing}" if n == 1 else f"{n} {thing}s"


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _direction(dx: int, dy: int) -> str:
    parts = []
    if dy:
        parts.append(f"{'down' if dy > 0 else 'up'} {abs(dy)} px")
    if dx:
        parts.append(f"{'right' if dx > 0 else 'left'} {abs(dx)} px")
    return " and ".join(parts)


def _examine(
    a: np.ndarray,
    b: np.ndarray,
    labels: np.ndarray,
    box: tuple[int, int, int, int],
    count: int,
    known: tuple[tuple[int, int], ...],
    candidates: Callable[[], set[tuple[int, int]]] | None = None,
) -> list[Change]:
    """The changes one region holds, relabelling the diff image's moved and noise pixels."""
    x, y, w, h = box
    view = labels[y : y + h, x : x + w]
    changed = (view == _native.LABEL_CHANGED) | (view == _native.LABEL_DARKER)
    if not changed.any():
        return []
    if is_noise(a, b, changed, box):
        view[changed] = _native.LABEL_NOISE
        return [Change(x, y, w, h, "noise", count)]
    split = candidates is None
    if candidates is None:
        # Computed when first needed, and shared with the region's parts (their windows lie
        # within the region's).
        candidates = functools.cache(lambda: _candidates(a, b, box))
    move = find_move(a, b, changed, box, known, candidates) if count >= MOVE_MIN_PIXELS else None
    note = "overlaps" if overlapping(move) else ""
    if move is not None and accepted(move, changed):
        dx, dy, explained = move.dx, move.dy, move.mask
        view[explained & changed] = _native.LABEL_MOVED
        rest = changed & ~explained
        found = [Change(x, y, w, h, "move", int((explained & changed).sum()), dx, dy, note=note)]
        if move.share < MOVE_EXPLAINED and rest.any():
            # What the move leaves unexplained must be the band of content that pushed it.
            band = _band(rest, dy)
            if band is None:
                view[explained & changed] = _native.LABEL_CHANGED
                return [Change(x, y, w, h, "content", count, note=note)]
            inserted = np.zeros_like(rest)
            inserted[band] = rest[band]
            ys, xs = np.nonzero(inserted)
            at_top = ys.min() + y == 0 and dy > 0
            found.append(
                Change(
                    x + int(xs.min()),
                    y + int(ys.min()),
                    int(np.ptp(xs)) + 1,
                    int(np.ptp(ys)) + 1,
                    "content",
                    int(rest.sum()),
                    note="inserted at the top" if at_top else "new content",
                )
            )
        return found
    if same_shapes(a, b, box):
        return [Change(x, y, w, h, "color", count)]
    if split:
        # One region may hold unrelated changes close together (a button recoloured just above
        # text that moved): its parts, where unchanged rows or columns separate them, are
        # examined one by one, and kept apart when any of them is more than "content".
        parts = [
            found
            for px, py, pw, ph in _parts(changed)
            for found in _examine(
                a,
                b,
                labels,
                (x + px, y + py, pw, ph),
                int(changed[py : py + ph, px : px + pw].sum()),
                known,
                candidates,
            )
        ]
        if any(c.kind != "content" or c.note for c in parts):
            return parts
    if vanished(a, b, box):
        note = "vanished"
    elif image_lost(a, b, box):
        note = "image lost"
    return [Change(x, y, w, h, "content", count, note=note)]


def _parts(changed: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Boxes (region-relative) of the bands of ``changed`` that at least SPLIT_GAP unchanged
    rows (or, failing that, columns) separate; fewer than two: nothing to split."""
    for axis in (1, 0):
        used = changed.any(axis=axis)
        lines = np.flatnonzero(used)
        breaks = np.flatnonzero(np.diff(lines) > SPLIT_GAP)
        if breaks.size == 0:
            continue
        starts = np.concatenate([[lines[0]], lines[breaks + 1]])
        ends = np.concatenate([lines[breaks], [lines[-1]]]) + 1
        boxes = []
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            band = changed[lo:hi] if axis == 1 else changed[:, lo:hi]
            across = np.flatnonzero(band.any(axis=0 if axis == 1 else 1))
            first, last = int(across[0]), int(across[-1]) + 1
            if axis == 1:
                boxes.append((first, lo, last - first, hi - lo))
            else:
                boxes.append((lo, first, hi - lo, last - first))
        return boxes
    return []


def analyze(
    a: np.ndarray,
    b: np.ndarray,
    labels: np.ndarray,
    regions: list[tuple[int, int, int, int, int]],
    *,
    compared_pixels: int,
    changed_pixels: int,
) -> Analysis:
    """Explain a changed pair. ``labels`` is the comparison's label plane; moved and noise
    pixels are relabelled in it so the diff image tells them apart."""
    height, width = labels.shape
    overlap_w, overlap_h = min(a.shape[1], b.shape[1]), min(a.shape[0], b.shape[0])
    changes: list[Change] = []
    if (a.shape[0], a.shape[1]) != (b.shape[0], b.shape[1]):
        changes.append(
            Change(
                0,
                0,
                width,
                height,
                "size",
                (width * height) - overlap_w * overlap_h,
                note=f"{a.shape[1]}x{a.shape[0]} -> {b.shape[1]}x{b.shape[0]}",
            )
        )
    # Each region's part inside both images; the rest is the size change.
    boxes = []
    for x, y, w, h, count in sorted(regions, key=lambda r: -r[4]):
        cw, ch = min(x + w, overlap_w) - x, min(y + h, overlap_h) - y
        if cw > 0 and ch > 0:
            boxes.append((x, y, cw, ch, count))
    examined, skipped = boxes[:MAX_ANALYSED], boxes[MAX_ANALYSED:]
    a, b = a[:overlap_h, :overlap_w], b[:overlap_h, :overlap_w]  # what both images show
    changes += [Change(x, y, w, h, "content", n, note="not examined") for x, y, w, h, n in skipped]
    known: dict[tuple[int, int], None] = {}  # moves found so far, an ordered set
    for x, y, w, h, count in examined:
        found = _examine(a, b, labels, (x, y, w, h), count, tuple(known))
        known.update(((c.dx or 0, c.dy or 0), None) for c in found if c.kind == "move")
        changes.extend(found)
    if len(changes) == 1 and changes[0].kind == "noise":
        changes = _nudged(a, b, labels, changes[0])
    return _conclude(changes, a, b, width, height, compared_pixels, changed_pixels)


def _nudged(a: np.ndarray, b: np.ndarray, labels: np.ndarray, c: Change) -> list[Change]:
    """A lone region explained as sub-pixel motion may be one block moved by a whole pixel:
    that is a layout change, while a sub-pixel offset of the page moves many regions."""
    box = (c.x, c.y, c.width, c.height)
    view = labels[c.y : c.y + c.height, c.x : c.x + c.width]
    changed = view == _native.LABEL_NOISE
    move = find_move(a, b, changed, box) if c.changed_pixels >= MOVE_MIN_PIXELS else None
    if move is None or move.share < MOVE_EXPLAINED or max(abs(move.dx), abs(move.dy)) > 1:
        return [c]
    view[changed] = _native.LABEL_MOVED
    return [replace(c, kind="move", dx=move.dx, dy=move.dy)]


def _settle(changes: list[Change]) -> list[Change]:
    """Judgements that need the whole pair: content just above what moved down, and as tall
    as the move, is what was inserted and pushed it down."""
    moves = [c for c in changes if c.kind == "move"]
    vertical = {c.dy for c in moves if not c.dx}
    if len(vertical) != 1 or (dy := vertical.pop() or 0) <= 0:
        return changes
    top = min(c.y for c in moves)
    bottom = max(c.y + c.height for c in changes)
    settled = []
    for c in changes:
        if c.kind != "content":
            settled.append(c)
        elif c.y + c.height <= top + 2 and abs(c.height - dy) <= max(4, dy // 4):
            settled.append(replace(c, note="inserted"))
        elif c.y >= bottom - dy - 2:
            # Content at the bottom edge went below the fold, pushed by the move: not lost.
            settled.append(replace(c, note="pushed out of view"))
        else:
            settled.append(c)
    return settled


def _conclude(
    changes: list[Change],
    a: np.ndarray,
    b: np.ndarray,
    width: int,
    height: int,
    compared_pixels: int,
    changed_pixels: int,
) -> Analysis:
    changes = _settle(changes)
    real = [c for c in changes if c.kind != "noise"]
    ordered = tuple(sorted(changes, key=lambda c: (c.y, c.x)))
    if not real:
        return Analysis(
            "noise",
            True,
            "noise",
            0.9,
            "Rendering noise only.",
            f"All {_count(len(changes), 'changed region')} are explained by sub-pixel movement or "
            "re-rasterisation of the same content (anti-aliasing, smoothing); nothing a person "
            "would see as a change.",
            ordered,
        )
    weight: dict[str, int] = {}
    for c in real:
        # Inserted content is part of the layout shift it caused.
        part = "move" if c.note in (*INSERTED, "pushed out of view") else c.kind
        weight[part] = weight.get(part, 0) + c.changed_pixels
    total = sum(weight.values())
    kind_of: dict[str, Kind] = {
        "move": "layout_shift",
        "color": "color",
        "content": "content",
        "size": "size",
    }
    top = max(weight, key=lambda k: weight[k])
    kind: Kind = kind_of[top] if weight[top] >= 0.8 * total else "content"
    sentences = _sentences(real, width, height)
    noise_count = len(changes) - len(real)
    if noise_count:
        verb = "differs" if noise_count == 1 else "differ"
        other = _upper(_count(noise_count, "other region"))
        sentences.append(f"{other} {verb} only by rendering noise.")
    elif len(real) == 1:
        sentences.append("Nothing else changed.")
    reasoning = " ".join(sentences[:6])
    if len(sentences) > 6:
        reasoning += f" ({len(sentences) - 6} more.)"
    verdict: Verdict = "likely_intended"
    confidence = {"layout_shift": 0.8, "color": 0.7, "size": 0.6, "content": 0.6}[kind]
    summary = _summary(kind, real, width, height)
    signal = _regression(real, width, height)
    if signal is not None:
        verdict, confidence = "likely_regression", 0.75
        summary, why = signal
        reasoning = f"{why} {reasoning}"
    elif kind == "content" and compared_pixels and changed_pixels / compared_pixels > 0.3:
        verdict, confidence = "likely_regression", 0.6
        reasoning = (
            f"Most of the image changed ({changed_pixels / compared_pixels:.0%} of its "
            "pixels), which is rarely what a change meant to do. " + reasoning
        )
    return Analysis(kind, False, verdict, confidence, summary, reasoning, ordered)


def _regression(real: list[Change], width: int, height: int) -> tuple[str, str] | None:
    """The strongest sign that a change broke something: (summary, sentence), or None."""
    lost = [c for c in real if c.note == "image lost"]
    if lost:
        where = _where(lost[0], width, height)
        return (
            "An image is missing or broken.",
            f"A detailed picture in {where} became a mostly plain area: an image that did not "
            "load, or was hidden.",
        )
    over = [c for c in real if c.note == "overlaps"]
    if over:
        c = over[0]
        moved = f" moved {_direction(c.dx or 0, c.dy or 0)} and" if c.kind == "move" else ""
        return (
            "Elements overlap.",
            f"Content in {_where(c, width, height)}{moved} is now drawn over content that "
            "stayed where it was.",
        )
    gone = [c for c in real if c.note == "vanished"]
    if not gone:
        return None
    # Pieces lost along one straight edge: what was below (or above) a line was cut off.
    for lines in ([c.y for c in gone], [c.y + c.height for c in gone]):
        line = max(set(lines), key=lines.count)
        if len(gone) >= 2 and lines.count(line) >= 0.6 * len(gone):
            return (
                "Content was cut off.",
                f"Content disappeared in {_count(len(gone), 'place')} along one line (y={line}): "
                "text or an element clipped by its box, or hidden.",
            )
    return (
        f"Content disappeared from {_count(len(gone), 'region')}.",
        f"Content disappeared: {_where(gone[0], width, height)} shows only background now.",
    )


INSERTED = ("inserted", "inserted at the top")


def _sentences(real: list[Change], width: int, height: int) -> list[str]:
    """The reasoning, largest first: inserted content with the moves it caused, other moves
    grouped by vector, then everything else region by region."""
    by_size = sorted(real, key=lambda c: -c.changed_pixels)
    inserted = [c for c in by_size if c.note in INSERTED]
    moves: dict[tuple[int, int], list[Change]] = {}
    for c in by_size:
        if c.kind == "move":
            moves.setdefault((c.dx or 0, c.dy or 0), []).append(c)
    sentences = []
    for c in inserted:
        place = "at the top" if c.y == 0 else f"at y={c.y}"
        pushed = moves.pop((0, c.height), None) or moves.pop(
            next((d for d in moves if d[0] == 0 and d[1] > 0), (0, 0)), None
        )
        sentence = f"New content {c.height} px tall was inserted {place}"
        if pushed:
            areas = f"{len(pushed)} areas" if len(pushed) > 1 else "the content"
            sentence += f" and pushed {areas} below it {_direction(0, pushed[0].dy or 0)}"
        sentences.append(sentence + ".")
    for (dx, dy), group in moves.items():
        if len(group) == 1:
            where = _where(group[0], width, height)
            sentences.append(f"The content of {where} moved {_direction(dx, dy)}.")
        else:
            largest = _where(group[0], width, height)
            sentences.append(
                f"{len(group)} areas moved {_direction(dx, dy)}, the largest {largest}."
            )
    pushed_out = [c for c in by_size if c.note == "pushed out of view"]
    if pushed_out:
        sentences.append("Content at the bottom edge went out of view, pushed down by the move.")
    for c in by_size:
        if c.kind == "move" or c.note in (
            *INSERTED,
            "pushed out of view",
            "vanished",
            "image lost",
        ):
            continue  # said above, or in the verdict's own sentence
        where = _where(c, width, height)
        if c.kind == "color":
            sentences.append(f"Colours changed in {where}; the shapes stayed where they were.")
        elif c.kind == "size":
            sentences.append(
                f"The image size changed ({c.note}); the area outside the smaller one is new."
            )
        else:
            sentences.append(f"Content changed in {where}.")
    return sentences


def _summary(kind: Kind, real: list[Change], width: int, height: int) -> str:
    if kind == "layout_shift":
        moves = [c for c in real if c.kind == "move"]
        main = max(moves, key=lambda c: c.changed_pixels)
        inserted = [c for c in real if c.note in INSERTED]
        prefix = ""
        if inserted:
            where = "at the top" if min(c.y for c in inserted) == 0 else "above it"
            prefix = f"Content inserted {where}; "
        moved = f"content moved {_direction(main.dx or 0, main.dy or 0)}."
        return prefix + moved if prefix else _upper(moved)
    if kind == "color":
        colours = sum(c.kind == "color" for c in real)
        moves = [c for c in real if c.kind == "move"]
        also = ""
        if moves:
            main = max(moves, key=lambda c: c.changed_pixels)
            also = f"; content moved {_direction(main.dx or 0, main.dy or 0)}"
        return f"Colours changed in {_count(colours, 'region')}{also}."
    if kind == "size":
        return "The image size changed."
    return f"Content changed in {_count(len(real), 'region')}."
