from collections.abc import Iterable
from typing import Literal, overload

import numpy as np

def is_noise(
    a: np.ndarray,
    b: np.ndarray,
    mask: np.ndarray,
    x: int,
    y: int,
    pad: int,
    rule: tuple[float, float, float, float, float, float, float, int],
) -> bool: ...
def noise_run(
    a: np.ndarray,
    b: np.ndarray,
    labels: np.ndarray,
    boxes: list[tuple[int, int, int, int]],
    start: int,
    pad: int,
    rule: tuple[float, float, float, float, float, float, float, int],
    changed: tuple[int, int],
    noise: int,
    threads: int = ...,
) -> tuple[int, bytes]: ...
def blur(src: np.ndarray, x0: int, y0: int, out: np.ndarray) -> None: ...
def motion_residual(
    a: np.ndarray,
    b: np.ndarray,
    window: tuple[int, int, int, int],
    inside: tuple[int, int, int, int],
    trimmed: tuple[int, int, int, int],
    still: float,
    strips_above: int = ...,
) -> tuple[float, float, float]: ...
def tile_residuals(
    a: np.ndarray,
    b: np.ndarray,
    tiles: list[tuple[int, int, int, int, int, int, float]],
    pad: int,
    still: float,
) -> int: ...
def envelope(
    a: np.ndarray, b: np.ndarray, mask: np.ndarray, x: int, y: int, skip_edges: bool
) -> bool: ...
def votes(
    a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int], least: int, columns: bool
) -> list[int]: ...
def matches(
    here: np.ndarray,
    there: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    dx: int,
    dy: int,
    ok: np.ndarray,
    ref: int,
) -> tuple[int, int, int]: ...
def straight_run(mask: np.ndarray, length: int, unset: bytes = ...) -> bool: ...
def ink_bounds(
    image: np.ndarray,
    x: int,
    y: int,
    w: int,
    h: int,
    colour: tuple[int, int, int],
    ink: int,
    left: np.ndarray,
    right: np.ndarray,
) -> int: ...
@overload
def rank(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    tried: Iterable[tuple[int, int]],
    exact: bool,
    keep: Literal[False] = False,
) -> tuple[int, int] | None: ...
@overload
def rank(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    tried: Iterable[tuple[int, int]],
    exact: bool,
    keep: Literal[True],
) -> tuple[tuple[int, int] | None, list[tuple[int, int]]]: ...
def carried(
    a: np.ndarray,
    b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    arrived: np.ndarray,
    left: np.ndarray,
    dx: int,
    dy: int,
    colour: tuple[int, int, int],
    level: int,
    tolerance: int,
) -> tuple[int, int]: ...
def frame_colour(src: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> tuple[int, int, int]: ...
def flips(
    a: np.ndarray,
    b: np.ndarray,
    mask: np.ndarray,
    x: int,
    y: int,
    share: float,
    contrast: float,
    plain: float,
    need: int,
) -> int: ...
def pixels(mask: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> None: ...
def spread(src: np.ndarray, x: int, y: int, w: int, h: int) -> float: ...
def tile_shifts(
    a: np.ndarray,
    b: np.ndarray,
    lo_a: np.ndarray,
    hi_a: np.ndarray,
    lo_b: np.ndarray,
    hi_b: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    tiles: np.ndarray,
    totals: np.ndarray,
    order: list[tuple[int, int]],
    tolerance: int,
    misses: float,
    near: float,
) -> list[tuple[int, int, int, bool]] | None: ...
def glyph_tiles(
    a: np.ndarray,
    b: np.ndarray,
    mask: np.ndarray,
    x: int,
    y: int,
    order: list[tuple[int, int]],
    rule: tuple[int, int, int, int, int, int, float, float, float, float, float],
) -> bool: ...
def recoloured(
    a: np.ndarray, b: np.ndarray, mask: np.ndarray, x: int, y: int
) -> tuple[int, int]: ...
def one_fill(
    a: np.ndarray, b: np.ndarray, mask: np.ndarray, x: int, y: int, samples: int
) -> tuple[int, int]: ...
def edges(
    a: np.ndarray, b: np.ndarray, x0: int, y0: int, x1: int, y1: int, strong: float, faint: float
) -> tuple[int, int, int, int]: ...
def colours(src: np.ndarray, x: int, y: int, w: int, h: int) -> tuple[int, int]: ...
def ranges(area: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None: ...
def grey_pair(
    a: np.ndarray, b: np.ndarray, x0: int, y0: int, step: int, out: np.ndarray
) -> None: ...
def cross_power(spectra: np.ndarray, out: np.ndarray) -> None: ...
def peaks(corr: np.ndarray, count: int) -> list[tuple[int, int]]: ...
