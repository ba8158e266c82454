"""How far the analysis looks, in device pixels, for the device scale of the screenshots.

The allowances (a glyph redrawn up to 2 px off, tiles of 32 px, 32 px of surroundings, ...)
were set on screenshots at device scales 1 and 2, and hold at both. A larger scale draws the
same page with more pixels: at 3, a glyph redrawn a fraction of a CSS pixel off lands 3 device
px away, and the gaps between the few pixels it changes grow apart. Given the scale, every
distance stretches by scale / 2 and every area by its square. Unknown, the scale is taken to be
one of those the allowances were set for."""

from __future__ import annotations

from dataclasses import dataclass

SET_FOR = 2.0  # the largest device scale the allowances were set on
MIN_SCALE, MAX_SCALE = 0.5, 8.0  # device scales a screenshot is taken at


@dataclass(frozen=True, slots=True)
class Reach:
    stretch: float = 1.0

    def px(self, n: int) -> int:
        """A distance of n px at the scales the allowances were set for."""
        return round(n * self.stretch)

    def area(self, n: int) -> int:
        """An area of n px at the scales the allowances were set for."""
        return round(n * self.stretch * self.stretch)

    @property
    def sparse(self) -> bool:
        """Above the scales the allowances were set for: glyphs redrawn change few pixels
        each, far apart, into regions too small to show a glyph's worth of change."""
        return self.stretch > 1.0


SET = Reach()


def reach_for(scale: float | None) -> Reach:
    """The reach for screenshots taken at ``scale`` (device px per CSS px), None if unknown."""
    if scale is None or scale <= SET_FOR:
        return SET
    return Reach(scale / SET_FOR)
