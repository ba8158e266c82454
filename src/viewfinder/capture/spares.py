"""Browser contexts made before they are needed.

A fresh context and its first page cost a new renderer process, the largest part of a shot
that is not the page's own work. So when a capture is over, the camera makes one context
ahead for each set-up (a viewport in a colour scheme) recent captures used; the next capture
of that kind finds it ready. A spare is fresh: it has loaded
nothing, and its gate refuses everything until the capture that takes it arms it with its own
guard and limits. Spares nobody takes for ``KEEP`` seconds are closed, and at most ``KINDS``
set-ups are kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from viewfinder.capture.gate import Gate
from viewfinder.capture.page import STEADY

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page

KEEP = 120.0
KINDS = 4


@dataclass(frozen=True)
class Setup:
    """What a context is made with: the window (CSS px), device scale, phone or not, and the
    colour scheme the page is told the reader prefers."""

    width: int
    height: int
    scale: float
    mobile: bool
    scheme: Literal["light", "dark"]


@dataclass
class Fresh:
    """A context that has loaded nothing, its page, and the gate that is its only way out."""

    context: BrowserContext
    tab: Page
    gate: Gate

    async def close(self) -> None:
        try:
            await self.context.close()
        except Exception:  # the browser went away; the camera starts a new one
            pass
        finally:
            self.gate.close()


class Spares:
    """Fresh contexts of the browser, one made ahead per recent set-up."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self._ahead: dict[Setup, asyncio.Task[Fresh]] = {}
        self._used: dict[Setup, float] = {}

    async def take(self, setup: Setup) -> Fresh:
        """A fresh context of this set-up: the one made ahead when there is one, else a new
        one. Raises Playwright's errors when the browser fails."""
        self._used[setup] = time.monotonic()
        made = self._ahead.pop(setup, None)
        if made is not None:
            try:
                return await made
            except Exception:  # made for a browser that since failed: try once more
                pass
        return await self._make(setup)

    def refill(self) -> None:
        """Start making one context ahead for each set-up used lately (the camera calls this
        when a capture is over, so that the making does not slow the capture down)."""
        self._trim()
        for setup in self._used:
            if setup not in self._ahead:
                self._ahead[setup] = asyncio.ensure_future(self._make(setup))

    async def ready(self) -> None:
        """Wait until the contexts being made ahead are made."""
        await asyncio.gather(*self._ahead.values(), return_exceptions=True)

    async def _make(self, setup: Setup) -> Fresh:
        gate = Gate()
        try:
            context = await self.browser.new_context(
                viewport={"width": setup.width, "height": setup.height},
                device_scale_factor=setup.scale,
                is_mobile=setup.mobile,
                has_touch=setup.mobile,
                color_scheme=setup.scheme,
                reduced_motion="reduce",
                locale="en-US",
                timezone_id="UTC",
                service_workers="block",
                accept_downloads=False,
                proxy={"server": gate.server},
            )
            await context.add_init_script(STEADY)
            return Fresh(context, await context.new_page(), gate)
        except BaseException:
            gate.close()
            raise

    def _trim(self) -> None:
        """Forget set-ups not used for KEEP seconds and all but the KINDS latest, closing
        what was made ahead for them."""
        now = time.monotonic()
        latest = sorted(self._used.items(), key=lambda item: item[1], reverse=True)
        for number, (setup, since) in enumerate(latest):
            if number >= KINDS or now - since > KEEP:
                del self._used[setup]
                made = self._ahead.pop(setup, None)
                if made is not None:
                    made.add_done_callback(_discard)

    async def close(self) -> None:
        """Close what was made ahead and stop what is being made (the browser is closing)."""
        ahead, self._ahead = list(self._ahead.values()), {}
        for task in ahead:
            if not task.done():
                task.cancel()
            elif not task.cancelled() and task.exception() is None:
                with contextlib.suppress(Exception):
                    await task.result().close()

    def tidy(self) -> None:
        """Close what has been kept too long (the camera calls this now and then)."""
        self._trim()


def _discard(task: asyncio.Task[Fresh]) -> None:
    if not task.cancelled() and task.exception() is None:
        asyncio.ensure_future(task.result().close())
