"""Reading and writing PNG files, with limits checked before any pixel is decoded.

Screenshots are almost always 8-bit RGB or RGBA without interlacing; those are inflated with
zlib-ng and unfiltered by the native module, several times faster than a general decoder.
Every other kind of PNG (palette, grayscale, 16-bit, interlaced) is rare in screenshots and goes
through Pillow, which applies tRNS transparency (libspng, through pyspng, ignores it).
"""

from __future__ import annotations

import io
import struct
import warnings
from dataclasses import dataclass
from typing import cast

import numpy as np
from PIL import Image
from zlib_ng import zlib_ng

from viewfinder.errors import ImageTooLarge, InvalidImage
from viewfinder.imaging import _native

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# zlib-ng's stub declares its exception class as an instance.
_InflateError = cast(type[Exception], zlib_ng.error)
_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"
_ALLOWED_DEPTHS = {0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}


@dataclass(frozen=True, slots=True)
class Limits:
    """What a decoder accepts. The pixel limit guards against decompression bombs: a few KB of
    PNG can claim gigapixels, so it is checked against the header before inflating."""

    max_bytes: int = 25 * 1024 * 1024
    max_pixels: int = 100_000_000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Header:
    width: int
    height: int
    bit_depth: int
    color_type: int
    interlaced: bool


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def read_header(data: bytes, limits: Limits = DEFAULT_LIMITS, *, name: str = "image") -> Header:
    """Check the signature, the IHDR chunk and the limits.

    Raises InvalidImage for data that is not a PNG or has a broken header, and ImageTooLarge
    when the file or its declared pixel count is over a limit.
    """
    if len(data) > limits.max_bytes:
        raise ImageTooLarge(
            f"{name} is {_mb(len(data))}, over the {_mb(limits.max_bytes)} limit; "
            "send a smaller screenshot or raise the limit"
        )
    if not data.startswith(SIGNATURE):
        what = "empty" if not data else "not a PNG file (wrong signature)"
        raise InvalidImage(f"{name} is {what}; send PNG bytes")
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise InvalidImage(f"{name} is truncated or corrupt: the PNG header chunk is missing")
    (length,) = struct.unpack(">I", data[8:12])
    if length != 13 or zlib_ng.crc32(data[12:29]) != struct.unpack(">I", data[29:33])[0]:
        raise InvalidImage(f"{name} is corrupt: the PNG header chunk fails its checksum")
    width, height, depth, ctype, comp, filt, interlace = struct.unpack(">IIBBBBB", data[16:29])
    if width == 0 or height == 0:
        raise InvalidImage(f"{name} has no pixels ({width}x{height})")
    if ctype not in _ALLOWED_DEPTHS or depth not in _ALLOWED_DEPTHS[ctype]:
        raise InvalidImage(f"{name} has an invalid PNG colour type {ctype} / bit depth {depth}")
    if comp != 0 or filt != 0 or interlace > 1:
        raise InvalidImage(f"{name} uses an unknown PNG compression, filter or interlace method")
    if width * height > limits.max_pixels:
        raise ImageTooLarge(
            f"{name} is {width}x{height} = {width * height:,} pixels, over the "
            f"{limits.max_pixels:,}-pixel limit; crop or scale it down"
        )
    return Header(width, height, depth, ctype, bool(interlace))


def is_complete(data: bytes) -> bool:
    """True when the data ends with the IEND chunk, i.e. was not cut short in transit."""
    return data.endswith(_IEND)


def decode(data: bytes, limits: Limits = DEFAULT_LIMITS, *, name: str = "image") -> np.ndarray:
    """Decode a PNG into a (height, width, 3 or 4) uint8 array: 3 channels only for opaque RGB.

    Raises InvalidImage or ImageTooLarge (see read_header) and InvalidImage for truncated or
    corrupt data.
    """
    header = read_header(data, limits, name=name)
    if header.bit_depth == 8 and header.color_type in (2, 6) and not header.interlaced:
        pixels = _decode_rgb8(data, header, name)
        if pixels is not None:
            return pixels
    return _decode_general(data, name)


def _decode_general(data: bytes, name: str) -> np.ndarray:
    try:
        with warnings.catch_warnings():
            # The pixel limit was checked against the header already, with our own limit.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
                image.load()
                if image.mode in ("I;16", "I;16B", "I"):
                    return _gray16_to_rgba(image)
                return np.asarray(image.convert("RGBA"))
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise InvalidImage(f"{name} could not be decoded ({exc}); send a valid PNG") from exc


def _gray16_to_rgba(image: Image.Image) -> np.ndarray:
    """16-bit grayscale keeps its high byte (Pillow's own conversion would clip at 255)."""
    gray16 = np.asarray(image).astype(np.uint32)
    rgba = np.empty(gray16.shape + (4,), np.uint8)
    rgba[..., :3] = (gray16 >> 8).astype(np.uint8)[..., None]
    transparent = image.info.get("transparency")
    rgba[..., 3] = 255 if transparent is None else np.where(gray16 == transparent, 0, 255)
    return rgba


