"""Test helpers: build PNG files byte by byte, with chosen filters, chunk layouts and damage."""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_rows(pixels: np.ndarray, filters: list[int]) -> bytes:
    """Apply PNG filter type filters[y % len(filters)] to each row (reference implementation)."""
    height, width, bpp = pixels.shape
    rows = pixels.reshape(height, width * bpp).astype(np.int32)
    out = bytearray()
    for y in range(height):
        ftype = filters[y % len(filters)]
        row, up = rows[y], rows[y - 1] if y else np.zeros_like(rows[y])
        out.append(ftype)
        for i, value in enumerate(row):
            left = row[i - bpp] if i >= bpp else 0
            corner = up[i - bpp] if i >= bpp else 0
            pred = (0, left, up[i], (left + up[i]) // 2, _paeth(left, up[i], corner))[ftype]
            out.append((int(value) - int(pred)) & 0xFF)
    return bytes(out)


def make_png(
    pixels: np.ndarray,
    *,
    filters: list[int] | None = None,
    idat_pieces: int = 1,
    extra_chunks: tuple[tuple[bytes, bytes], ...] = (),
    level: int = 6,
) -> bytes:
    """An 8-bit RGB or RGBA PNG of `pixels`, its IDAT split into `idat_pieces` chunks."""
    height, width, channels = pixels.shape
    ctype = {3: 2, 4: 6}[channels]
    data = zlib.compress(filter_rows(pixels, filters or [0]), level)
    step = max(1, -(-len(data) // idat_pieces))
    parts = [data[i : i + step] for i in range(0, len(data), step)]
    ihdr = struct.pack(">IIBBBBB", width, height, 8, ctype, 0, 0, 0)
    body = b"".join(chunk(kind, payload) for kind, payload in extra_chunks)
    return (
        SIGNATURE
        + chunk(b"IHDR", ihdr)
        + body
        + b"".join(chunk(b"IDAT", p) for p in parts)
        + chunk(b"IEND", b"")
    )


def header_only(width: int, height: int, ctype: int = 6, depth: int = 8) -> bytes:
    """A PNG whose header claims width x height but whose data is a few bytes: a bomb's shape."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, ctype, 0, 0, 0)
    return (
        SIGNATURE
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def random_image(
    rng: np.random.Generator, height: int, width: int, channels: int = 4
) -> np.ndarray:
    return rng.integers(0, 256, (height, width, channels), dtype=np.uint8)


def with_rows(pixels: np.ndarray, rows: bytes, *, compress: bool = True) -> bytes:
    """A PNG with the header of ``pixels`` and this (filtered) image data: too few rows, bad
    filters, a broken stream."""
    height, width, channels = pixels.shape
    ihdr = struct.pack(">IIBBBBB", width, height, 8, {3: 2, 4: 6}[channels], 0, 0, 0)
    data = zlib.compress(rows) if compress else rows
    return SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def interlaced(pixels: np.ndarray) -> bytes:
    """An Adam7-interlaced RGB PNG of ``pixels`` (filter 0 on every row)."""
    height, width, _ = pixels.shape
    rows = b""
    for x0, y0, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
                           (1, 0, 2, 2), (0, 1, 1, 2)):  # fmt: skip
        for row in pixels[y0::dy, x0::dx]:
            if row.size:
                rows += b"\x00" + row.tobytes()
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 1)
    return (
        SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    )


def palette_png(
    indices: np.ndarray, colours: np.ndarray, *, alphas: bytes = b"", filters: list[int]
) -> bytes:
    """An 8-bit palette PNG: ``indices`` (height, width) into ``colours`` (n, 3), with palette
    transparency ``alphas`` (tRNS) when given, rows filtered by ``filters`` in turn."""
    height, width = indices.shape
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)
    data = zlib.compress(filter_rows(indices[..., None], filters))
    trns = chunk(b"tRNS", alphas) if alphas else b""
    return (
        SIGNATURE
        + chunk(b"IHDR", ihdr)
        + chunk(b"PLTE", colours.astype(np.uint8).tobytes())
        + trns
        + chunk(b"IDAT", data)
        + chunk(b"IEND", b"")
    )
