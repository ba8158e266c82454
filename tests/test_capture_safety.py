"""Captured pages are held to the guard and the limits, in real Chromium: private addresses
refused before anything is fetched, a redirect into the private network refused, a page's
requests into it (images, fetches, WebSockets) blocked and never received, the allow-list
opening localhost:PORT, file: refused; a page too slow, too big or whose scripts never stop
fails with a placeholder that says why, and the browser stays usable after it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tests.capture_site import Site, running_site
from viewfinder.capture import DESKTOP, Guard, Policy, capture_url
from viewfinder.errors import AddressRefused, CaptureFailed
from viewfinder.imaging import decode


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site() as s:
        yield s


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",
        "http://169.254.169.254/latest/",
        "http://[::1]/",
        "file:///etc/passwd",
    ],
)
def test_a_page_on_a_refused_address_raises_before_anything_is_fetched(url: str) -> None:
    for mode in ("placeholder", "raise"):
        with pytest.raises(AddressRefused):
            capture_url(url, policy=Policy(), on_failure=mode)  # type: ignore[arg-type]


def test_a_redirect_into_the_private_network_is_refused_and_never_reached(site: Site) -> None:
    url = f"{site.url}/redirect?to={site.inner}/clean"
    with pytest.raises(AddressRefused) as refused:
        capture_url(url, policy=site.policy(), viewports=[DESKTOP], on_failure="raise")
    assert f"{site.inner}/clean" in refused.value.message
    assert "loopback" in refused.value.message
    [shot] = capture_url(url, policy=site.policy(), viewports=[DESKTOP])
    assert shot.origin == "capture_failed" and shot.reason is not None
    assert "127.0.0.2" in shot.reason
    assert site.inner_hits() == []


def test_requests_a_page_makes_into_the_private_network_are_blocked(site: Site) -> None:
    [shot] = capture_url(f"{site.url}/subresources", policy=site.policy(), viewports=[DESKTOP])
    assert shot.origin == "page"
    blocked = "\n".join(shot.blocked)
    assert "169.254.169.254:80 refused" in blocked
    assert "10.1.2.3:80 refused" in blocked
    assert "10.4.5.6:8080 refused" in blocked  # a WebSocket
    assert f"127.0.0.2:{site.inner.rsplit(':', 1)[1]} refused" in blocked
    assert site.inner_hits() == []
    assert ("site", "/pixel.png") in site.hits  # the page's own image did load


def test_the_allow_list_opens_localhost_on_its_port_only(site: Site) -> None:
    url = f"http://localhost:{site.port}/clean"
    with pytest.raises(AddressRefused, match="loopback"):
        capture_url(url, policy=Policy(), viewports=[DESKTOP])
    with pytest.raises(AddressRefused):
        capture_url(url, policy=Policy(guard=Guard([f"localhost:{site.port + 1}"])))
    [shot] = capture_url(
        url, policy=Policy(guard=Guard([f"localhost:{site.port}"])), viewports=[DESKTOP]
    )
    assert shot.origin == "page" and shot.url == url
    assert any(b.text == "Tools that last" for b in shot.boxes)


def test_a_page_slower_than_the_time_limit_gives_a_placeholder_that_says_so(site: Site) -> None:
    [shot] = capture_url(f"{site.url}/slow", policy=site.policy(timeout=2), viewports=[DESKTOP])
    assert shot.failed and shot.origin == "capture_failed"
    assert shot.reason is not None and "did not finish within 2 s" in shot.reason
    with pytest.raises(CaptureFailed, match="within 2 s"):
        capture_url(
            f"{site.url}/slow",
            policy=site.policy(timeout=2),
            viewports=[DESKTOP],
            on_failure="raise",
        )


def test_a_page_over_the_byte_limit_gives_a_placeholder_that_says_so(site: Site) -> None:
    policy = site.policy(max_bytes=512 * 1024)
    [shot] = capture_url(f"{site.url}/big", policy=policy, viewports=[DESKTOP])
    assert shot.failed and shot.reason is not None
    assert "loaded more than 0.5 MB" in shot.reason
    [fine] = capture_url(f"{site.url}/clean", policy=policy, viewports=[DESKTOP])
    assert not fine.failed


def test_a_page_whose_scripts_never_stop_fails_and_the_browser_keeps_working(site: Site) -> None:
    [shot] = capture_url(f"{site.url}/hangs", policy=site.policy(timeout=3), viewports=[DESKTOP])
    assert shot.failed and shot.reason is not None
    assert "3 s" in shot.reason or "crashed" in shot.reason
    [after] = capture_url(f"{site.url}/clean", policy=site.policy(), viewports=[DESKTOP])
    assert after.origin == "page"


def test_a_placeholder_is_a_plain_image_with_its_reason_written_on_it(site: Site) -> None:
    [shot] = capture_url(f"{site.url}/slow", policy=site.policy(timeout=1), viewports=[DESKTOP])
    pixels = decode(shot.png)
    assert (shot.width, shot.height) == (1280, 800) == (pixels.shape[1], pixels.shape[0])
    assert shot.meta()["origin"] == "capture_failed" and shot.meta()["reason"] == shot.reason
    assert shot.boxes == () and shot.dom is None
    # Words in dark ink on a light ground, in the top part where the reason is written.
    ink = pixels[..., :3].min(axis=2) < 100
    assert ink[:300].sum() > 500 and not ink[400:].any()
    assert np.median(pixels[..., :3]) > 200
