"""A database or blob store that is down or restarting is not a fault of the request or of the
server's code: every front door answers it as Unavailable (503, `[unavailable]` in MCP) with a
time to retry, and the operator gets one line, not a traceback per request."""

from __future__ import annotations

import logging

from viewfinder.errors import Unavailable
from viewfinder.store import blobs, db

log = logging.getLogger("viewfinder.outage")

RETRY_AFTER = 5  # seconds: long enough for a restart or a failover, short enough to notice


def outage(exc: BaseException) -> Unavailable | None:
    """The error to answer when ``exc`` says the database or the blob store cannot be reached,
    else None."""
    if db.unreachable(exc):
        what = "the database"
    elif blobs.unreachable(exc):
        what = "the blob store"
    else:
        return None
    log.warning("%s cannot be reached: %s", what, db.reason(exc))
    return Unavailable(
        f"{what} cannot be reached right now; try again in a few seconds",
        retry_after=RETRY_AFTER,
    )
