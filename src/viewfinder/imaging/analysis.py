"""What changed, in words: rendering noise, moves, colour changes and content changes, with a
verdict a reviewer can start from. Offline, deterministic, no model.

Each changed region is examined on its own, in this order:
- noise: both images are blurred a little and the base is shifted by the sub-pixel motion that
  best explains the candidate (Lucas-Kanade over the region and 32 px around it); when what
  remains is small everywhere, the region is re-rasterisation noise (sub-pixel offsets, tiny
  rotations, smoothing). The surroundings pin the motion to zero when only the region changed,
  so a real local change is never explained away as motion.
- move: a translation (dx, dy) under which the candidate equals the base exactly on the
  region's changed pixels, found from row and column signatures or phase correlation.
- color: the shapes (edges) are where they were, only colours differ.
- content: anything else; content that vanished into background is a regression signal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from viewfinder.imaging import _native

Kind = Literal["identical", "noise", "layout_shift", "color", "content", "size"]
Verdict = Literal["noise", "likely_intended", "likely_regression"]

PAD = 32  # context around a region for the motion estimate
NOISE_MOVING = 41.0  # largest residual of a region whose surroundings moved sub-pixel
NOISE_STILL = 30.0  # ... and of a region whose surroundings did not move
STILL = 0.03  # px of estimated motion below which a region is taken as not moving
MOVE_EXPLAINED = 0.9  # share of changed pixels a translation must explain to be a move
MOVE_PARTIAL = 0.4  # ... to be a move beside a band of inserted content
MOVE_MIN_PIXELS = 32  # smaller regions are never taken as moves: too easy to match by chance
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


def _rgb(pixels: np.ndarray) -> np.ndarray:
    return pixels[..., :3]


def _blur(a: np.ndarray) -> np.ndarray:
    """A 3x3 box blur applied twice: the separable [1 2 3 2 1] / 9 kernel, edges repeated."""
    p = np.pad(a, ((2, 2), (2, 2), (0, 0)), mode="edge")
    rows = p[:-4] + 2 * p[1:-3] + 3 * p[2:-2] + 2 * p[3:-1] + p[4:]
    both = rows[:, :-4] + 2 * rows[:, 1:-3] + 3 * rows[:, 2:-2] + 2 * rows[:, 3:-1] + rows[:, 4:]
    blurred: np.ndarray = both * np.float32(1 / 81)
    return blurred


def _sample(p: np.ndarray, t: float, axis: int, size: int) -> np.ndarray:
    """Along ``axis`` of an array padded by 2: values at position - t, |t| <= 1, linear."""
    k = math.floor(-t)
    f = np.float32(-t - k)
    lo = [slice(None)] * p.ndim
    hi = [slice(None)] * p.ndim
    lo[axis] = slice(2 + k, 2 + k + size)
    hi[axis] = slice(3 + k, 3 + k + size)
    return p[tuple(lo)] * (1 - f) + p[tuple(hi)] * f


def _shift(a: np.ndarray, tx: float, ty: float) -> np.ndarray:
    """a sampled at (x - tx, y - ty) for |tx|, |ty| <= 1, bilinear, edges repeated."""
    h, w = a.shape[:2]
    p = np.pad(a, ((2, 2), (2, 2), (0, 0)), mode="edge")
    across = _sample(p, tx, 1, w)
    return _sample(across, ty, 0, h)


def _window(box: tuple[int, int, int, int], pad: int, w: int, h: int) -> tuple[int, int, int, int]:
    x, y, bw, bh = box
    return max(x - pad, 0), max(y - pad, 0), min(x + bw + pad, w), min(y + bh + pad, h)


class Blurred:
    """Both images blurred once over the area the regions' windows cover."""

    def __init__(self, a: np.ndarray, b: np.ndarray, area: tuple[int, int, int, int]) -> None:
        self.x0, self.y0, x1, y1 = area
        self.height, self.width = a.shape[:2]
        self.a = _blur(a[self.y0 : y1, self.x0 : x1, :3].astype(np.float32))
        self.b = _blur(b[self.y0 : y1, self.x0 : x1, :3].astype(np.float32))

    def window(self, x0: int, y0: int, x1: int, y1: int) -> tuple[np.ndarray, np.ndarray]:
        ys, xs = slice(y0 - self.y0, y1 - self.y0), slice(x0 - self.x0, x1 - self.x0)
        return self.a[ys, xs], self.b[ys, xs]


