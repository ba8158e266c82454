"""Screenshots of a Playwright page or locator, and its masks as rectangles of image pixels."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from viewfinder.imaging import Mask

MASK_COLOR = "#FF00FF"  # what a server build sees where a mask was (its bytes stay stable)


@dataclass(frozen=True)
class Shot:
    png: bytes
    masks: tuple[Mask, ...]  # image pixels
    viewport: str | None  # WIDTHxHEIGHT in CSS px, the story's variant
    scale: float = 1.0  # device px per CSS px


def _page_of(target: Any) -> Any:
    page = getattr(target, "page", None)  # a Locator knows its page
    if page is not None and not callable(page):
        return page
    if hasattr(target, "screenshot") and hasattr(target, "evaluate"):
        return target
    raise TypeError(
        f"viewfinder_check takes a Playwright Page or Locator, not {type(target).__name__}"
    )


def take(target: Any, masks: Sequence[Any], *, full_page: bool, paint: bool) -> Shot:
    """The screenshot at the device scale, animations stopped and the caret hidden. Masks
    become rectangles of the image's pixels (the origin is the target's top-left corner);
    with ``paint`` they are also painted over in one colour, for a server that is given only
    the image."""
    page = _page_of(target)
    is_page = target is page
    # Measured before the shot: the layout must not change in between (animations are off).
    ratio, scroll_x, scroll_y = page.evaluate("[devicePixelRatio, scrollX, scrollY]")
    if is_page:
        origin_x, origin_y = (-scroll_x, -scroll_y) if full_page else (0.0, 0.0)
    else:
        box = target.bounding_box()
        if box is None:
            raise ValueError("the locator to screenshot is not visible")
        origin_x, origin_y = box["x"], box["y"]
    rects = []
    for mask in masks:
        box = mask.bounding_box()
        if box is None:
            continue  # not rendered: nothing of it can be in the shot
        left = math.floor((box["x"] - origin_x) * ratio)
        top = math.floor((box["y"] - origin_y) * ratio)
        right = math.ceil((box["x"] - origin_x + box["width"]) * ratio)
        bottom = math.ceil((box["y"] - origin_y + box["height"]) * ratio)
        left, top = max(left, 0), max(top, 0)
        if right > left and bottom > top:
            rects.append(Mask(left, top, right - left, bottom - top))
    options: dict[str, Any] = {"animations": "disabled", "caret": "hide", "scale": "device"}
    if is_page:
        options["full_page"] = full_page
    if paint and masks:
        options |= {"mask": list(masks), "mask_color": MASK_COLOR}
    png = target.screenshot(**options)
    size = page.viewport_size
    viewport = f"{size['width']}x{size['height']}" if size else None
    return Shot(png, tuple(rects), viewport, float(ratio))
