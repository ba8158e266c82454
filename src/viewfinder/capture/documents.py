"""Files rather than pages: PDFs rendered one image per page (pypdfium2, no browser), and
images given as https URLs, data URLs or base64 (PNG, JPEG or WebP in, PNG out).

Bytes that are not what they claim to be, or are over a limit, are bad input and raise; a
download that fails (unreachable, slow, an error status) is a failed capture and gives a
placeholder unless the caller asked for errors.
"""

from __future__ import annotations

import base64
import binascii
import ctypes
import io
import json
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote_to_bytes

import numpy as np
from PIL import Image, UnidentifiedImageError

from viewfinder.capture.fetch import fetch
from viewfinder.capture.model import Box, Shot
from viewfinder.capture.placeholder import placeholder
from viewfinder.capture.policy import Policy
from viewfinder.capture.sources import OnFailure
from viewfinder.errors import CaptureFailed, ImageTooLarge, InvalidImage, InvalidInput
from viewfinder.imaging import png

MAX_PAGES = 5
# Pages are rendered this wide (a slide of 720 pt becomes 1280 px), within these scales.
PAGE_WIDTH = 1280
_SCALES = (0.25, 4.0)
# PDFium is not thread-safe: one document at a time per process.
_PDFIUM = threading.Lock()


def read_source(source: str | bytes, *, policy: Policy, what: str) -> bytes:
    """The bytes behind a source: bytes as they are, a ``data:`` URL, an https URL (plain
    http only for allowed hosts), or base64. Raises InvalidInput (none of those, bad base64),
    ImageTooLarge (over the byte limit), AddressRefused, CaptureFailed (the download failed)."""
    if isinstance(source, bytes):
        data = source
    elif not isinstance(source, str) or not source.strip():
        raise InvalidInput(f"{what} is empty: send an https URL, a data URL or base64")
    else:
        text = source.strip()
        lowered = text[:8].lower()
        if lowered.startswith(("http://", "https://")):
            return fetch(
                text,
                guard=policy.guard,
                timeout=policy.timeout,
                max_bytes=policy.max_bytes,
                what=what,
                https_only=True,
            ).body
        if lowered.startswith("data:"):
            data = _data_url(text, what, policy.max_bytes)
        else:
            data = _base64(text, what, policy.max_bytes)
    if len(data) > policy.max_bytes:
        raise ImageTooLarge(
            f"{what} is {len(data):,} bytes; at most {policy.max_bytes:,} are accepted "
            "(VIEWFINDER_CAPTURE_MAX_BYTES)"
        )
    return data


def _data_url(text: str, what: str, limit: int) -> bytes:
    header, comma, payload = text.partition(",")
    if not comma:
        raise InvalidInput(f"{what} is a data URL without a comma before its data")
    if header.lower().endswith(";base64"):
        return _base64(payload, what, limit)
    return unquote_to_bytes(payload)


def _base64(text: str, what: str, limit: int) -> bytes:
    compact = "".join(text.split())
    if len(compact) * 3 // 4 > limit + 3:
        raise ImageTooLarge(
            f"{what} is about {len(compact) * 3 // 4:,} bytes; at most {limit:,} are accepted "
            "(VIEWFINDER_CAPTURE_MAX_BYTES)"
        )
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput(
            f"{what} is not an https URL, a data URL or base64 (it does not decode as base64)"
        ) from None


def load_images(
    sources: Sequence[str | bytes],
    *,
    policy: Policy | None = None,
    on_failure: OnFailure = "placeholder",
) -> list[Shot]:
    """Each image as a PNG shot labelled ``image-1``, ``image-2``...: PNGs checked whole and
    kept as they are, JPEG and WebP decoded whole and stored as PNG. Raises InvalidImage or
    ImageTooLarge for a file that is not one or is over the image limits, InvalidInput or
    AddressRefused for a source that cannot be read; a download that fails gives a
    placeholder (or CaptureFailed with ``on_failure="raise"``)."""
    policy = policy or Policy()
    shots = []
    for number, source in enumerate(sources, 1):
        label = f"image-{number}"
        what = f"image {number}"
        try:
            data = read_source(source, policy=policy, what=what)
        except CaptureFailed as exc:
            if on_failure == "raise":
                raise
            shots.append(placeholder(label, exc.message, url=_shown(source)))
            continue
        shots.append(_as_png(data, label, what, policy))
    return shots


def _shown(source: str | bytes) -> str | None:
    return source.strip()[:300] if isinstance(source, str) else None


def _as_png(data: bytes, label: str, what: str, policy: Policy) -> Shot:
    limit = policy.limits.max_bytes
    if len(data) > limit:
        raise ImageTooLarge(f"{what} is {len(data):,} bytes; at most {limit:,} are accepted")
    if data.startswith(png.SIGNATURE):
        header = png.validate(data, policy.limits, name=what)
        return Shot(png=data, width=header.width, height=header.height, label=label, origin="image")
    try:
        with Image.open(io.BytesIO(data), formats=["JPEG", "WEBP"]) as image:
            width, height = image.size
            if width * height > policy.limits.max_pixels:
                raise ImageTooLarge(
                    f"{what} is {width}x{height}, over the {policy.limits.max_pixels:,}-pixel "
                    "limit; scale it down"
                )
            image.load()
            mode = "RGBA" if "A" in image.getbands() else "RGB"
            pixels = np.asarray(image.convert(mode))
    except ImageTooLarge:
        raise
    except UnidentifiedImageError:
        raise InvalidImage(f"{what} is not a PNG, JPEG or WebP image") from None
    except Exception as exc:  # Pillow raises many kinds for damaged files
        raise InvalidImage(f"{what} is corrupt or cut short: {exc}") from None
    encoded = png.encode(pixels, level=6)
    if len(encoded) > limit:
        raise ImageTooLarge(
            f"{what} is {len(encoded):,} bytes as a PNG; at most {limit:,} are accepted"
        )
    return Shot(png=encoded, width=width, height=height, label=label, origin="image")


