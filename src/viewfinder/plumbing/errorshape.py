"""The one JSON error shape every HTTP front door answers with:
``{"error": {"code", "message", "details"}}`` (the REST API, the dashboard's JSON answers, the
MCP endpoints' own refusals before a request reaches the MCP SDK)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from starlette.responses import JSONResponse

from viewfinder.errors import ViewfinderError


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, Any] | list[Any] | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody


def error_response(
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = ErrorResponse(error=ErrorBody(code=code, message=message, details=details))
    extra = dict(headers or {})
    if status == 401:
        extra.setdefault("WWW-Authenticate", "Bearer")
    return JSONResponse(body.model_dump(), status_code=status, headers=extra or None)


def error_of(exc: ViewfinderError, headers: dict[str, str] | None = None) -> JSONResponse:
    """A domain error as the shape, with its status and the ids of what failed; one that says
    when to try again (``retry_after`` seconds) says it in the header clients look at too."""
    retry = exc.details.get("retry_after")
    if isinstance(retry, int) and not isinstance(retry, bool):
        headers = {**(headers or {}), "Retry-After": str(retry)}
    return error_response(exc.status, exc.code, exc.message, exc.details or None, headers)
