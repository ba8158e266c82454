"""Each source of shots in real Chromium (and pypdfium2): a page at desktop and mobile sizes,
whole or first screen; an email in light and dark without its scripts; a PDF's first five
pages; images given as data URLs, base64 and URLs. Shots carry their DOM and boxes, and the
same page captured twice is the same pixels."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.capture_site import CLEAN_EMAIL, Site, running_site, slide_deck
from viewfinder.capture import (
    DESKTOP,
    MOBILE,
    Policy,
    Shot,
    capture_html,
    capture_url,
    load_images,
    render_pdf,
)
from viewfinder.capture.axe import MISSING
from viewfinder.errors import AddressRefused, ImageTooLarge, InvalidImage, InvalidInput
from viewfinder.imaging import Limits, decode, png


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site() as s:
        yield s


@pytest.fixture(scope="module")
def clean(site: Site) -> list[Shot]:
    return capture_url(f"{site.url}/clean", policy=site.policy())


def _box(shot: Shot, text: str) -> tuple[float, float, float, float]:
    [box] = [b for b in shot.boxes if b.text == text or b.name == text]
    return box.x, box.y, box.w, box.h


def test_a_page_is_captured_at_desktop_and_mobile_size_with_its_dom_and_boxes(
    clean: list[Shot], site: Site
) -> None:
    desktop, mobile = clean
    assert (desktop.label, desktop.width, desktop.height, desktop.scale) == (
        "desktop",
        1280,
        800,
        1,
    )
    assert (mobile.label, mobile.width, mobile.height, mobile.scale) == ("mobile", 750, 1624, 2)
    assert mobile.mobile and not desktop.mobile and mobile.viewport == (375, 812)
    for shot in clean:
        assert shot.origin == "page" and shot.url == f"{site.url}/clean"
        assert decode(shot.png).shape[:2] == (shot.height, shot.width)
        dom = json.loads(shot.dom or b"")
        assert dom["title"] == "Acme tools" and dom["lang"] == "en"
        assert dom["root"]["tag"] == "html" and dom["nodes"] > 10
        [cta] = [b for b in shot.boxes if b.name == "Buy now"]
        assert cta.actionable and cta.role == "link" and cta.tag == "a"
        assert cta.color == "rgb(255, 255, 255)" and cta.font_weight == 700
        heading = [b for b in shot.boxes if b.text == "Tools that last"][0]
        assert heading.role == "heading" and heading.font_size == 32
        assert shot.violations == () and shot.blocked == () and shot.notes == ()
        meta = json.loads(shot.boxes_json())
        assert meta["label"] == shot.label and len(meta["boxes"]) == len(shot.boxes)
    # The same heading, in CSS px, sits where each layout puts it: 24 px in from the left.
    assert _box(desktop, "Tools that last")[0] == _box(mobile, "Tools that last")[0] == 24


def test_a_whole_page_is_captured_to_its_end_and_cut_at_the_height_limit(site: Site) -> None:
    [whole] = capture_url(
        f"{site.url}/no-cta", policy=site.policy(), viewports=[DESKTOP], full_page=True
    )
    assert whole.width == 1280 and 2500 < whole.height < 3200
    assert any(b.name == "Buy now" and b.y > 2000 for b in whole.boxes)
    [cut] = capture_url(
        f"{site.url}/no-cta",
        policy=site.policy(max_height=1000),
        viewports=[DESKTOP],
        full_page=True,
    )
    assert cut.height == 1000 and "stops at 1000 px" in cut.notes[0]
    assert all(b.y < 1000 for b in cut.boxes)


def test_a_url_with_a_fragment_is_captured_from_the_top_of_the_page(site: Site) -> None:
    [shot] = capture_url(f"{site.url}/no-cta#buy", policy=site.policy(), viewports=[DESKTOP])
    [heading] = [b for b in shot.boxes if b.text == "Our story"]
    assert 0 < heading.y < 100
    assert not [b for b in shot.boxes if b.name == "Buy now"]  # far below the first screen


def test_the_same_page_captured_twice_is_the_same_pixels(site: Site) -> None:
    first = capture_url(f"{site.url}/moving", policy=site.policy())
    second = capture_url(f"{site.url}/moving", policy=site.policy())
    for a, b in zip(first, second, strict=True):
        assert np.array_equal(decode(a.png), decode(b.png)), a.label


def test_an_email_is_rendered_600_px_wide_in_light_and_dark_without_its_scripts(
    site: Site,
) -> None:
    light, dark = capture_html(CLEAN_EMAIL, policy=site.policy())
    assert (light.label, dark.label) == ("light", "dark")
    assert (light.color_scheme, dark.color_scheme) == ("light", "dark")
    for shot in (light, dark):
        assert shot.origin == "email" and shot.width == 600 and shot.height >= 800
        body = json.loads(shot.dom or b"")["root"]["children"][1]
        assert body["tag"] == "body" and "data-ran" not in body.get("attrs", {})
        assert any(b.text == "Thanks for your order" for b in shot.boxes)
    [phone, _] = capture_html(CLEAN_EMAIL, policy=site.policy(), mobile=True)
    assert (phone.width, phone.scale, phone.mobile) == (750, 2, True)


def test_bad_html_is_refused_before_rendering() -> None:
    with pytest.raises(InvalidInput, match="empty"):
        capture_html("  ")
    with pytest.raises(InvalidInput, match="at most 2,048 are rendered"):
        capture_html("<p>" + "x" * 4000, policy=Policy(max_bytes=2048))


@pytest.fixture(scope="module")
def deck() -> bytes:
    return slide_deck()


def test_a_pdf_is_rendered_one_shot_per_page_at_most_five(deck: bytes) -> None:
    shots = render_pdf(deck)
    assert [s.label for s in shots] == ["page-1", "page-2", "page-3", "page-4", "page-5"]
    assert all((s.width, s.height, s.origin) == (1280, 720, "pdf") for s in shots)
    assert "has 7 pages; the first 5 were rendered" in shots[0].notes[0]
    page_two = json.loads(shots[1].dom or b"")
    assert page_two["page"] == 2 and page_two["size_pt"] == pytest.approx([720, 405], abs=0.2)
    title = [b for b in shots[1].boxes if b.text == "Slide 2"][0]
    assert title.font_size == pytest.approx(2 * 22 * 4 / 3, rel=0.02)  # 2em of 22px, 1280/960
    assert len(shots[1].boxes) > len(shots[0].boxes)
    as_base64 = render_pdf(base64.b64encode(deck).decode(), max_pages=1)
    as_data_url = render_pdf("data:application/pdf;base64," + base64.b64encode(deck).decode())
    assert as_base64[0].png == shots[0].png == as_data_url[0].png


def test_a_file_that_is_not_a_pdf_is_refused() -> None:
    with pytest.raises(InvalidInput, match="not a PDF"):
        render_pdf(b"<html></html>")
    with pytest.raises(InvalidInput, match="cannot be read"):
        render_pdf(b"%PDF-1.7 but nothing after it")


def _encoded(kind: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 60)).save(out, kind)
    return out.getvalue()


def test_images_arrive_as_data_urls_base64_or_urls_and_are_kept_as_png(site: Site) -> None:
    site.files["/photo.webp"] = (_encoded("WEBP"), "image/webp")
    given_png = _encoded("PNG")
    shots = load_images(
        [
            "data:image/png;base64," + base64.b64encode(given_png).decode(),
            base64.b64encode(_encoded("JPEG")).decode(),
            f"{site.url}/photo.webp",
        ],
        policy=site.policy(),
    )
    assert [s.label for s in shots] == ["image-1", "image-2", "image-3"]
    assert shots[0].png == given_png
    for shot in shots:
        assert shot.origin == "image" and shot.png.startswith(png.SIGNATURE)
        pixels = decode(shot.png)
        assert pixels.shape[:2] == (30, 40) == (shot.height, shot.width)
        assert abs(int(pixels[15, 20, 0]) - 200) < 8


def test_images_that_are_not_images_or_too_big_or_unsafe_are_refused(site: Site) -> None:
    with pytest.raises(InvalidInput, match="does not decode as base64"):
        load_images(["not base64 at all!"])
    with pytest.raises(InvalidImage, match="not a PNG, JPEG or WebP"):
        load_images([base64.b64encode(b"GIF89a....").decode()])
    with pytest.raises(ImageTooLarge):
        load_images([_encoded("PNG")], policy=Policy(limits=Limits(max_pixels=100)))
    with pytest.raises(ImageTooLarge, match="at most 100 are accepted"):
        load_images([_encoded("JPEG")], policy=Policy(limits=Limits(max_bytes=100)))
    with pytest.raises(AddressRefused, match="https://"):
        load_images(["http://93.184.215.14/x.png"])  # plain http to a public host
    with pytest.raises(AddressRefused, match="loopback"):
        load_images([f"https://127.0.0.1:{site.port}/pixel.png"])
    [missing] = load_images([f"{site.url}/gone.png"], policy=site.policy())
    assert missing.failed and "answered HTTP 404" in (missing.reason or "")


def test_without_axe_core_a_capture_still_works_and_says_how_to_get_it(site: Site) -> None:
    policy = site.policy(axe_path=Path("/nonexistent/axe.min.js"))
    [shot] = capture_url(f"{site.url}/clean", policy=policy, viewports=[MOBILE])
    assert shot.origin == "page" and shot.violations == ()
    assert shot.notes == (MISSING,) and "make install" in MISSING
