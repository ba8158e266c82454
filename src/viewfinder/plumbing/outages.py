"""A database that is down or restarting is not a fault of the request or of the server's code:
every front door answers it as Unavailable (503, `[unavailable]` in MCP) with a time to retry,
and the operator gets one line, not a traceback per request."""

from __future__ import annotations

import logging

from viewfinder.errors import Unavailable
from viewfinder.store.db import reason, unreachable

log = logging.getLogger("viewfinder.database")

RETRY_AFTER = 5  # seconds: long enough for a restart or a failover, short enough to notice


def outage(exc: BaseException) -> Unavailable | None:
    """The error to answer when ``exc`` says the database cannot be reached, else None."""
    if not unreachable(exc):
        return None
    log.warning("the database cannot be reached: %s", reason(exc))
    return Unavailable(
        "the database cannot be reached right now; try again in a few seconds",
        retry_after=RETRY_AFTER,
    )
