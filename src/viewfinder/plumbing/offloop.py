"""Service calls are blocking (database, blobs, the engine): async front doors run them in the
thread pool so that no request holds the event loop."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread

T = TypeVar("T")


async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a (blocking) service function in the thread pool and return its result."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
