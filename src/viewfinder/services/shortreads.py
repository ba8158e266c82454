"""Short reads: service functions that the front doors may run on the server's event loop
rather than hand to a service thread (plumbing.offloop; the reason is in store.loopreads).

A function marked here promises to do nothing but read the database, a bounded amount (one
page, one record and what it shows): no writes (the database refuses them there), no files or
blobs, no images, no sleeping, no waiting for other processes. Anything else keeps to the
service threads, where a slow step holds one request instead of all of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def short_read(fn: F) -> F:
    """Mark ``fn`` as a short read (see the module doc)."""
    fn.short_read = True  # type: ignore[attr-defined]
    return fn


def is_short_read(fn: Callable[..., Any]) -> bool:
    return getattr(fn, "short_read", False) is True
