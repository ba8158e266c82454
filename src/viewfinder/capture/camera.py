"""One warm Chromium per process, driven by an event loop on a thread of its own.

Starting Chromium costs about a second, so each process keeps one browser (per Chromium
binary), started on first use and started again when it has died. Playwright objects belong
to the loop that made them, so the browser lives on the camera's loop thread and nowhere
else: any thread may call ``Camera.run``, which hands the work to that loop and waits for it.
On the loop, the shots of one capture (desktop and mobile, light and dark) are taken at the
same time, each in its own browser context, and up to ``CONCURRENT`` captures run together.

A capture that outlives its time limit is cancelled and its contexts closed, which ends their
renderers even when a page's scripts never yield (``for(;;){}``), while the browser stays
warm. A browser that does not answer at all is dropped and the next capture starts another.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, TypeVar

from viewfinder.capture.spares import Spares
from viewfinder.errors import CaptureFailed

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

log = logging.getLogger("viewfinder.capture")
T = TypeVar("T")

# Everything that can make two renders of the same page differ is pinned or switched off, and
# the browser does no networking of its own (updates, pings, WebRTC outside the proxy).
FLAGS = (
    "--force-color-profile=srgb",
    "--font-render-hinting=none",
    "--disable-lcd-text",
    "--disable-font-subpixel-positioning",
    "--hide-scrollbars",
    "--disable-partial-raster",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-first-run",
    "--no-pings",
    "--disable-quic",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--mute-audio",
)
CONCURRENT = 2
TIDY_EVERY = 30.0
# How long cancelling a late capture (closing its contexts) may take before the browser is
# given up, and how long a caller waits beyond that.
_CLOSE_GRACE = 10.0
_CALLER_GRACE = 20.0


class Camera:
    """A Chromium driven from its own event loop thread."""

    def __init__(self, chromium: str) -> None:
        self.chromium = chromium
        self.pid = os.getpid()
        self.launches = 0
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._spares: Spares | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="capture-camera", daemon=True)
        self._thread.start()
        self._ready.wait()
        self._starting = asyncio.Lock()
        self._slots = asyncio.Semaphore(CONCURRENT)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        self._loop.call_later(TIDY_EVERY, self._tidy)
        self._loop.run_forever()

    def _tidy(self) -> None:
        if self._spares is not None:
            self._spares.tidy()
        self._loop.call_later(TIDY_EVERY, self._tidy)

    def run(self, work: Callable[[Spares], Awaitable[T]], *, seconds: float) -> T:
        """Run ``work(spares)`` (fresh contexts of the live browser) on the camera's loop and
        wait for it. Past ``seconds`` the
        work is cancelled (closing what it opened) and CaptureFailed raised; CaptureFailed also
        when the browser cannot start. Raises what ``work`` raises."""
        future = asyncio.run_coroutine_threadsafe(self._guarded(work, seconds), self._loop)
        try:
            return future.result(seconds + _CLOSE_GRACE + _CALLER_GRACE)
        except FutureTimeout:
            future.cancel()
            _abandon(self)
            raise CaptureFailed(
                f"the browser stopped answering during a capture (limit {seconds:g} s); it has "
                "been replaced, try again"
            ) from None

    async def _guarded(self, work: Callable[[Spares], Awaitable[T]], seconds: float) -> T:
        async with self._slots:
            spares = await self._live_browser()
            task = asyncio.ensure_future(work(spares))
            try:
                done, _ = await asyncio.wait([task], timeout=seconds)
                if task in done:
                    return task.result()
                task.cancel()
                finished, _ = await asyncio.wait([task], timeout=_CLOSE_GRACE)
                if not finished:
                    log.warning("a late capture did not close; starting a new browser next time")
                    await self._drop()
                raise CaptureFailed(late(seconds))
            finally:
                if self._spares is spares:
                    spares.refill()

    def settle(self, seconds: float = 60.0) -> None:
        """Wait (at most ``seconds``) until the contexts being made ahead are ready: the
        camera is then as warm as it gets."""

        async def ready() -> None:
            if self._spares is not None:
                await self._spares.ready()

        asyncio.run_coroutine_threadsafe(ready(), self._loop).result(seconds)

    async def _live_browser(self) -> Spares:
        async with self._starting:
            if self._spares is not None and self._spares.browser.is_connected():
                return self._spares
            await self._drop()
            from playwright.async_api import Error, async_playwright

            try:
                self._playwright = await async_playwright().start()
                self._browser = await self._playwright.chromium.launch(
                    executable_path=self.chromium, args=list(FLAGS), timeout=60_000
                )
            except Error as exc:
                await self._drop()
                first = exc.message.splitlines()[0]
                raise CaptureFailed(
                    f"Chromium at {self.chromium} could not be started: {first} (install "
                    "Debian's chromium package, or set VIEWFINDER_CHROMIUM)"
                ) from None
            self.launches += 1
            self._spares = Spares(self._browser)
            return self._spares

    async def _drop(self) -> None:
        browser, playwright, spares = self._browser, self._playwright, self._spares
        self._browser = self._playwright = self._spares = None
        if spares is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(spares.close(), 5)
        for close in (browser.close if browser else None, playwright.stop if playwright else None):
            if close is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(close(), 5)

    def close(self) -> None:
        """Close the browser and stop the loop (waits a few seconds at most)."""
        if not self._loop.is_running():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._drop(), self._loop).result(12)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def late(seconds: float) -> str:
    return (
        f"the capture did not finish within {seconds:g} s (the page or what it loads is too "
        "slow, or its scripts never stop); try again, or raise "
        "VIEWFINDER_CAPTURE_TIMEOUT_SECONDS"
    )


_cameras: dict[str, Camera] = {}
_lock = threading.Lock()


def camera(chromium: str) -> Camera:
    """This process's camera for that Chromium binary, made on first use. A process forked
    from one that had a camera makes its own (the thread did not come along)."""
    with _lock:
        current = _cameras.get(chromium)
        if current is None or current.pid != os.getpid():
            current = _cameras[chromium] = Camera(chromium)
        return current


def _abandon(stuck: Camera) -> None:
    """Forget a camera whose loop does not come back; the next capture makes a new one."""
    with _lock:
        if _cameras.get(stuck.chromium) is stuck:
            del _cameras[stuck.chromium]


def close_all() -> None:
    """Close every camera of this process (run at exit)."""
    with _lock:
        mine = [c for c in _cameras.values() if c.pid == os.getpid()]
        _cameras.clear()
    for each in mine:
        each.close()


atexit.register(close_all)