def render_pdf(
    source: str | bytes,
    *,
    policy: Policy | None = None,
    max_pages: int = MAX_PAGES,
    on_failure: OnFailure = "placeholder",
) -> list[Shot]:
    """The first ``max_pages`` pages of a PDF (bytes, an https URL, a data URL or base64),
    one shot each labelled ``page-1``..., rendered 1280 px wide, with the text runs of each
    page as its boxes (image px, scale 1) and a JSON description of them as its ``dom``.
    Raises InvalidInput for a file that is not a readable PDF (or has a password); a failed
    download or a render past the time limit gives a placeholder (or CaptureFailed)."""
    import pypdfium2 as pdfium

    policy = policy or Policy()
    try:
        data = read_source(source, policy=policy, what="the PDF")
    except CaptureFailed as exc:
        if on_failure == "raise":
            raise
        return [placeholder("page-1", exc.message, url=_shown(source))]
    if not data.lstrip()[:5] == b"%PDF-":
        raise InvalidInput("the PDF is not a PDF file (it does not start with %PDF-)")
    deadline = time.monotonic() + policy.timeout
    with _PDFIUM:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise InvalidInput(f"the PDF cannot be read ({exc}); send an unencrypted PDF") from None
        try:
            total = len(document)
            if total == 0:
                raise InvalidInput("the PDF has no pages")
            shots = []
            for index in range(min(total, max_pages)):
                if time.monotonic() > deadline:
                    failure = CaptureFailed(
                        f"rendering the PDF took longer than {policy.timeout:g} s; stopped "
                        f"before page {index + 1}"
                    )
                    if on_failure == "raise":
                        raise failure
                    shots.append(placeholder(f"page-{index + 1}", failure.message))
                    break
                shots.append(_render_page(document, index, total, max_pages, policy))
            return shots
        finally:
            document.close()


def _render_page(document: object, index: int, total: int, max_pages: int, policy: Policy) -> Shot:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    assert isinstance(document, pdfium.PdfDocument)
    page = document[index]
    try:
        width_pt, height_pt = page.get_size()
        scale = min(max(PAGE_WIDTH / max(width_pt, 1), _SCALES[0]), _SCALES[1])
        pixels_at_scale = width_pt * height_pt * scale * scale
        if pixels_at_scale > policy.limits.max_pixels:
            scale *= (policy.limits.max_pixels / pixels_at_scale) ** 0.5
        bitmap = page.render(scale=scale, rev_byteorder=True)
        pixels = np.ascontiguousarray(bitmap.to_numpy()[..., :3])
        height, width = pixels.shape[:2]
        text = page.get_textpage()
        try:
            boxes = _text_boxes(text, pdfium_c, scale, height_pt)
        finally:
            text.close()
    finally:
        page.close()
    notes: tuple[str, ...] = ()
    if total > max_pages and index == 0:
        notes = (f"the PDF has {total} pages; the first {max_pages} were rendered",)
    description = {
        "kind": "pdf",
        "page": index + 1,
        "pages": total,
        "size_pt": [round(width_pt, 2), round(height_pt, 2)],
        "text": [{"text": b.text, "x": b.x, "y": b.y, "w": b.w, "h": b.h} for b in boxes],
    }
    return Shot(
        png=png.encode(pixels, level=1),
        width=width,
        height=height,
        label=f"page-{index + 1}",
        origin="pdf",
        dom=json.dumps(description, separators=(",", ":"), ensure_ascii=False).encode(),
        boxes=tuple(boxes),
        notes=notes,
    )


def _font_size(text: object, raw: Any, index: int) -> float:
    """A character's size in points as drawn: the font size times the scale of its text
    matrix (PDFium's font size alone leaves the matrix out)."""
    size = float(raw.FPDFText_GetFontSize(text.raw, index))  # type: ignore[attr-defined]
    matrix = raw.FS_MATRIX()
    if raw.FPDFText_GetMatrix(text.raw, index, ctypes.byref(matrix)):  # type: ignore[attr-defined]
        size *= abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
    return size


def _text_boxes(text: object, pdfium_c: Any, scale: float, height_pt: float) -> list[Box]:
    """The page's text runs as boxes in image px, with their font size in image px."""
    import pypdfium2 as pdfium

    assert isinstance(text, pdfium.PdfTextPage)
    raw = pdfium_c
    boxes = []
    for number in range(text.count_rects()):
        left, bottom, right, top = text.get_rect(number)
        words = " ".join(text.get_text_bounded(left, bottom, right, top).split())
        if not words:
            continue
        middle = ((left + right) / 2, (bottom + top) / 2)
        index = text.get_index(middle[0], middle[1], (right - left) / 2, (top - bottom) / 2)
        size_pt = _font_size(text, raw, index) if index is not None and index >= 0 else 0.0
        boxes.append(
            Box(
                node=number,
                tag="text",
                role="",
                name="",
                text=words[:200],
                x=left * scale,
                y=(height_pt - top) * scale,
                w=(right - left) * scale,
                h=(top - bottom) * scale,
                font_size=float(size_pt) * scale,
                font_weight=400,
                color="",
                background="",
                actionable=False,
            )
        )
    return boxes
