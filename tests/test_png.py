"""Decoding PNGs: every filter and layout gives the right pixels; bad input gives a clear error."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np
import pytest
from PIL import Image

from tests.pngs import (
    SIGNATURE,
    chunk,
    filter_rows,
    header_only,
    interlaced,
    make_png,
    palette_png,
    random_image,
    with_rows,
)
from viewfinder.errors import ImageTooLarge, InvalidImage
from viewfinder.imaging import Limits, cores, decode, png, read_header


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("filters", [[0], [1], [2], [3], [4], [4, 3, 2, 1, 0]])
def test_every_row_filter_decodes_to_the_original_pixels(
    rng: np.random.Generator, channels: int, filters: list[int]
) -> None:
    pixels = random_image(rng, 9, 13, channels)
    decoded = decode(make_png(pixels, filters=filters))
    assert decoded.shape == pixels.shape
    assert np.array_equal(decoded, pixels)


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("width", [1, 2, 5, 64])
def test_runs_of_paeth_rows_decode_in_pairs_and_alone(
    rng: np.random.Generator, channels: int, width: int
) -> None:
    # Paeth rows next to each other are undone two at a time: runs of one, two and three.
    pixels = random_image(rng, 23, width, channels)
    decoded = decode(make_png(pixels, filters=[4, 4, 4, 1, 4, 2, 4, 4]))
    assert np.array_equal(decoded, pixels)


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("width", [6, 17, 40, 101])
def test_flat_background_in_paeth_rows_decodes_around_every_mark(
    rng: np.random.Generator, channels: int, width: int
) -> None:
    # Flat spans of Paeth rows are copied 16 bytes at a time: marks just before, inside and
    # just after a chunk, spans cut mid-pixel, a background whose colour changes down the page,
    # and rows busy enough to be undone in pairs.
    pixels = np.empty((30, width, channels), np.uint8)
    pixels[:] = (200, 210, 220, 255)[:channels]
    pixels[12:] = (20, 20, 20, 255)[:channels]
    for y, x in [(1, 0), (2, width - 1), (3, 5), (4, min(16, width - 1)), (5, width // 2)]:
        pixels[y, x] = (0, 120, 255, 128)[:channels]
    pixels[8, : width // 3] = 7  # a step in the row above the next rows' flat spans
    pixels[20:23] = random_image(rng, 3, width, channels)  # busy rows
    pixels[25, 2::5] = 99
    decoded = decode(make_png(pixels, filters=[4]))
    assert np.array_equal(decoded, pixels)
    decoded = decode(make_png(pixels, filters=[4, 4, 2]))
    assert np.array_equal(decoded, pixels)


def test_image_data_split_over_many_chunks_decodes(rng: np.random.Generator) -> None:
    pixels = random_image(rng, 40, 31, 4)
    assert np.array_equal(decode(make_png(pixels, filters=[4, 1], idat_pieces=50)), pixels)
    # Chunks are joined into pieces of about a megabyte: noise that does not compress spans two.
    pixels = random_image(rng, 600, 700, 3)
    data = make_png(pixels, filters=[4, 1, 2], idat_pieces=40)
    assert len(data) > 1 << 20
    assert np.array_equal(decode(data), pixels)


# Image data inflated whole (libdeflate) and streamed a few rows at a time (zlib-ng).
BOTH_INFLATES = pytest.mark.parametrize("whole", [png.WHOLE_INFLATE, 0], ids=["whole", "streamed"])


@BOTH_INFLATES
def test_a_large_image_decodes_in_pieces_like_libspng(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, whole: int
) -> None:
    monkeypatch.setattr(png, "WHOLE_INFLATE", whole)
    # Tall enough that rows are inflated and unfiltered in several rounds when streamed.
    pixels = np.repeat(random_image(rng, 1, 700, 3), 2100, axis=0)
    pixels[::7, ::3] = 17
    data = make_png(pixels, filters=[4, 2, 1], level=1)
    assert np.array_equal(decode(data), pixels)
    # Paeth rows paired across the rounds' boundaries, whatever rows a round holds.
    data = make_png(pixels, filters=[4, 4, 4, 2, 4], level=1)
    assert np.array_equal(decode(data), pixels)
    # A row longer than a round: a round is then one row.
    wide = random_image(rng, 3, png.INFLATE_ROUND // 3 + 100, 3)
    assert np.array_equal(decode(png.encode(wide, level=1)), wide)


@BOTH_INFLATES
@pytest.mark.parametrize("extra", [b"", bytes(13)], ids=["exact", "a row too many"])
def test_image_data_decodes_alike_inflated_whole_or_streamed(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, whole: int, extra: bytes
) -> None:
    # Image data that inflates to more than its rows does not end cleanly: the general decoder
    # judges it (and gives RGBA), whichever way it was inflated.
    monkeypatch.setattr(png, "WHOLE_INFLATE", whole)
    pixels = random_image(rng, 5, 4, 3)
    rows = b"".join(bytes([0]) + row.tobytes() for row in pixels)
    ihdr = struct.pack(">IIBBBBB", 4, 5, 8, 2, 0, 0, 0)
    idat = chunk(b"IDAT", zlib.compress(rows + extra))
    decoded = decode(SIGNATURE + chunk(b"IHDR", ihdr) + idat + chunk(b"IEND", b""))
    assert np.array_equal(decoded[..., :3], pixels)
    assert decoded.shape[2] == (3 if not extra else 4)


def saved(image: Image.Image, **options: object) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "PNG", **options)
    return buf.getvalue()


@pytest.mark.parametrize("mode", ["P", "L", "LA", "RGB", "RGBA"])
def test_other_png_kinds_decode_to_rgba(rng: np.random.Generator, mode: str) -> None:
    source = Image.fromarray(random_image(rng, 6, 5, 4), "RGBA")
    image = source.convert(mode)
    # Interlaced RGB/RGBA files leave the fast path too.
    decoded = decode(saved(image, interlace=mode in ("RGB", "RGBA")))
    assert decoded.shape[:2] == (6, 5)
    expected = np.asarray(image.convert("RGBA"))
    assert np.array_equal(decoded if decoded.shape[2] == 4 else _rgba(decoded), expected)


def _rgba(rgb: np.ndarray) -> np.ndarray:
    return np.dstack([rgb, np.full(rgb.shape[:2], 255, np.uint8)])


def test_sixteen_bit_grayscale_keeps_the_high_byte() -> None:
    gray = np.array([[0, 0x1234, 0xFFFF]], np.uint16)
    decoded = decode(saved(Image.fromarray(gray)))
    assert decoded[0, :, 0].tolist() == [0, 0x12, 0xFF]
    assert decoded[0, :, 3].tolist() == [255, 255, 255]


def test_rgb_with_a_transparent_colour_decodes_with_alpha(rng: np.random.Generator) -> None:
    pixels = random_image(rng, 4, 4, 3)
    pixels[0, 0] = (1, 2, 3)
    data = make_png(pixels, extra_chunks=((b"tRNS", struct.pack(">HHH", 1, 2, 3)),))
    decoded = decode(data)
    assert decoded.shape == (4, 4, 4)
    assert decoded[0, 0].tolist() == [1, 2, 3, 0]


def test_header_is_read_without_decoding() -> None:
    header = read_header(header_only(640, 480))
    assert (header.width, header.height, header.bit_depth, header.color_type) == (640, 480, 8, 6)


# ---- refusals ---------------------------------------------------------------------------------


def refused(
    data: bytes, match: str, *, error: type[Exception] = InvalidImage, **limits: int
) -> None:
    with pytest.raises(error, match=match) as info:
        decode(data, Limits(**limits) if limits else png.DEFAULT_LIMITS, name="base")
    assert str(info.value).startswith("base ")


def test_empty_data_is_refused() -> None:
    refused(b"", "base is empty")


def test_data_that_is_not_a_png_is_refused() -> None:
    refused(b"GIF89a" + b"\x00" * 40, "not a PNG file")


def test_a_jpeg_is_refused_as_not_a_png() -> None:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buf, "JPEG")
    refused(buf.getvalue(), "not a PNG file")


@pytest.mark.parametrize("keep", [8, 20, 40, 60, -30, -12, -1])
def test_truncated_data_is_refused(rng: np.random.Generator, keep: int) -> None:
    data = make_png(random_image(rng, 30, 30, 4), filters=[1])
    refused(data[:keep], "truncated")


def test_a_header_with_a_bad_checksum_is_refused(rng: np.random.Generator) -> None:
    data = bytearray(make_png(random_image(rng, 3, 3, 4)))
    data[20] ^= 0x40  # inside the IHDR body
    refused(bytes(data), "fails its checksum")


def test_corrupt_image_data_is_refused(rng: np.random.Generator) -> None:
    pixels = random_image(rng, 20, 20, 3)
    raw = zlib.compress(bytes([0] + [5] * 60) * 20)
    damaged = bytearray(raw)
    damaged[len(damaged) // 2] ^= 0xFF
    ihdr = struct.pack(">IIBBBBB", 20, 20, 8, 2, 0, 0, 0)
    data = SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", bytes(damaged)) + chunk(b"IEND", b"")
    del pixels
    refused(data, "corrupt")


def test_an_unknown_row_filter_is_refused() -> None:
    raw = zlib.compress(bytes([0] + [1] * 12) + bytes([9] + [1] * 12))
    ihdr = struct.pack(">IIBBBBB", 4, 2, 8, 2, 0, 0, 0)
    data = SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")
    refused(data, "row 1 has an unknown filter")


def test_image_data_shorter_than_the_header_claims_is_refused() -> None:
    refused(header_only(50, 50), r"ends after 0 of 50 rows")


def test_a_zero_sized_image_is_refused() -> None:
    refused(header_only(0, 10), "has no pixels")


def test_an_invalid_colour_type_is_refused() -> None:
    refused(header_only(4, 4, ctype=5), "invalid PNG colour type 5")


def test_a_file_over_the_byte_limit_is_refused_before_decoding(rng: np.random.Generator) -> None:
    data = make_png(random_image(rng, 40, 40, 4))
    refused(data, r"over the 0\.0 MB limit", error=ImageTooLarge, max_bytes=1000)


def test_a_decompression_bomb_is_refused_from_its_header() -> None:
    # 30000 x 30000 declared in a file of about a hundred bytes.
    refused(
        header_only(30000, 30000),
        "900,000,000 pixels, over the 100,000,000-pixel limit",
        error=ImageTooLarge,
    )


def test_the_pixel_limit_is_configurable(rng: np.random.Generator) -> None:
    data = make_png(random_image(rng, 10, 10, 4))
    refused(data, "100 pixels, over the 99-pixel limit", error=ImageTooLarge, max_pixels=99)
    assert decode(data, Limits(max_pixels=100)).shape == (10, 10, 4)


def test_a_palette_with_transparency_decodes_with_alpha() -> None:
    image = Image.new("P", (3, 1))
    image.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255])
    image.putdata([0, 1, 2])
    buf = io.BytesIO()
    image.save(buf, "PNG", transparency=bytes([255, 128, 0]))
    assert decode(buf.getvalue())[0, :, 3].tolist() == [255, 128, 0]


# ---- validation: the whole file checked, no pixel kept ---------------------------------------


def filtered(pixels: np.ndarray) -> bytes:
    return filter_rows(pixels, [0, 1, 2, 3, 4])


def bad_filter(rows: bytes, row_length: int, row: int) -> bytes:
    """The rows with filter byte 9 on one of them."""
    at = row * row_length
    return rows[:at] + b"\x09" + rows[at + 1 :]


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "P", "L", "LA", "I;16", "1"])
def test_every_kind_of_png_passes_validation(rng: np.random.Generator, mode: str) -> None:
    buf = io.BytesIO()
    Image.fromarray(random_image(rng, 29, 37, 3)).convert(mode).save(buf, "PNG")
    header = png.validate(buf.getvalue())
    assert (header.width, header.height) == (37, 29)


def test_an_interlaced_png_passes_validation_and_decodes(rng: np.random.Generator) -> None:
    pixels = random_image(rng, 11, 13, 3)
    data = interlaced(pixels)
    assert png.validate(data).interlaced
    assert (decode(data)[..., :3] == pixels).all()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p, r: with_rows(p, r[:2] + b"\xff" * 30 + r[32:], compress=False), "not inflate"),
        (lambda p, r: with_rows(p, r[: -(p.shape[1] * 3 + 1) * 2]), "ends after 18 of 20 rows"),
        (lambda p, r: with_rows(p, r + b"\x00" * (p.shape[1] * 3 + 1)), "runs past the last row"),
        (lambda p, r: with_rows(p, zlib.compress(r)[:-4], compress=False), "does not end"),
        (lambda p, r: with_rows(p, zlib.compress(r) + b"junk", compress=False), "data after"),
        (
            lambda p, r: with_rows(
                p, r[: 3 * (p.shape[1] * 3 + 1)] + b"\x09" + r[3 * (p.shape[1] * 3 + 1) + 1 :]
            ),
            "row 3 has an unknown filter",
        ),  # fmt: skip
    ],
)
def test_corrupt_image_data_fails_validation_with_what_is_wrong(
    rng: np.random.Generator, damage: Any, message: str
) -> None:
    pixels = random_image(rng, 20, 16, 3)
    with pytest.raises(InvalidImage, match=message):
        png.validate(damage(pixels, filtered(pixels)))


def test_a_file_that_ends_early_or_goes_on_after_iend_fails_validation(
    rng: np.random.Generator,
) -> None:
    good = make_png(random_image(rng, 20, 16, 3))
    assert png.validate(good).width == 16
    idat = good.index(b"IDAT") - 4
    with pytest.raises(InvalidImage, match="no image data"):
        png.validate(good[:idat] + chunk(b"IEND", b""))
    with pytest.raises(InvalidImage, match="2 bytes after its IEND"):
        png.validate(good + b"xx")
    with pytest.raises(InvalidImage, match="'IDAT' chunk is cut short"):
        png.validate(good[:-20])
    flipped = bytearray(good)
    flipped[idat + 12] ^= 1
    with pytest.raises(InvalidImage, match="'IDAT' chunk fails its checksum"):
        png.validate(bytes(flipped))
    unknown = good[:idat] + chunk(b"ZZZZ", b"?") + good[idat:]
    with pytest.raises(InvalidImage, match="unknown critical chunk 'ZZZZ'"):
        png.validate(unknown)
    assert png.validate(good[:idat] + chunk(b"tEXt", b"k\x00v") + good[idat:])  # ancillary: fine


@pytest.mark.parametrize("filters", [[0], [1], [2], [3], [4], [4, 3, 2, 1, 0]])
@pytest.mark.parametrize("alphas", [b"", bytes([0, 128, 255, 7])])
def test_palette_rows_are_read_band_by_band_as_decode_gives_them(
    rng: np.random.Generator, filters: list[int], alphas: bytes
) -> None:
    colours = rng.integers(0, 256, (6, 3), dtype=np.uint8)
    indices = rng.integers(0, 6, (37, 23), dtype=np.uint8)
    data = palette_png(indices, colours, alphas=alphas, filters=filters)
    whole = decode(data)
    assert whole.shape == (37, 23, 4)
    for top, count in ((0, 37), (5, 9), (36, 1)):
        assert np.array_equal(png.decode_rows(data, top, count), whole[top : top + count])


def test_a_diff_images_rows_read_band_by_band_are_those_of_the_whole_image(
    rng: np.random.Generator,
) -> None:
    from viewfinder.imaging import compare

    base = random_image(rng, 120, 90, 3)
    candidate = base.copy()
    candidate[40:60, 10:50] = 0
    diff_png = compare(png.encode(base), png.encode(candidate)).diff_png
    assert diff_png is not None and read_header(diff_png).color_type == 3
    assert np.array_equal(png.decode_rows(diff_png, 30, 40), decode(diff_png)[30:70])


@pytest.mark.parametrize("side", [64, 1024])  # below and above png.PAIR_PIXELS
def test_a_pair_decodes_as_each_alone_and_errors_name_their_image(
    rng: np.random.Generator, side: int
) -> None:
    base = make_png(random_image(rng, side, side, 3))
    candidate = make_png(random_image(rng, side, side + 1, 4))
    broken = header_only(side, side)
    a, b = png.decode_pair(base, candidate)
    assert np.array_equal(a, decode(base)) and np.array_equal(b, decode(candidate))
    with pytest.raises(InvalidImage, match="^candidate "):
        png.decode_pair(base, broken)
    with pytest.raises(InvalidImage, match="^base "):
        png.decode_pair(broken, candidate)
    with pytest.raises(InvalidImage, match="^base "):
        png.decode_pair(broken, broken)


def test_a_process_of_one_a_core_decodes_a_pair_on_its_own_thread(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cores, "_spread", True)  # put back after the test

    def no_threads(*args: object) -> None:
        raise AssertionError("decoded on another thread")

    base = make_png(random_image(rng, 1024, 1024, 3))
    candidate = make_png(random_image(rng, 1024, 1024, 3))
    cores.keep_to_one()
    monkeypatch.setattr(png, "_beside", no_threads)
    a, b = png.decode_pair(base, candidate)
    assert np.array_equal(a, decode(base)) and np.array_equal(b, decode(candidate))