def _decode_rgb8(data: bytes, header: Header, name: str) -> np.ndarray | None:
    """The fast path. Returns None when the general decoder should judge the file."""
    pieces: list[memoryview] = []
    transparent: bytes | None = None
    view = memoryview(data)
    pos, end = 33, len(data)
    complete = False
    while pos + 12 <= end:
        length, kind = struct.unpack_from(">I4s", data, pos)
        body_end = pos + 8 + length
        if body_end + 4 > end:
            break
        if kind == b"IDAT":
            pieces.append(view[pos + 8 : body_end])
        elif kind == b"tRNS" and header.color_type == 2 and length == 6:
            transparent = data[pos + 9 : body_end : 2]  # three 16-bit samples; 8-bit values
        elif kind == b"IEND":
            complete = True
            break
        pos = body_end + 4
    if not pieces or not complete:
        raise InvalidImage(f"{name} is truncated: the PNG ends before its IEND chunk")
    channels = 3 if header.color_type == 2 else 4
    pixels = np.empty((header.height, header.width, channels), np.uint8)
    try:
        clean_end = _inflate_into(pixels, pieces, name)
    except _InflateError as exc:
        raise InvalidImage(f"{name} is corrupt: its image data does not inflate ({exc})") from exc
    if not clean_end:
        return None
    if transparent is not None:
        # RGB with a tRNS colour: pixels of exactly that colour are fully transparent.
        rgba = np.empty((header.height, header.width, 4), np.uint8)
        rgba[..., :3] = pixels
        rgba[..., 3] = np.where(
            (pixels == np.frombuffer(transparent, np.uint8)).all(axis=2), 0, 255
        )
        return rgba
    return pixels


def _inflate_into(pixels: np.ndarray, pieces: list[memoryview], name: str) -> bool:
    """Inflate and unfilter a few MB of rows at a time, so the inflated copy of the whole image
    never exists. Returns False when the stream does not end cleanly after the last row."""
    height = pixels.shape[0]
    row_len = pixels.shape[1] * pixels.shape[2] + 1
    chunk = max(4 << 20, height * row_len // 32)
    inflater = zlib_ng.decompressobj()
    pending = b""
    y = 0
    for piece in pieces:
        tail: bytes | memoryview = piece
        while tail and y < height:
            want = min(chunk, (height - y) * row_len - len(pending))
            out = inflater.decompress(tail, want)
            tail = inflater.unconsumed_tail
            pending = pending + out if pending else out
            rows = len(pending) // row_len
            if rows:
                bad_row = _native.unfilter(memoryview(pending)[: rows * row_len], pixels, y)
                if bad_row >= 0:
                    raise InvalidImage(f"{name} is corrupt: row {bad_row} has an unknown filter")
                y += rows
                pending = pending[rows * row_len :]
            if inflater.eof:
                break
        if y == height:
            inflater.decompress(tail, 1)
    if y < height:
        raise InvalidImage(
            f"{name} is truncated or corrupt: its image data ends after {y} of {height} rows"
        )
    return inflater.eof


def to_rgba(pixels: np.ndarray) -> np.ndarray:
    """The pixels with an alpha channel: decode() leaves opaque RGB images at 3 channels."""
    if pixels.shape[2] == 4:
        return pixels
    rgba = np.empty(pixels.shape[:2] + (4,), np.uint8)
    rgba[..., :3] = pixels
    rgba[..., 3] = 255
    return rgba


def _chunk(kind: bytes, body: bytes) -> bytes:
    return (
        struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib_ng.crc32(kind + body))
    )


def encode_indexed(rows: np.ndarray, palette: bytes, *, level: int = 1) -> bytes:
    """Write a palette PNG from (height, width + 1) rows whose first column is the filter byte."""
    height, width = rows.shape[0], rows.shape[1] - 1
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)
    return b"".join(
        (
            SIGNATURE,
            _chunk(b"IHDR", ihdr),
            _chunk(b"PLTE", palette),
            _chunk(b"IDAT", zlib_ng.compress(rows, level)),
            _IEND,
        )
    )


def encode(pixels: np.ndarray, *, level: int = 6) -> bytes:
    """Write an 8-bit RGB or RGBA PNG from a (height, width, 3 or 4) uint8 array."""
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] not in (3, 4):
        raise ValueError("pixels must be a (height, width, 3 or 4) uint8 array")
    height, width, channels = pixels.shape
    rows = np.zeros((height, width * channels + 1), np.uint8)
    rows[:, 1:] = pixels.reshape(height, width * channels)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2 if channels == 3 else 6, 0, 0, 0)
    return b"".join(
        (SIGNATURE, _chunk(b"IHDR", ihdr), _chunk(b"IDAT", zlib_ng.compress(rows, level)), _IEND)
    )
