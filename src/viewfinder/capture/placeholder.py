"""The shot a failed capture leaves: a plain image that says, in words, what failed and why,
so that a review still opens and a person sees the reason where the page would be."""

from __future__ import annotations

import io
import textwrap

from PIL import Image, ImageDraw, ImageFont

from viewfinder.capture.model import Shot

# Sizes of the shots a placeholder stands in for (CSS px), so it sits where they would.
SIZES = {"desktop": (1280, 800), "mobile": (375, 812), "light": (600, 800), "dark": (600, 800)}
_BACKGROUND = (244, 245, 247)
_INK = (33, 37, 41)
_MUTED = (90, 96, 105)


def placeholder(label: str, reason: str, *, url: str | None = None) -> Shot:
    """A ``capture_failed`` shot for ``label`` that shows ``reason`` (and the URL)."""
    width, height = SIZES.get(label, (1280, 800))
    image = Image.new("RGB", (width, height), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    margin = max(16, width // 20)
    columns = max(20, (width - 2 * margin) // 11)
    title = ImageFont.load_default(size=28 if width > 500 else 22)
    body = ImageFont.load_default(size=18 if width > 500 else 15)
    y = margin
    draw.text((margin, y), f"Capture failed ({label})", font=title, fill=_INK)
    y += 52
    for line in textwrap.wrap(reason, columns)[:14]:
        draw.text((margin, y), line, font=body, fill=_INK)
        y += 28
    if url:
        y += 14
        for line in textwrap.wrap(url, columns, break_on_hyphens=False)[:3]:
            draw.text((margin, y), line, font=body, fill=_MUTED)
            y += 26
    out = io.BytesIO()
    image.save(out, "PNG", optimize=False, compress_level=6)
    return Shot(
        png=out.getvalue(),
        width=width,
        height=height,
        label=label,
        origin="capture_failed",
        url=url,
        reason=reason,
    )
