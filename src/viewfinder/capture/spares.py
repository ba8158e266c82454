"""Browser contexts made before they are needed.

A fresh context and its first page cost a new renderer process, the largest part of a shot
that is not the page's own work. So when a capture takes a context of some set-up (a viewport
in a colour scheme), the camera starts making the next one of that set-up at once, while the
capture works; the next capture of that kind finds it ready. A spare is fresh: it has loaded
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
        self._ahead: dict[Setup, tuple[asyncio.Task[Fresh], float]] = {}

    async def take(self, setup: Setup) -> Fresh:
        """A fresh context of this set-up: the one made ahead when there is one, else a new
        one; and the next one is started. Raises Playwright's errors when the browser fails."""
        made = self._ahead.pop(setup, None)
        self._ahead[setup] = (asyncio.ensure_future(self._make(setup)), time.monotonic())
        self._trim()
        if made is not None:
            try:
                return await made[0]
            except Exception:  # made for a browser that since failed: try once more
                pass
        return await self._make(setup)

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
        """Close spares kept too long, and the oldest beyond KINDS set-ups."""
        now = time.monotonic()
        by_age = sorted(self._ahead.items(), key=lambda item: item[1][1], reverse=True)
        for number, (setup, (task, since)) in enumerate(by_age):
            if number >= KINDS or now - since > KEEP:
                del self._ahead[setup]
                task.add_done_callback(_discard)

    async def close(self) -> None:
        ahead, self._ahead = list(self._ahead.values()), {}
        for task, _ in ahead:
            with contextlib.suppress(BaseException):
                await (await task).close()

    def tidy(self) -> None:
        """Close what has been kept too long (the camera calls this now and then)."""
        self._trim()


def _discard(task: asyncio.Task[Fresh]) -> None:
    if not task.cancelled() and task.exception() is None:
        asyncio.ensure_future(task.result().close())
