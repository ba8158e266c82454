"""What the analysis hands back: a Change per region (or part of one) and the Analysis of the
pair, with the JSON form the server stores. Boxes are (x, y, width, height) on the canvas."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from viewfinder.imaging import _analysis
from viewfinder.imaging.analysis.signals import Signal
from viewfinder.imaging.analysis.wording import note

Kind = Literal["identical", "noise", "layout_shift", "color", "content", "size"]
Verdict = Literal["noise", "likely_intended", "likely_regression"]
Box = tuple[int, int, int, int]


def window(box: Box, pad: int, w: int, h: int) -> tuple[int, int, int, int]:
    """The box grown by ``pad`` on every side within a w x h image, as (x0, y0, x1, y1)."""
    x, y, bw, bh = box
    return max(x - pad, 0), max(y - pad, 0), min(x + bw + pad, w), min(y + bh + pad, h)


def pixels_of(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of a 2-D mask's set pixels, in row order: what np.nonzero answers,
    listed by the _analysis kernel (a region of millions of changed pixels took seconds to
    turn into rows and columns through numpy's integer division), as int32, which the kernels
    take: half the memory of intp, and PNG bounds a side to 2^31 - 1 px."""
    mask = np.ascontiguousarray(mask, bool)
    count = int(np.count_nonzero(mask))
    ys, xs = np.empty(count, np.int32), np.empty(count, np.int32)
    _analysis.pixels(mask, ys, xs)
    return ys, xs


@dataclass(frozen=True, slots=True)
class Change:
    """One changed region as the analysis sees it. ``x, y, width, height`` on the canvas;
    ``signal`` is what was found there beyond its kind (its words are the ``note``), and
    ``sizes`` the base's and the candidate's width and height when the sizes differ."""

    x: int
    y: int
    width: int
    height: int
    kind: Literal["noise", "move", "color", "content", "size"]
    changed_pixels: int
    dx: int | None = None
    dy: int | None = None
    signal: Signal | None = None
    sizes: tuple[int, int, int, int] | None = None
    # Which of the comparison's regions it lies in (its index there): a region's parts are
    # changes of their own, and counts of regions in the words must agree with the regions
    # listed. None for the size change, which is no region.
    region: int | None = None

    @property
    def note(self) -> str:
        return note(self)

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
        if text := self.note:
            data["note"] = text
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