def noise_residual(blurred: Blurred, box: tuple[int, int, int, int]) -> tuple[float, float]:
    """(largest residual inside the box after motion compensation, motion in px)."""
    height, width = blurred.height, blurred.width
    x0, y0, x1, y1 = _window(box, PAD, width, height)
    wa, wb = blurred.window(x0, y0, x1, y1)
    if min(wa.shape[:2]) < 2:
        return float(np.abs(wb - wa).max(initial=0.0)), 0.0
    gy, gx = np.gradient(wa, axis=(0, 1))
    d = wb - wa
    m = np.array(
        [[(gx * gx).sum(), (gx * gy).sum()], [(gx * gy).sum(), (gy * gy).sum()]], np.float64
    )
    m += np.eye(2) * (1e-3 + 1e-4 * np.trace(m))  # flat windows: no motion, not a wild one
    v = -np.array([(gx * d).sum(), (gy * d).sum()], np.float64)
    tx, ty = np.clip(np.linalg.solve(m, v), -1.0, 1.0)
    residual = np.abs(wb - _shift(wa, float(tx), float(ty))).max(axis=2)
    # A sub-pixel shift uncovers up to a pixel of new content along the image's own edges.
    x, y, bw, bh = box
    inside = residual[y - y0 : y - y0 + bh, x - x0 : x - x0 + bw]
    motion = float(np.hypot(tx, ty))
    if motion >= STILL:
        top, left = max(2 - y, 0), max(2 - x, 0)
        inside = inside[top : min(bh, height - 2 - y), left : min(bw, width - 2 - x)]
    return float(inside.max(initial=0.0)), motion


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
    x, y, _, _ = box
    ys, xs = np.nonzero(changed)
    ys, xs = ys + y, xs + x
    height, width = a.shape[:2]
    if skip_edges:  # content uncovered along the image's edges by a sub-pixel shift
        keep = (ys > 1) & (ys < height - 2) & (xs > 1) & (xs < width - 2)
        ys, xs = ys[keep], xs[keep]
    steps = (-1, 0, 1)
    ny = np.clip(ys[:, None] + np.repeat(steps, 3)[None, :], 0, height - 1)
    nx = np.clip(xs[:, None] + np.tile(steps, 3)[None, :], 0, width - 1)
    ours_a = a[ys, xs, :3].astype(np.int16)
    ours_b = b[ys, xs, :3].astype(np.int16)
    around_a = a[ny, nx, :3].astype(np.int16)
    around_b = b[ny, nx, :3].astype(np.int16)
    b_in_a = ((ours_b >= around_a.min(1) - 2) & (ours_b <= around_a.max(1) + 2)).all(1)
    a_in_b = ((ours_a >= around_b.min(1) - 2) & (ours_a <= around_b.max(1) + 2)).all(1)
    return bool((b_in_a | a_in_b).all())


def is_noise(
    a: np.ndarray,
    b: np.ndarray,
    blurred: Blurred,
    changed: np.ndarray,
    box: tuple[int, int, int, int],
) -> bool:
    residual, motion = noise_residual(blurred, box)
    if residual > (NOISE_STILL if motion < STILL else NOISE_MOVING):
        return False
    return in_envelope(a, b, changed, box, skip_edges=motion >= STILL)


# ---- moves ------------------------------------------------------------------------------------


def _signature_votes(
    cand: np.ndarray, base: np.ndarray, lo: int, hi: int, search: int
) -> list[int]:
    """Offsets d (in rows) for which rows of ``cand`` in [lo, hi) equal rows of ``base`` at
    row - d, most voted first. Rows of one flat colour say nothing and are skipped."""
    index: dict[int, list[int]] = {}
    for row in range(max(lo - search, 0), min(hi + search, base.shape[0])):
        line = base[row]
        if (line == line[0]).all():
            continue
        index.setdefault(hash(line.tobytes()), []).append(row)
    votes: dict[int, int] = {}
    for row in range(lo, hi):
        line = cand[row]
        if (line == line[0]).all():
            continue
        for match in index.get(hash(line.tobytes()), ()):
            if match != row:
                votes[row - match] = votes.get(row - match, 0) + 1
    return sorted(votes, key=lambda d: -votes[d])[:3]


