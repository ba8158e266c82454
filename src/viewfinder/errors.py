"""Viewfinder's one error hierarchy.

Every adapter translates these once: the REST API to ``status`` and one JSON error shape, MCP to
a tool error whose text starts with ``[code]``, the CLI to a message on stderr and an exit code.
An error carries the ids of what failed as ``details`` (``NotFound(..., build_id="bld_...")``),
which the REST error shape returns beside the message.

    ViewfinderError                 code               status  meaning
    ├── InvalidInput                invalid_input      400     the request cannot be carried out
    │   ├── InvalidImage            invalid_image      400     not an image we can read, corrupt
    │   │   └── ImageTooLarge       image_too_large    413     over a byte or pixel limit
    │   ├── InvalidMask             invalid_mask       400     a mask rectangle out of range
    │   ├── TooLarge                too_large          413     a request over a size limit
    │   ├── PaymentsDisabled        payments_disabled  400     no payments on a self-hosted server
    │   └── AddressRefused          address_refused    400     a URL the server will not fetch
    ├── Unauthenticated             unauthenticated    401     no key, or an unknown or revoked one
    ├── Forbidden                   forbidden          403     the caller lacks the role
    ├── SlowDown                    slow_down          429     too many wrong passwords: wait
    ├── NotFound                    not_found          404     nothing of that id in the project
    ├── Conflict                    conflict           409     the state changed, or forbids it now
    ├── QuotaExceeded               insufficient_quota 402     the project's storage is used up
    │   └── InsufficientCredits     insufficient_credits 402   the month's checkup credits are spent
    ├── CaptureFailed               capture_failed     502     a page, email, PDF or image could
    │                                                          not be captured (timeout, too big,
    │                                                          unreachable, the page crashed)
    ├── Unavailable                 unavailable        503     a dependency is down; retry later
    └── Internal                    internal           500     a failure nobody expected (a bug)
"""

from __future__ import annotations

from typing import Any


class ViewfinderError(Exception):
    """Base of every error Viewfinder raises on purpose. ``message`` says what to do next;
    ``details`` names what failed (ids, limits), for scripts."""

    code = "error"
    status = 500

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details


class InvalidInput(ViewfinderError):
    code = "invalid_input"
    status = 400


class InvalidImage(InvalidInput):
    code = "invalid_image"


class ImageTooLarge(InvalidImage):
    code = "image_too_large"
    status = 413


class InvalidMask(InvalidInput):
    code = "invalid_mask"


class TooLarge(InvalidInput):
    code = "too_large"
    status = 413


class PaymentsDisabled(InvalidInput):
    """Checkout, billing portal and cancelling a subscription: a self-hosted server takes no
    payments; an admin raises a project's checkup allowance instead."""

    code = "payments_disabled"


class AddressRefused(InvalidInput):
    """A URL that points at this server's own network (private, loopback, link-local and
    other non-public addresses) or uses a scheme that is not fetched. ``details`` name the
    ``url`` and, when it was resolved, the ``address``."""

    code = "address_refused"


class Unauthenticated(ViewfinderError):
    code = "unauthenticated"
    status = 401


class Forbidden(ViewfinderError):
    code = "forbidden"
    status = 403


class SlowDown(ViewfinderError):
    """Signing in failed too often in a row: the next try is refused until ``retry_after``
    seconds have passed (in ``details``)."""

    code = "slow_down"
    status = 429


class NotFound(ViewfinderError):
    code = "not_found"
    status = 404


class Conflict(ViewfinderError):
    code = "conflict"
    status = 409


class QuotaExceeded(ViewfinderError):
    # 402, not 507: clients and proxies retry a 5xx, and waiting does not free storage.
    code = "insufficient_quota"
    status = 402


class InsufficientCredits(QuotaExceeded):
    """The project's checkup credits for this month are spent (services/credits.py)."""

    code = "insufficient_credits"


class CaptureFailed(ViewfinderError):
    """Capturing a page, an email, a PDF or an image went wrong on the far side: the page
    timed out, loaded too much, could not be reached or crashed. Raised only when the caller
    asked for an error; otherwise the capture answers a placeholder shot that says why."""

    # 502: the fault is with what was to be captured, not with the request or this server.
    code = "capture_failed"
    status = 502


class Unavailable(ViewfinderError):
    code = "unavailable"
    status = 503


class Internal(ViewfinderError):
    code = "internal"
    status = 500
