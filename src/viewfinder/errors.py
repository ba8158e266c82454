"""Viewfinder's one error hierarchy.

Every adapter translates these once: the REST API to a status and one JSON error shape, MCP to
a tool error whose text starts with ``[code]``, the CLI to a message on stderr and an exit code.

    ViewfinderError                 code            meaning
    ├── InvalidInput                invalid_input   the request cannot be carried out as given
    │   ├── InvalidImage            invalid_image   not a PNG we can read, truncated, corrupt
    │   │   └── ImageTooLarge       image_too_large over a byte or pixel limit
    │   └── InvalidMask             invalid_mask    a mask rectangle out of range
    ├── Unauthenticated             unauthenticated no key, or an unknown or revoked one
    ├── NotFound                    not_found       no such object in the caller's project
    ├── Forbidden                   forbidden       the key lacks the role
    ├── Conflict                    conflict        the state changed; retry after a fresh read
    ├── QuotaExceeded               insufficient_quota
    └── Unavailable                 unavailable     a dependency is down; retry later
"""

from __future__ import annotations


class ViewfinderError(Exception):
    """Base of every error Viewfinder raises on purpose. ``message`` says what to do next."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ViewfinderError):
    code = "invalid_input"


class InvalidImage(InvalidInput):
    code = "invalid_image"


class ImageTooLarge(InvalidImage):
    code = "image_too_large"


class InvalidMask(InvalidInput):
    code = "invalid_mask"


class Unauthenticated(ViewfinderError):
    code = "unauthenticated"


class NotFound(ViewfinderError):
    code = "not_found"


class Forbidden(ViewfinderError):
    code = "forbidden"


class Conflict(ViewfinderError):
    code = "conflict"


class QuotaExceeded(ViewfinderError):
    code = "insufficient_quota"


class Unavailable(ViewfinderError):
    code = "unavailable"
