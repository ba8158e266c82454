"""Waiting for work another process does (a comparison, a capture): read the record again and
again, quickly at first and then every half second, until it is final or the time is up.

The plan is separate from the sleeping so that one rule serves two kinds of caller: a blocking
caller (the command line, an MCP tool in its thread) sleeps in its thread with `Wait.block`,
and the server's front doors sleep on the event loop (plumbing.offloop.wait) so that a caller
waiting thirty seconds holds no thread that other requests need."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

FIRST_PAUSE = 0.02
LONGEST_PAUSE = 0.5


@dataclass
class Wait(Generic[T]):
    """``fetch`` reads the record (a short blocking call); ``done`` says it is final."""

    fetch: Callable[[], T]
    done: Callable[[T], bool]
    timeout: float
    deadline: float = field(init=False)
    pause: float = field(init=False, default=FIRST_PAUSE)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + max(self.timeout, 0.0)

    def pause_after(self, record: T) -> float | None:
        """How long to sleep before reading again, or None when ``record`` is the answer."""
        left = self.deadline - time.monotonic()
        if self.done(record) or left <= 0:
            return None
        pause = min(self.pause, left)
        self.pause = min(self.pause * 1.5, LONGEST_PAUSE)
        return pause

    def block(self) -> T:
        """Wait in this thread and return the final record (or the last one read)."""
        while True:
            record = self.fetch()
            pause = self.pause_after(record)
            if pause is None:
                return record
            time.sleep(pause)
