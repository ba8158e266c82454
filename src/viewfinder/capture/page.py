"""Work on an open page: wait until it is ready to be photographed, read its DOM and boxes,
run axe-core on it, and take the screenshot."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from viewfinder.capture import axe
from viewfinder.capture.model import Box, Violation, ViolationNode

if TYPE_CHECKING:
    from playwright.async_api import Page

COLLECT = (Path(__file__).resolve().parent / "collect.js").read_text(encoding="utf-8")
MAX_NODES = 20_000
MAX_BOXES = 5_000

# Same page, same pixels: Math.random seeded, and nothing blinks. Animations and transitions
# are also stopped by the screenshot itself (``animations="disabled"``), and motion is
# reduced for pages that ask.
STEADY = """(() => {
  let seed = 0x2545f491;
  Math.random = () => {
    seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
    return ((seed >>> 0) % 1000000) / 1000000;
  };
})();"""
# At the top of the page (a URL with a #fragment scrolls down; the shot and its boxes start
# at the top), fonts loaded and images in. The screenshot itself waits for a fresh frame.
SETTLE = """async () => {
  window.scrollTo(0, 0);
  await document.fonts.ready;
  const images = Array.from(document.images).filter((i) => i.loading !== "lazy" && !i.complete);
  await Promise.all(images.map((i) => new Promise((done) => {
    i.addEventListener("load", done, {once: true});
    i.addEventListener("error", done, {once: true});
  })));
}"""


@dataclass(frozen=True)
class Reading:
    """What was read from a page: the DOM snapshot (JSON bytes), the boxes, and the size of
    its content in CSS px as shown."""

    dom: bytes
    boxes: tuple[Box, ...]
    content_width: float
    content_height: float


async def settle(page: Page) -> None:
    await page.evaluate(SETTLE)


async def read(page: Page) -> Reading:
    """The page's DOM snapshot and boxes, read in one pass (as one JSON string: Playwright
    carries a string much faster than the same nested objects)."""
    text = await page.evaluate(
        f"(o) => JSON.stringify(({COLLECT})(o))", {"maxNodes": MAX_NODES, "maxBoxes": MAX_BOXES}
    )
    found: dict[str, Any] = json.loads(text)
    boxes = tuple(_box(raw) for raw in found["boxes"] if _finite(raw))
    return Reading(
        dom=json.dumps(found["dom"], separators=(",", ":"), ensure_ascii=False).encode(),
        boxes=boxes,
        content_width=float(found["page"]["width"]),
        content_height=float(found["page"]["height"]),
    )


def _finite(raw: dict[str, Any]) -> bool:
    return all(math.isfinite(float(raw[k])) for k in ("x", "y", "w", "h"))


def _box(raw: dict[str, Any]) -> Box:
    return Box(
        node=int(raw["node"]),
        tag=str(raw["tag"]),
        role=str(raw["role"]),
        name=str(raw["name"]),
        text=str(raw["text"]),
        x=float(raw["x"]),
        y=float(raw["y"]),
        w=float(raw["w"]),
        h=float(raw["h"]),
        font_size=float(raw["font_size"]),
        font_weight=int(raw["font_weight"]),
        color=str(raw["color"]),
        background=str(raw["background"]),
        actionable=bool(raw["actionable"]),
        inline=bool(raw["inline"]),
        image=bool(raw["image"]),
        disabled=bool(raw["disabled"]),
    )


async def accessibility(page: Page, script: str) -> tuple[Violation, ...]:
    """axe-core's WCAG A/AA violations on the page, each element with its box."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.evaluate(script)
    return _violations(json.loads(await page.evaluate(axe.RUN)))


async def place(page: Page, violations: tuple[Violation, ...]) -> tuple[Violation, ...]:
    """Violations found on another rendering of the same document, with their elements'
    boxes on this one."""
    found = [
        {
            "rule": v.rule,
            "impact": v.impact,
            "help": v.help,
            "url": v.url,
            "nodes": [
                {"selector": n.selector, "target": n.target, "html": n.html} for n in v.nodes
            ],
        }
        for v in violations
    ]
    return _violations(json.loads(await page.evaluate(axe.PLACE, found)))


def _violations(found: list[dict[str, Any]]) -> tuple[Violation, ...]:
    return tuple(
        Violation(
            rule=str(v["rule"]),
            impact=str(v["impact"]),
            help=str(v["help"]),
            url=str(v["url"]),
            nodes=tuple(
                ViolationNode(
                    target=str(n["target"]),
                    html=str(n["html"]),
                    rect=_rect(n["rect"]),
                    selector=n["selector"],
                )
                for n in v["nodes"]
            ),
        )
        for v in found
    )


def _rect(raw: list[float] | None) -> tuple[float, float, float, float] | None:
    if not raw or not all(math.isfinite(float(c)) for c in raw):
        return None
    x, y, w, h = (float(c) for c in raw)
    return (x, y, w, h)


async def photograph(
    page: Page, *, full_page: bool, width: int, height: int, timeout_ms: float
) -> bytes:
    """A PNG of the viewport, or of the whole page cut at ``height`` CSS px."""
    if full_page:
        return await page.screenshot(
            full_page=True,
            clip={"x": 0, "y": 0, "width": width, "height": height},
            animations="disabled",
            caret="hide",
            timeout=timeout_ms,
        )
    return await page.screenshot(animations="disabled", caret="hide", timeout=timeout_ms)
