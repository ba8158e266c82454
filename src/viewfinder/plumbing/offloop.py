"""Service calls are blocking (database, blobs, the engine): async front doors run them off the
event loop so that no request holds it.

They run on two threads of their own rather than a thread per request. A simple read costs a
fraction of a millisecond in process; with forty threads taking turns at the GIL, the same read
answered over HTTP at a fifth of /healthz's rate (bench/api.py), most of it spent handing the
GIL back and forth. Two threads keep both cores busy and the hand-offs few. The price is that
a call must not sleep in one of them: waiting for work another process does (a comparison, a
capture) goes through `wait_for`, which sleeps on the event loop between short reads.

A short read (services.shortreads: a page or a record, nothing but the database) is not handed
over at all: the hand-off cost more than the read (a list answered at a third of /healthz's
rate, about half or more without it), so it runs in a greenlet on the loop (store.loopreads)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy.util import greenlet_spawn

from viewfinder.plumbing.outages import outage
from viewfinder.services.shortreads import is_short_read
from viewfinder.services.waiting import Wait
from viewfinder.store.loopreads import ReadBusy

T = TypeVar("T")

# One a core: a call blocked on the disk or the database leaves the other free, and more threads
# only add GIL hand-offs (bench/api.py: reads and uploads both fastest at one or two threads,
# slower at four and at eight).
THREADS = 2

_pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="viewfinder-call")


async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a (blocking) service function on the service threads and return its result; a short
    read (services.shortreads) runs in a greenlet on the loop, its database waits suspending
    only itself (store.loopreads). Raises Unavailable when the database or the blob store cannot
    be reached (plumbing.outages)."""
    try:
        if is_short_read(fn):
            try:
                return await greenlet_spawn(fn, *args, **kwargs)
            except ReadBusy:
                pass  # a lock it may not wait for on the loop: wait for it on a thread
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_pool, functools.partial(fn, *args, **kwargs))
    except Exception as exc:
        if (answer := outage(exc)) is None:
            raise
        raise answer from None


async def wait_for(plan: Wait[T]) -> T:
    """Carry out a wait (services.waiting) holding no thread between its reads."""
    while True:
        record = await call(plan.fetch)
        pause = plan.pause_after(record)
        if pause is None:
            return record
        await asyncio.sleep(pause)