def _phase_peaks(
    a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]
) -> list[tuple[int, int, int]]:
    """Translations suggested by phase correlation of the region's surroundings (coarse for
    large regions, refined later by exact matching)."""
    height, width = a.shape[:2]
    x, y, w, h = box
    x0, y0, x1, y1 = _window(box, max(min(max(w, h), 64), 8), width, height)
    step = max(1, int(np.ceil(max(x1 - x0, y1 - y0) / 512)))
    la = a[y0:y1:step, x0:x1:step, :3].astype(np.float32).mean(axis=2)
    lb = b[y0:y1:step, x0:x1:step, :3].astype(np.float32).mean(axis=2)
    if la.size < 64:
        return []
    spectrum = np.fft.rfft2(lb - lb.mean()) * np.conj(np.fft.rfft2(la - la.mean()))
    spectrum /= np.abs(spectrum) + 1e-9
    corr = np.fft.irfft2(spectrum, s=la.shape)
    corr[0, 0] = -np.inf  # no motion is what unchanged surroundings vote for
    peaks = []
    for flat in np.argsort(corr, axis=None)[::-1][:4]:
        py, px = np.unravel_index(int(flat), corr.shape)
        dy = py if py <= corr.shape[0] // 2 else py - corr.shape[0]
        dx = px if px <= corr.shape[1] // 2 else px - corr.shape[1]
        peaks.append((int(dx) * step, int(dy) * step, step - 1))
    return peaks


def explained_share(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    box: tuple[int, int, int, int],
    dx: int,
    dy: int,
) -> tuple[float, np.ndarray, bool]:
    """Share of the region's changed pixels (``changed`` is region-relative) where the
    candidate shows what the base had at p - d, the mask of those pixels, and whether the move
    carries content: where the content arrived, or, for the place it left, the base's content
    reappearing in the candidate at p + d. Flat background alone matches anywhere."""
    x, y, w, h = box
    ys, xs = np.nonzero(changed)
    if ys.size == 0:
        return 0.0, np.zeros((h, w), bool), False
    ys, xs = ys + y, xs + x
    arrived, arrived_colours = _matches(b, a, ys, xs, -dx, -dy)
    left, left_colours = _matches(a, b, ys, xs, dx, dy)
    ok = arrived
    mask = np.zeros((h, w), bool)
    mask[ys[ok] - y, xs[ok] - x] = True
    colours = np.concatenate([arrived_colours, left_colours])
    content = colours.size > 0 and not (colours == colours[0]).all(axis=1).mean() > 0.9
    return float(ok.mean()), mask, bool(content)


def _matches(
    here: np.ndarray, there: np.ndarray, ys: np.ndarray, xs: np.ndarray, dx: int, dy: int
) -> tuple[np.ndarray, np.ndarray]:
    """Which pixels of ``here`` equal ``there`` at (x + dx, y + dy), and their colours."""
    height, width = there.shape[:2]
    ty, tx = ys + dy, xs + dx
    inside = (ty >= 0) & (ty < height) & (tx >= 0) & (tx < width)
    ok = np.zeros(ys.size, bool)
    mine = here[ys[inside], xs[inside], :3].astype(np.int16)
    ok[inside] = (np.abs(mine - there[ty[inside], tx[inside], :3].astype(np.int16)) <= 3).all(1)
    return ok, here[ys[ok], xs[ok], :3]


