"""Reading and writing PNG files, with limits checked before any pixel is decoded.

Screenshots are almost always 8-bit RGB or RGBA without interlacing; those are inflated with
libdeflate (zlib-ng, a few rows at a time, for huge images) and unfiltered by the native module,
several times faster than a general decoder.
Every other kind of PNG (palette, grayscale, 16-bit, interlaced) is rare in screenshots and goes
through Pillow, which applies tRNS transparency (libspng, through pyspng, ignores it).
"""

from __future__ import annotations

import io
import struct
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import deflate
import numpy as np
from zlib_ng import zlib_ng

from viewfinder.errors import ImageTooLarge, InvalidImage
from viewfinder.imaging import _native, cores

if TYPE_CHECKING:
    from PIL import Image

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


_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
# Adam7 passes: (first column, first row, column step, row step).
_ADAM7 = (
    (0, 0, 8, 8),
    (4, 0, 8, 8),
    (0, 4, 4, 8),
    (2, 0, 4, 4),
    (0, 2, 2, 4),
    (1, 0, 2, 2),
    (0, 1, 1, 2),
)
_KNOWN_CRITICAL = {b"IHDR", b"PLTE", b"IDAT", b"IEND"}
_VALIDATE_CHUNK = 4 << 20  # bytes inflated at a time: all a validation ever holds


