"""Rendering: the Jinja2 environment (autoescaped), display filters, and the response headers
every dashboard page carries."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, ParamSpec
from urllib.parse import quote, urlencode

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from viewfinder import __version__
from viewfinder.errors import Unauthenticated, ViewfinderError
from viewfinder.web.sessions import Viewer

P = ParamSpec("P")

# Scripts and styles come only from our own static files; images only from our own routes.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def when(value: datetime | None) -> str:
    """A fixed, unambiguous display of a time (UTC, to the minute)."""
    if value is None:
        return "-"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def percent(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2%}" if value >= 0.0001 else f"{value:.4%}"


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _static(path: str) -> str:
    # The version in the query string lets browsers keep static files until an upgrade.
    return f"/ui/static/{path}?v={__version__}"


def _url(path: str, **params: Any) -> str:
    query = {k: v for k, v in params.items() if v not in (None, "")}
    return quote(path) + (f"?{urlencode(query)}" if query else "")


_env = jinja2.Environment(
    loader=jinja2.PackageLoader("viewfinder.web", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters.update(when=when, percent=percent, plural=plural)
_env.globals.update(static=_static, url=_url, version=__version__)


def render(name: str, viewer: Viewer | None, *, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("nav", None)
    html = _env.get_template(name).render(viewer=viewer, **context)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(_url("/login", next=target), status_code=303)


def page(fn: Callable[P, Awaitable[Response]]) -> Callable[P, Awaitable[Response]]:
    """A dashboard page: no session sends the person to sign in; a refusal from the services
    becomes an error page with the service's own message."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> Response:
        request = kwargs["request"]
        assert isinstance(request, Request)
        try:
            return await fn(*args, **kwargs)
        except Unauthenticated:
            return login_redirect(request)
        except ViewfinderError as exc:
            return render(
                "error.html",
                getattr(request.state, "viewer", None),
                status=exc.status,
                code=exc.code,
                message=exc.message,
            )

    return wrapper
