"""Mask rectangles: areas left out of a comparison, from both the numerator and denominator."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from viewfinder.errors import InvalidMask

MAX_MASKS = 20
MAX_COORD = 99_999
_FIELDS = ("x", "y", "width", "height")


@dataclass(frozen=True, slots=True)
class Mask:
    """A rectangle in pixels of the compared canvas; parts outside the canvas are ignored."""

    x: int
    y: int
    width: int
    height: int

    def clip(self, width: int, height: int) -> tuple[int, int, int, int] | None:
        """The (x0, y0, x1, y1) part inside a width x height canvas (x1, y1 exclusive)."""
        x0, y0 = min(self.x, width), min(self.y, height)
        x1, y1 = min(self.x + self.width, width), min(self.y + self.height, height)
        return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


MaskLike = Mask | Mapping[str, Any] | Sequence[int]


def parse_masks(masks: Iterable[MaskLike]) -> tuple[Mask, ...]:
    """Validate masks given as Mask, {x, y, width, height} or (x, y, width, height).

    Raises InvalidMask naming the mask (1-based) and the field that is out of range.
    """
    items = list(masks)
    if len(items) > MAX_MASKS:
        raise InvalidMask(f"{len(items)} masks given; at most {MAX_MASKS} are allowed")
    return tuple(_parse_one(i + 1, item) for i, item in enumerate(items))


def _parse_one(n: int, item: MaskLike) -> Mask:
    if isinstance(item, Mask):
        values: dict[str, Any] = {f: getattr(item, f) for f in _FIELDS}
    elif isinstance(item, Mapping):
        missing = [f for f in _FIELDS if f not in item]
        extra = sorted(set(item) - set(_FIELDS))
        if missing or extra:
            raise InvalidMask(
                f"mask {n} must have exactly the fields x, y, width, height"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unknown {', '.join(extra)}" if extra else "")
            )
        values = {f: item[f] for f in _FIELDS}
    elif isinstance(item, Sequence) and not isinstance(item, str | bytes) and len(item) == 4:
        values = dict(zip(_FIELDS, item, strict=True))
    else:
        raise InvalidMask(f"mask {n} must be {{x, y, width, height}} or four integers")
    for field, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidMask(f"mask {n}: {field} must be an integer (got {value!r})")
        low = 0 if field in ("x", "y") else 1
        if not low <= value <= MAX_COORD:
            raise InvalidMask(
                f"mask {n}: {field} must be between {low} and {MAX_COORD} (got {value})"
            )
    return Mask(**values)


def union_area(rects: Iterable[tuple[int, int, int, int]]) -> int:
    """Area covered by (x0, y0, x1, y1) rectangles, overlaps counted once."""
    boxes = list(rects)
    xs = sorted({x for b in boxes for x in (b[0], b[2])})
    area = 0
    for left, right in zip(xs, xs[1:], strict=False):
        spans = sorted((b[1], b[3]) for b in boxes if b[0] <= left and b[2] >= right)
        covered, top, bottom = 0, -1, -1
        for y0, y1 in spans:
            if y0 > bottom:
                covered += bottom - top
                top, bottom = y0, y1
            else:
                bottom = max(bottom, y1)
        area += (covered + bottom - top) * (right - left)
    return area
