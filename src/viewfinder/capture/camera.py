"""One warm Chromium per process, driven from a thread of its own.

Playwright's sync API must be used from the thread that started it, and starting Chromium
costs about a second, so each process keeps one browser (per Chromium binary) on one daemon
thread, started on first use and started again when it has died. Any thread may call
``Camera.run``: the work is queued to the camera's thread and the caller waits for it, so
captures in one process take turns. A job worker or the CLI calls in directly; an async
server calls from its thread pool (``anyio.to_thread.run_sync``) or, better, queues a job, so
that captures run in the worker processes.

A page whose scripts never yield (``for(;;){}``) blocks even Playwright's own timeouts. A
watchdog thread therefore kills the browser's renderer processes when a capture outlives its
deadline, which makes the blocked call fail at once and keeps the browser warm; if that does
not free the thread, it kills the browser. Processes are found through ``/proc`` by a marker
switch on the browser's command line.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import signal
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, TypeVar

from viewfinder.errors import CaptureFailed

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

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
# After the deadline, the watchdog first kills renderers, then (this much later) the browser.
_ESCALATE_AFTER = 5.0
# How long a caller waits beyond the deadline before it gives the camera up for a new one.
_GRACE = 20.0


class Camera:
    """A Chromium on its own thread. ``run(work, deadline)`` calls ``work(browser)`` there."""

    def __init__(self, chromium: str) -> None:
        self.chromium = chromium
        self.pid = os.getpid()
        self._marker = f"--viewfinder-camera={uuid.uuid4().hex}"
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]] | None] = queue.Queue()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self.launches = 0
        self._thread = threading.Thread(target=self._loop, name="capture-camera", daemon=True)
        self._thread.start()

    def run(self, work: Callable[[Browser], T], *, seconds: float) -> T:
        """Run ``work(browser)`` on the camera's thread, stopping pages that outlive
        ``seconds``. Raises what ``work`` raises, and CaptureFailed when the browser
        cannot start or does not come back."""
        future: Future[T] = Future()
        self._jobs.put((lambda: self._guarded(work, seconds), future))
        try:
            return future.result(seconds + _ESCALATE_AFTER + _GRACE)
        except FutureTimeout:
            _abandon(self)
            raise CaptureFailed(
                f"the browser stopped answering during a capture (limit {seconds:g} s); it "
                "has been replaced, try again"
            ) from None

    def close(self) -> None:
        """Close the browser and end the thread (waits a few seconds at most)."""
        done: Future[None] = Future()
        self._jobs.put((self._stop, done))
        self._jobs.put(None)
        with contextlib.suppress(Exception):
            done.result(10)
        self._thread.join(5)

    def _loop(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            call, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as exc:  # handed to the caller, whatever it is
                future.set_exception(exc)

    def _guarded(self, work: Callable[[Browser], T], deadline: float) -> T:
        browser = self._live_browser()
        stuck = threading.Event()
        watchdog = threading.Thread(
            target=self._watch, args=(stuck, deadline), name="capture-watchdog", daemon=True
        )
        watchdog.start()
        try:
            return work(browser)
        finally:
            stuck.set()

    def _watch(self, finished: threading.Event, deadline: float) -> None:
        if finished.wait(deadline):
            return
        log.warning("a capture outlived its %g s limit; stopping its pages", deadline)
        self._kill(renderers_only=True)
        if not finished.wait(_ESCALATE_AFTER):
            log.warning("the capture still did not return; stopping the browser")
            self._kill(renderers_only=False)

    def _live_browser(self) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        self._stop()
        from playwright.sync_api import Error, sync_playwright

        try:
            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=self.chromium, args=[*FLAGS, self._marker], timeout=60_000
            )
        except Error as exc:
            self._stop()
            raise CaptureFailed(
                f"Chromium at {self.chromium} could not be started: {exc.message.splitlines()[0]}"
                " (install Debian's chromium package, or set VIEWFINDER_CHROMIUM)"
            ) from None
        self.launches += 1
        return self._browser

    def _stop(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        for close in (browser.close if browser else None, playwright.stop if playwright else None):
            if close is not None:
                with contextlib.suppress(Exception):
                    close()

    def _kill(self, *, renderers_only: bool) -> None:
        for pid in _processes(self._marker, renderers_only=renderers_only):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _processes(marker: str, *, renderers_only: bool) -> list[int]:
    """The browser process with ``marker`` on its command line and its descendants (only
    the renderers among them, or all). Empty where there is no /proc."""
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                commands[int(entry)] = f.read().replace(b"\0", b" ")
        except (OSError, IndexError, ValueError):
            continue
    found = {pid for pid, command in commands.items() if marker.encode() in command}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in found} - found
        found |= more
        grew = bool(more)
    if renderers_only:
        return [pid for pid in found if b"--type=renderer" in commands.get(pid, b"")]
    return sorted(found)


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
    """Forget a camera whose thread does not come back; the next capture makes a new one."""
    with _lock:
        if _cameras.get(stuck.chromium) is stuck:
            del _cameras[stuck.chromium]
    stuck._kill(renderers_only=False)


def close_all() -> None:
    """Close every camera of this process (run at exit)."""
    with _lock:
        mine = [c for c in _cameras.values() if c.pid == os.getpid()]
        _cameras.clear()
    for each in mine:
        each.close()


atexit.register(close_all)
