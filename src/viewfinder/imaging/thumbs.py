"""Thumbnails: the top of a screenshot, small, as WebP. A tall page shrunk whole would be an
unreadable sliver; its top is what people recognise. A huge PNG is shrunk band by band first,
so making its thumbnail never holds the whole image."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from viewfinder.imaging import png

# Images wider than this many times the thumbnail are averaged down band by band before the
# final (better) resampling: a 10000 px wide page would otherwise be decoded whole.
PRE_SHRINK = 4


def thumbnail(
    data: bytes, width: int, height: int, limits: png.Limits = png.DEFAULT_LIMITS
) -> bytes:
    """The top of the image, at most width x height, as WebP. Raises InvalidImage for a file
    that cannot be read."""
    if data.startswith(png.SIGNATURE):
        header = png.read_header(data, limits)
        keep = min(header.height, max(1, round(header.width * height / width)))
        factor = max(1, header.width // (width * PRE_SHRINK))
        if factor > 1:
            top = Image.fromarray(png.shrunk(data, keep, factor, limits))
        else:
            rows = png.decode_rows(data, 0, keep, limits)
            top = Image.fromarray(np.ascontiguousarray(rows[..., :3]))
    else:
        with Image.open(io.BytesIO(data)) as image:
            image.draft("RGB", (width * PRE_SHRINK, height * PRE_SHRINK))  # JPEG: decode small
            image.load()
            keep = min(image.height, max(1, round(image.width * height / width)))
            top = image.crop((0, 0, image.width, keep)).convert("RGB")
    top.thumbnail((width, height), Image.Resampling.LANCZOS, reducing_gap=2.0)
    out = io.BytesIO()
    top.save(out, "WEBP", quality=80, method=4)
    return out.getvalue()
