"""The warm browser: one per process, shared by every thread that captures, started again when
it has died; a Chromium that cannot start gives a placeholder that says so."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.capture_site import Site, running_site
from viewfinder.capture import DESKTOP, Policy, capture_url
from viewfinder.capture.camera import camera
from viewfinder.capture.policy import CHROMIUM
from viewfinder.capture.spares import Spares
from viewfinder.errors import CaptureFailed


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site() as s:
        yield s


def test_threads_share_one_warm_browser(site: Site) -> None:
    capture_url(f"{site.url}/clean", policy=site.policy(), viewports=[DESKTOP])
    launches = camera(CHROMIUM).launches
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(
                lambda _: capture_url(
                    f"{site.url}/clean", policy=site.policy(), viewports=[DESKTOP]
                ),
                range(4),
            )
        )
    assert [shots[0].origin for shots in results] == ["page"] * 4
    assert camera(CHROMIUM).launches == launches


def test_a_browser_that_died_is_started_again(site: Site) -> None:
    capture_url(f"{site.url}/clean", policy=site.policy(), viewports=[DESKTOP])
    warm = camera(CHROMIUM)
    launches = warm.launches

    async def kill(spares: Spares) -> None:
        await spares.browser.close()

    warm.run(kill, seconds=30)
    [shot] = capture_url(f"{site.url}/clean", policy=site.policy(), viewports=[DESKTOP])
    assert shot.origin == "page"
    assert camera(CHROMIUM).launches == launches + 1


def test_a_chromium_that_cannot_start_gives_a_placeholder_that_says_so(site: Site) -> None:
    policy = Policy(guard=site.policy().guard, chromium="/nonexistent/chromium")
    [shot] = capture_url(f"{site.url}/clean", policy=policy, viewports=[DESKTOP])
    assert shot.failed and shot.reason is not None
    assert "Chromium at /nonexistent/chromium could not be started" in shot.reason
    assert "VIEWFINDER_CHROMIUM" in shot.reason
    with pytest.raises(CaptureFailed, match="could not be started"):
        capture_url(f"{site.url}/clean", policy=policy, on_failure="raise")
