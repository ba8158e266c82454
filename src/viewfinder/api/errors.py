"""Every failure of the REST API answers the one JSON error shape (plumbing/errorshape.py)."""

from __future__ import annotations

import logging
import uuid

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from viewfinder import errors
from viewfinder.plumbing.errorshape import error_of, error_response

log = logging.getLogger("viewfinder.api")


class Unexpected:
    """The last line for a failure nobody expected: one log entry with a request id, and the
    one error shape with that id for the client. The exception stops here, so the server
    keeps the connection (Starlette's own last line re-raises, and the next request on a
    kept-alive connection then found it reset)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            request_id = uuid.uuid4().hex[:16]
            log.exception(
                "request %s failed: %s %s", request_id, scope.get("method"), scope.get("path")
            )
            if started:  # the answer was under way: nothing better than ending it
                return
            response = error_response(
                500,
                "internal",
                f"internal error (request {request_id}): the server log has the details",
                {"request_id": request_id},
                {"X-Request-Id": request_id},
            )
            await response(scope, receive, send)


def install(app: FastAPI) -> None:
    @app.exception_handler(errors.ViewfinderError)
    async def _domain(_: Request, exc: errors.ViewfinderError) -> JSONResponse:
        return error_of(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "field": ".".join(str(p) for p in e["loc"][1:]) or str(e["loc"][0]),
                "problem": e["msg"],
            }
            for e in exc.errors()
        ]
        summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
        return error_response(400, "invalid_input", f"invalid request: {summary}", problems)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        headers = dict(exc.headers) if exc.headers else None
        return error_response(exc.status_code, code, str(exc.detail), headers=headers)

    app.add_middleware(Unexpected)