def find_move(
    a: np.ndarray, b: np.ndarray, changed: np.ndarray, box: tuple[int, int, int, int]
) -> tuple[int, int, float, np.ndarray] | None:
    """The translation that explains most of the region's changed pixels, if any does."""
    x, y, w, h = box
    search = max(h, w, 64)
    rows_a = a[:, x : x + w, :3]
    rows_b = b[:, x : x + w, :3]
    candidates = {(0, d) for d in _signature_votes(rows_b, rows_a, y, y + h, search)}
    cols_a = np.ascontiguousarray(a[y : y + h, :, :3].transpose(1, 0, 2))
    cols_b = np.ascontiguousarray(b[y : y + h, :, :3].transpose(1, 0, 2))
    candidates |= {(d, 0) for d in _signature_votes(cols_b, cols_a, x, x + w, search)}
    for dx, dy, step in _phase_peaks(a, b, box):
        # Peaks of a downsampled correlation are refined around their position.
        around = range(-step, step + 1)
        candidates |= {(dx + i, dy + j) for i in around for j in around}
    candidates = {
        d for d in candidates if d != (0, 0) and abs(d[0]) < a.shape[1] and abs(d[1]) < a.shape[0]
    }
    if not candidates:
        return None
    # Score every candidate on a sample of the changed pixels; only the best on all of them.
    sample = changed
    if changed.sum() > 4096:
        keep = np.zeros(changed.size, bool)
        keep[np.flatnonzero(changed)[:: int(changed.sum() // 2048)]] = True
        sample = keep.reshape(changed.shape)
    scored = {d: explained_share(a, b, sample, box, *d)[0] for d in candidates}
    dx, dy = max(scored, key=lambda d: scored[d])
    share, mask, content = explained_share(a, b, changed, box, dx, dy)
    # Background matches background anywhere: a "move" that carries no content is none.
    if mask.sum() < MOVE_MIN_PIXELS or not content:
        return None
    if share < MOVE_PARTIAL and _band(changed & ~mask, dy) is None:
        return None
    return dx, dy, share, mask


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


def _edges(pixels: np.ndarray) -> np.ndarray:
    luma = pixels[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    if min(luma.shape) < 2:
        return np.zeros(luma.shape, bool)
    gy, gx = np.gradient(luma)
    strong: np.ndarray = np.hypot(gx, gy) > 24
    return strong


def same_shapes(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """The edges in both images are exactly where they were: only colours changed."""
    height, width = a.shape[:2]
    x0, y0, x1, y1 = _window(box, 2, width, height)
    ea, eb = _edges(a[y0:y1, x0:x1]), _edges(b[y0:y1, x0:x1])
    if not ea.any() and not eb.any():
        return True
    kept = (eb & ea).sum() / max(eb.sum(), 1)
    found = (ea & eb).sum() / max(ea.sum(), 1)
    return bool(kept >= 0.95 and found >= 0.95)


def vanished(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """The base had content here and the candidate shows only flat background."""
    x, y, w, h = box
    before = a[y : y + h, x : x + w, :3].astype(np.float32)
    after = b[y : y + h, x : x + w, :3].astype(np.float32)
    return bool(before.std(axis=(0, 1)).max() > 12 and after.std(axis=(0, 1)).max() < 3)


# ---- the whole pair ---------------------------------------------------------------------------


def _where(c: Change, width: int, height: int) -> str:
    if c.width >= width * 0.9 and c.height >= height * 0.9:
        return "across the whole image"
    vertical = (
        "top"
        if c.y + c.height / 2 < height / 3
        else ("bottom" if c.y + c.height / 2 > 2 * height / 3 else "middle")
    )
    return f"a {c.width}x{c.height} area at ({c.x}, {c.y}), {vertical} of the image"


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
    blurred: Blurred,
    labels: np.ndarray,
    box: tuple[int, int, int, int],
    count: int,
) -> list[Change]:
    """The changes one region holds, relabelling the diff image's moved and noise pixels."""
    x, y, w, h = box
    view = labels[y : y + h, x : x + w]
    changed = (view == _native.LABEL_CHANGED) | (view == _native.LABEL_DARKER)
    if not changed.any():
        return []
    if is_noise(a, b, blurred, changed, box):
        view[changed] = _native.LABEL_NOISE
        return [Change(x, y, w, h, "noise", count)]
    move = find_move(a, b, changed, box) if count >= MOVE_MIN_PIXELS else None
    if move is not None:
        dx, dy, share, explained = move
        view[explained & changed] = _native.LABEL_MOVED
        rest = changed & ~explained
        found = [Change(x, y, w, h, "move", int((explained & changed).sum()), dx, dy)]
        if share < MOVE_EXPLAINED and rest.any():
            # What the move leaves unexplained must be the band of content that pushed it.
            band = _band(rest, dy)
            if band is None:
                view[explained & changed] = _native.LABEL_CHANGED
                return [Change(x, y, w, h, "content", count)]
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
    return [Change(x, y, w, h, "content", count, note="vanished" if vanished(a, b, box) else "")]


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
    if examined:
        windows = [_window(box[:4], PAD, overlap_w, overlap_h) for box in examined]
        area = (
            min(w[0] for w in windows),
            min(w[1] for w in windows),
            max(w[2] for w in windows),
            max(w[3] for w in windows),
        )
        blurred = Blurred(a, b, area)
        for x, y, w, h, count in examined:
            changes.extend(_examine(a, b, blurred, labels, (x, y, w, h), count))
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
    if move is None or move[2] < MOVE_EXPLAINED or max(abs(move[0]), abs(move[1])) > 1:
        return [c]
    view[changed] = _native.LABEL_MOVED
    return [replace(c, kind="move", dx=move[0], dy=move[1])]


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
            f"All {len(changes)} changed region(s) are explained by sub-pixel movement or "
            "re-rasterisation of the same content (anti-aliasing, smoothing); nothing a person "
            "would see as a change.",
            ordered,
        )
    weight: dict[str, int] = {}
    for c in real:
        # Inserted content is part of the layout shift it caused.
        part = (
            "move"
            if c.note in ("inserted", "inserted at the top", "pushed out of view")
            else c.kind
        )
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
    sentences = [_sentence(c, width, height) for c in sorted(real, key=lambda c: -c.changed_pixels)]
    noise_count = len(changes) - len(real)
    if noise_count:
        sentences.append(f"{noise_count} other region(s) differ only by rendering noise.")
    elif len(real) == 1:
        sentences.append("Nothing else changed.")
    reasoning = " ".join(sentences[:6])
    if len(sentences) > 6:
        reasoning += f" ({len(sentences) - 6} more.)"
    verdict: Verdict = "likely_intended"
    confidence = {"layout_shift": 0.8, "color": 0.7, "size": 0.6, "content": 0.6}[kind]
    gone = [c for c in real if c.note == "vanished"]
    if gone:
        verdict, confidence = "likely_regression", 0.75
        reasoning = (
            f"Content disappeared: {_where(gone[0], width, height)} shows only background "
            "now. " + reasoning
        )
    elif kind == "content" and compared_pixels and changed_pixels / compared_pixels > 0.3:
        verdict, confidence = "likely_regression", 0.6
        reasoning = (
            f"Most of the image changed ({changed_pixels / compared_pixels:.0%} of its "
            "pixels), which is rarely what a change meant to do. " + reasoning
        )
    return Analysis(
        kind, False, verdict, confidence, _summary(kind, real, width, height), reasoning, ordered
    )


def _sentence(c: Change, width: int, height: int) -> str:
    where = _where(c, width, height)
    if c.kind == "move":
        return f"The content of {where} moved {_direction(c.dx or 0, c.dy or 0)}."
    if c.kind == "color":
        return f"Colours changed in {where}; the shapes stayed where they were."
    if c.kind == "size":
        return f"The image size changed ({c.note}); the area outside the smaller one is new."
    if c.note in ("inserted", "inserted at the top"):
        place = "at the top" if c.y == 0 else f"at y={c.y}"
        return f"New content was inserted {place} ({c.height} px tall)."
    return f"Content changed in {where}."


def _summary(kind: Kind, real: list[Change], width: int, height: int) -> str:
    if kind == "layout_shift":
        moves = [c for c in real if c.kind == "move"]
        main = max(moves, key=lambda c: c.changed_pixels)
        inserted = [c for c in real if c.note in ("inserted", "inserted at the top")]
        prefix = ""
        if inserted:
            where = "at the top" if min(c.y for c in inserted) == 0 else "above it"
            prefix = f"Content inserted {where}; "
        return f"{prefix}content moved {_direction(main.dx or 0, main.dy or 0)}."
    if kind == "color":
        return f"Colour change in {len(real)} region(s)."
    if kind == "size":
        return "The image size changed."
    return f"Content changed in {len(real)} region(s)."