def _rows(header: Header) -> list[tuple[int, int]]:
    """(rows, bytes per row without its filter byte) of each pass of the image data."""
    bits = header.bit_depth * _CHANNELS[header.color_type]
    if not header.interlaced:
        return [(header.height, (header.width * bits + 7) // 8)]
    passes = []
    for x0, y0, dx, dy in _ADAM7:
        width = (header.width - x0 + dx - 1) // dx
        height = (header.height - y0 + dy - 1) // dy
        if width > 0 and height > 0:
            passes.append((height, (width * bits + 7) // 8))
    return passes


def validate(data: bytes, limits: Limits = DEFAULT_LIMITS, *, name: str = "image") -> Header:
    """Check a whole PNG without decoding its pixels: every chunk is complete and passes its
    checksum, the image data is one zlib stream that inflates to exactly the rows the header
    declares, each with a known filter, and IEND ends the file. Holds a few MB at most,
    whatever the image's size. Raises InvalidImage, or ImageTooLarge (see read_header)."""
    header = read_header(data, limits, name=name)
    view = memoryview(data)
    pieces: list[memoryview] = []
    pos, end = 8, len(data)
    seen_palette = False
    while True:
        if pos + 12 > end:
            raise InvalidImage(f"{name} is truncated: the PNG ends before its IEND chunk")
        length, kind = struct.unpack_from(">I4s", data, pos)
        body_end = pos + 8 + length
        if body_end + 4 > end:
            raise InvalidImage(
                f"{name} is truncated: its {kind.decode('latin-1')!r} chunk is cut short"
            )
        (crc,) = struct.unpack_from(">I", data, body_end)
        if zlib_ng.crc32(view[pos + 4 : body_end]) != crc:
            raise InvalidImage(
                f"{name} is corrupt: its {kind.decode('latin-1')!r} chunk fails its checksum"
            )
        if kind == b"IDAT":
            pieces.append(view[pos + 8 : body_end])
        elif kind == b"PLTE":
            seen_palette = True
        elif kind == b"IEND":
            if body_end + 4 != end:
                raise InvalidImage(f"{name} has {end - body_end - 4} bytes after its IEND chunk")
            break
        elif kind[0] < 0x61 and kind not in _KNOWN_CRITICAL:  # upper case: critical
            raise InvalidImage(f"{name} has an unknown critical chunk {kind.decode('latin-1')!r}")
        pos = body_end + 4
    if not pieces:
        raise InvalidImage(f"{name} has no image data (no IDAT chunk)")
    if header.color_type == 3 and not seen_palette:
        raise InvalidImage(f"{name} is a palette image without its palette (PLTE chunk)")
    try:
        _check_rows(pieces, _rows(header), name)
    except _InflateError as exc:
        raise InvalidImage(f"{name} is corrupt: its image data does not inflate ({exc})") from exc
    return header


def _check_rows(pieces: list[memoryview], passes: list[tuple[int, int]], name: str) -> None:
    """Inflate the image data a few MB at a time, checking each row's filter byte, then that
    the stream ends right after the last row."""
    layout = [(count, width + 1) for count, width in passes]
    expected = sum(count * row for count, row in layout)
    inflater = zlib_ng.decompressobj()
    pending = b""
    done = 0  # bytes of rows checked
    stage, left = 0, layout[0][0]  # the pass being read and its rows still to come
    row_number = 0
    rest: list[bytes | memoryview] = []  # compressed data after the last row's
    for index, piece in enumerate(pieces):
        tail: bytes | memoryview = piece
        while tail and done + len(pending) < expected and not inflater.eof:
            out = inflater.decompress(tail, min(_VALIDATE_CHUNK, expected - done - len(pending)))
            tail = inflater.unconsumed_tail
            pending = pending + out if pending else out
            while stage < len(layout):
                row = layout[stage][1]
                rows = min(len(pending) // row, left)
                if not rows:
                    break
                filters = np.frombuffer(pending, np.uint8, rows * row).reshape(rows, row)[:, 0]
                if int(filters.max()) > 4:
                    bad = row_number + int(np.argmax(filters > 4))
                    raise _unknown_filter(name, bad)
                pending = pending[rows * row :]
                done += rows * row
                row_number += rows
                left -= rows
                if left == 0:
                    stage += 1
                    left = layout[stage][0] if stage < len(layout) else 0
        if done == expected or inflater.eof:
            rest = [tail, *pieces[index + 1 :]]
            break
    if done < expected:
        rows_total = sum(count for count, _ in layout)
        raise InvalidImage(
            f"{name} is truncated or corrupt: its image data ends after {row_number} of "
            f"{rows_total} rows"
        )
    leftover = 0  # compressed bytes after the stream's end
    for data in rest:
        tail = data
        while tail and not inflater.eof:
            if inflater.decompress(tail, 1):
                raise InvalidImage(f"{name} is corrupt: its image data runs past the last row")
            tail = inflater.unconsumed_tail
        if inflater.eof:
            leftover += len(tail)
    if not inflater.eof:
        raise InvalidImage(f"{name} is truncated: its image data's zlib stream does not end")
    if leftover or inflater.unused_data:
        raise InvalidImage(f"{name} is corrupt: there is data after its image data's end")


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


# Pairs whose smaller image has at least this many pixels decode side by side: unfiltering
# releases the GIL (and so does inflating, for images streamed), so the candidate decodes on
# another core while the base does (bench.engine's interleaved rounds: 1280x800 pairs 17% less
# time per comparison, 2560x1600 ones 21%). Below it the hand-off costs more than it saves: the
# style corpus's 640x560 pairs took 3-5% longer side by side.
PAIR_PIXELS = 1 << 19


def decode_pair(
    base: bytes, candidate: bytes, limits: Limits = DEFAULT_LIMITS
) -> tuple[np.ndarray, np.ndarray]:
    """decode() of a base and a candidate, named "base" and "candidate" in errors; when both
    fail, the base's error is raised."""
    smaller = min(
        header.width * header.height
        for header in (
            read_header(base, limits, name="base"),
            read_header(candidate, limits, name="candidate"),
        )
    )
    if smaller < PAIR_PIXELS or not cores.may_spread():
        return decode(base, limits, name="base"), decode(candidate, limits, name="candidate")
    second = _beside(candidate, limits, "candidate")
    try:
        first = decode(base, limits, name="base")
    except BaseException:
        second.join()  # its own error, if any, is the lesser news
        raise
    return first, second.result()


class _Beside(threading.Thread):
    """decode() of one image on a thread of its own. A thread a pair rather than a pool's:
    starting one costs some 60 us more than handing a pool a job (120 against 60 us here),
    against the 8 ms and more that pairs of the sizes decoded side by side take to compare, and
    a command-line diff then does not import concurrent.futures (and logging with it)."""

    def __init__(self, data: bytes, limits: Limits, name: str) -> None:
        super().__init__(name="png-decode", daemon=True)
        self._job = (data, limits, name)
        self._pixels: np.ndarray | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        data, limits, name = self._job
        try:
            self._pixels = decode(data, limits, name=name)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> np.ndarray:
        self.join()
        if self._error is not None:
            raise self._error
        assert self._pixels is not None
        return self._pixels


def _beside(data: bytes, limits: Limits, name: str) -> _Beside:
    """decode() of data started on another thread."""
    thread = _Beside(data, limits, name)
    thread.start()
    return thread


def _decode_general(data: bytes, name: str) -> np.ndarray:
    # Here rather than at the top: a screenshot never comes this way, and loading Pillow costs
    # a command-line diff about a tenth of its time as a process.
    from PIL import Image

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


# Rows inflated per round, in bytes. Each round's output is a new bytes object: at a few MB it
# came fresh from the kernel every time, a page fault per 4 KB, and decoding a 1280x1120
# screenshot took twice as long (bench.engine's style corpus); half a MB is reused from the heap
# and is still in the cache when it is unfiltered.
INFLATE_ROUND = 512 << 10
# Image data that inflates to at most this many bytes is inflated in one call by libdeflate,
# 3x faster than zlib-ng's streamed inflate on the style corpus's screenshots; beyond it, a few
# rows at a time, so that a huge image's inflated copy never exists whole.
WHOLE_INFLATE = 16 << 20


def _inflate_into(pixels: np.ndarray, pieces: list[memoryview], name: str) -> bool:
    """Inflate and unfilter the image data into ``pixels``. Returns False when the stream does
    not end cleanly after the last row."""
    height = pixels.shape[0]
    row_len = pixels.shape[1] * pixels.shape[2] + 1
    size = height * row_len
    if size <= WHOLE_INFLATE:
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        try:
            raw = memoryview(deflate.zlib_decompress(data, size))
        except deflate.DeflateError:
            raw = memoryview(b"")  # the streamed inflate below says what is wrong
        # A stream that inflated to exactly the rows, checksum verified, ended cleanly.
        if len(raw) == size:
            bad_row = _native.unfilter(raw, pixels, 0)
            if bad_row >= 0:
                raise _unknown_filter(name, bad_row)
            return True
    return _stream_into(pixels, pieces, name)


def _unknown_filter(name: str, row: int) -> InvalidImage:
    return InvalidImage(f"{name} is corrupt: row {row} has an unknown filter")


def _stream_into(pixels: np.ndarray, pieces: list[memoryview], name: str) -> bool:
    """Inflate and unfilter a few rows at a time, so the inflated copy of the whole image never
    exists; as _inflate_into."""
    height = pixels.shape[0]
    row_len = pixels.shape[1] * pixels.shape[2] + 1
    chunk = max(INFLATE_ROUND // row_len, 1) * row_len
    inflater = zlib_ng.decompressobj()
    pending = b""
    y = 0
    for piece in _joined(pieces):
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
                    raise _unknown_filter(name, bad_row)
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


def _joined(pieces: list[memoryview], size: int = 1 << 20) -> Iterator[bytes | memoryview]:
    """The image data chunks joined into pieces of about ``size`` compressed bytes: encoders
    write chunks of 8 to 64 KB, and a round of inflating and unfiltering for each cost more
    than the work it did on a screenshot."""
    group: list[memoryview] = []
    total = 0
    for piece in pieces:
        group.append(piece)
        total += len(piece)
        if total >= size:
            yield group[0] if len(group) == 1 else b"".join(group)
            group, total = [], 0
    if group:
        yield group[0] if len(group) == 1 else b"".join(group)


def decode_rows(
    data: bytes,
    top: int,
    count: int,
    limits: Limits = DEFAULT_LIMITS,
    *,
    name: str = "image",
) -> np.ndarray:
    """Rows ``top`` to ``top + count`` (fewer at the bottom) of a PNG, as decode() gives them,
    without holding the whole image (see bands). Raises what decode() raises, and InvalidImage
    for a band outside the image."""
    header = read_header(data, limits, name=name)
    if top < 0 or count < 1 or top >= header.height:
        raise InvalidImage(f"rows {top}..{top + count} are outside {name} ({header.height} rows)")
    return np.concatenate(list(bands(data, top, top + count, limits, name=name)))


def bands(
    data: bytes,
    top: int,
    bottom: int,
    limits: Limits = DEFAULT_LIMITS,
    *,
    name: str = "image",
) -> Iterator[np.ndarray]:
    """Rows ``top`` to ``bottom`` of a PNG in consecutive bands of a few MB, each a copy the
    caller may keep. Rows above ``top`` are unfiltered and dropped, and nothing below
    ``bottom`` is inflated, so a band of a 10000x10000 image costs a few MB, not 400. Rare
    kinds of PNG (palette, grey, 16-bit, interlaced, tRNS) are decoded whole and sliced."""
    header = read_header(data, limits, name=name)
    bottom = min(bottom, header.height)
    fast = header.bit_depth == 8 and header.color_type in (2, 3, 6) and not header.interlaced
    pieces, transparent, lut = _idat(data, header, name)
    if not fast or transparent is not None or (header.color_type == 3 and lut is None):
        yield decode(data, limits, name=name)[top:bottom]
        return
    # Palette images (diff images among them) are unfiltered as one index a pixel and looked up.
    channels = {2: 3, 3: 1, 6: 4}[header.color_type]
    row_len = header.width * channels + 1
    # A band is a few MB as read and as given (a palette row grows four times when looked up).
    step = max(1, _VALIDATE_CHUNK // (header.width * 4 if lut is not None else row_len))
    # Row 0 of the scratch holds the last row of the previous step: the "up" of the next one.
    scratch = np.zeros((step + 1, header.width, channels), np.uint8)
    inflater = zlib_ng.decompressobj()
    pending = b""
    y = 0
    try:
        for piece in pieces:
            tail: bytes | memoryview = piece
            while tail and y < bottom:
                want = min(step, bottom - y) * row_len - len(pending)
                out = inflater.decompress(tail, max(want, 1))
                tail = inflater.unconsumed_tail
                pending = pending + out if pending else out
                rows = min(len(pending) // row_len, step, bottom - y)
                if rows:
                    first = 0 if y == 0 else 1
                    bad = _native.unfilter(memoryview(pending)[: rows * row_len], scratch, first)
                    if bad >= 0:
                        raise _unknown_filter(name, y + bad - first)
                    got = scratch[first : first + rows]
                    lo, hi = max(y, top), y + rows
                    if lo < hi:
                        band = got[lo - y : hi - y]
                        yield lut[band[..., 0]] if lut is not None else band.copy()
                    scratch[0] = got[-1]
                    y += rows
                    pending = pending[rows * row_len :]
                if inflater.eof:
                    break
            if y >= bottom:
                return
    except _InflateError as exc:
        raise InvalidImage(f"{name} is corrupt: its image data does not inflate ({exc})") from exc
    if y < bottom:
        raise InvalidImage(f"{name} is truncated: its image data ends after {y} rows")


def shrunk(
    data: bytes,
    bottom: int,
    factor: int,
    limits: Limits = DEFAULT_LIMITS,
    *,
    name: str = "image",
) -> np.ndarray:
    """The top ``bottom`` rows of a PNG, shrunk ``factor`` times each way by averaging blocks,
    band by band (a thumbnail of a huge image never holds the image). RGB, as uint8."""
    parts = []
    carry: np.ndarray | None = None
    for band in bands(data, 0, bottom, limits, name=name):
        rgb = band[..., :3]
        if carry is not None:
            rgb = np.concatenate([carry, rgb])
        whole = rgb.shape[0] // factor * factor
        carry = rgb[whole:] if whole < rgb.shape[0] else None
        if whole:
            parts.append(_block_mean(rgb[:whole], factor))
    if carry is not None and carry.shape[0]:
        parts.append(_block_mean(carry, factor, rows=carry.shape[0]))
    return np.concatenate(parts)


def _block_mean(rgb: np.ndarray, factor: int, rows: int | None = None) -> np.ndarray:
    tall = rows or factor
    width = rgb.shape[1] // factor * factor or rgb.shape[1]
    step = factor if rgb.shape[1] >= factor else 1
    blocks = rgb[:, :width].reshape(rgb.shape[0] // tall, tall, width // step, step, 3)
    # Integer sums: a float mean would hold a float64 copy of the whole band (8 bytes a sample).
    count = tall * step
    sums = blocks.sum(axis=(1, 3), dtype=np.uint32)
    mean: np.ndarray = ((sums + count // 2) // count).astype(np.uint8)
    return mean


def _idat(
    data: bytes, header: Header, name: str
) -> tuple[list[memoryview], bytes | None, np.ndarray | None]:
    """The image data's pieces, an RGB image's transparent colour (tRNS), if any, and a palette
    image's colours as a 256-entry RGBA lookup table (what decode() gives such an image)."""
    pieces: list[memoryview] = []
    transparent: bytes | None = None
    palette: bytes | None = None
    alphas = b""
    view = memoryview(data)
    pos, end = 33, len(data)
    while pos + 12 <= end:
        length, kind = struct.unpack_from(">I4s", data, pos)
        body_end = pos + 8 + length
        if body_end + 4 > end:
            break
        if kind == b"IDAT":
            pieces.append(view[pos + 8 : body_end])
        elif kind == b"PLTE" and length % 3 == 0:
            palette = data[pos + 8 : body_end]
        elif kind == b"tRNS" and header.color_type == 2 and length == 6:
            transparent = data[pos + 9 : body_end : 2]
        elif kind == b"tRNS" and header.color_type == 3:
            alphas = data[pos + 8 : body_end]
        elif kind == b"IEND":
            lut = None
            if header.color_type == 3 and palette is not None:
                lut = np.zeros((256, 4), np.uint8)
                colours = np.frombuffer(palette, np.uint8).reshape(-1, 3)[:256]
                lut[: len(colours), :3] = colours
                lut[: len(colours), 3] = 255
                lut[: min(len(alphas), len(colours)), 3] = np.frombuffer(alphas, np.uint8)[
                    : len(colours)
                ]
            return pieces, transparent, lut
        pos = body_end + 4
    raise InvalidImage(f"{name} is truncated: the PNG ends before its IEND chunk")


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
