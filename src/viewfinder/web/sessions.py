"""People's sign-in for the dashboard.

Sessions are kept server-side (services/signins.py): the cookie holds a random token, signed so
that junk never reaches the database. Every request looks the session up again, so signing out,
revoking the key or leaving the project ends it at once. The cookie is HttpOnly and
SameSite=Lax (links from a pull request still open the dashboard signed in; cross-site posts
carry no cookie), and every
state-changing request must also echo the session's CSRF token and, when the browser names
one, come from this origin.

Signing in is protected the same way, with a short-lived token of its own (a login cookie), so
another site cannot sign a person in under someone else's key.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request, Response

from viewfinder.errors import Forbidden, InvalidInput, Unauthenticated
from viewfinder.plumbing.offloop import call
from viewfinder.services import signins
from viewfinder.services.env import Actor, Env

SESSION_COOKIE = "vf_session"
LOGIN_COOKIE = "vf_login"
SESSION_TTL = 12 * 3600
LOGIN_TTL = 3600
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf"


@dataclass(frozen=True)
class Viewer:
    """A signed-in person: their Actor (a person's, or a key's) and the session's CSRF token."""

    actor: Actor
    csrf: str
    env: Env
    is_owner: bool = False


def env_of(request: Request) -> Env:
    env: Env = request.app.state.env
    return env


def _secure(env: Env) -> bool:
    return env.settings.public_url.startswith("https://")


def _cookie(response: Response, env: Env, name: str, value: str, ttl: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=ttl,
        httponly=True,
        samesite="lax",
        secure=_secure(env),
        path="/",
    )


def start(env: Env, response: Response, token: str) -> None:
    """Hand the browser its session (made by services/signins.py)."""
    _cookie(
        response,
        env,
        SESSION_COOKIE,
        env.signer.sign("session", token, ttl=SESSION_TTL),
        SESSION_TTL,
    )
    response.delete_cookie(LOGIN_COOKIE, path="/")


def session_token(request: Request) -> str | None:
    """The session token the browser sent, when its signature holds."""
    env = env_of(request)
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    try:
        value: Any = env.signer.unsign("session", cookie, what="session")
    except InvalidInput:
        return None
    return value if isinstance(value, str) else None


async def end(request: Request, response: Response) -> None:
    """Sign out: the session ends server-side, and the browser forgets the cookie."""
    await call(signins.end, env_of(request), session_token(request))
    response.delete_cookie(SESSION_COOKIE, path="/")


async def viewer(request: Request) -> Viewer:
    """The signed-in person. Raises Unauthenticated (no, ended or expired session, or its key
    or membership gone)."""
    env = env_of(request)
    if not request.cookies.get(SESSION_COOKIE):
        raise Unauthenticated("sign in with your email and password to use the dashboard")
    signed = await call(signins.resolve, env, session_token(request))
    person = Viewer(signed.actor, signed.csrf, env, signed.is_owner)
    request.state.viewer = person  # for error pages rendered later in the same request
    return person


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None:
        return True  # older browsers and non-browser clients; the token still has to match
    return urlsplit(origin).netloc == request.headers.get("host", "")


def check_token(request: Request, expected: str, given: str | None) -> None:
    """Raises Forbidden unless the request is same-origin and carries the expected token."""
    if not _same_origin(request):
        raise Forbidden("cross-site request refused: use the dashboard's own pages")
    if not given or not hmac.compare_digest(given.encode(), expected.encode()):
        raise Forbidden("this page is out of date (missing or wrong CSRF token): reload it")


async def writer(request: Request) -> Viewer:
    """The signed-in person, for a state-changing JSON request: the CSRF header must match."""
    person = await viewer(request)
    check_token(request, person.csrf, request.headers.get(CSRF_HEADER))
    return person


def login_token(env: Env, request: Request) -> tuple[str, str | None]:
    """The login form's CSRF token: the one its cookie holds, or a new one with the cookie
    value to set (second item) when there is none yet."""
    cookie = request.cookies.get(LOGIN_COOKIE)
    if cookie:
        try:
            return str(env.signer.unsign("login", cookie)), None
        except InvalidInput:
            pass
    token = secrets.token_urlsafe(24)
    return token, env.signer.sign("login", token, ttl=LOGIN_TTL)


def set_login_cookie(env: Env, response: Response, value: str) -> None:
    _cookie(response, env, LOGIN_COOKIE, value, LOGIN_TTL)


def safe_next(target: str | None) -> str:
    """Where to go after signing in: only a path on this site (no scheme, host or `//`)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/builds"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return "/builds"
    return target
