"""Signing in with a project key and signing out."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from viewfinder.errors import Forbidden, Unauthenticated
from viewfinder.plumbing.offloop import call
from viewfinder.services import projects
from viewfinder.web import sessions
from viewfinder.web.present import render
from viewfinder.web.sessions import CSRF_FIELD, env_of

router = APIRouter(include_in_schema=False)


def _login_form(
    request: Request, target: str, *, error: str | None = None, status: int = 200
) -> Response:
    env = env_of(request)
    token, cookie = sessions.login_token(env, request)
    response = render(
        "login.html", None, status=status, token=token, next=target, error=error, nav=None
    )
    if cookie is not None:
        sessions.set_login_cookie(env, response, cookie)
    return response


@router.get("/login")
async def login_page(request: Request, next: str | None = None) -> Response:
    return _login_form(request, sessions.safe_next(next))


@router.post("/login")
async def login(request: Request) -> Response:
    env = env_of(request)
    form = await request.form()
    target = sessions.safe_next(str(form.get("next") or ""))
    token, fresh = sessions.login_token(env, request)
    try:
        if fresh is not None:
            raise Forbidden("the sign-in form expired: try again")
        sessions.check_token(request, token, str(form.get(CSRF_FIELD) or ""))
        actor = await call(projects.authenticate, env, str(form.get("key") or "").strip())
    except (Forbidden, Unauthenticated) as exc:
        return _login_form(request, target, error=exc.message, status=400)
    response = RedirectResponse(target, status_code=303)
    sessions.start(env, response, actor)
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = await request.form()
    try:
        person = await sessions.viewer(request)
    except Unauthenticated:
        person = None
    if person is not None:
        try:
            sessions.check_token(request, person.csrf, str(form.get(CSRF_FIELD) or ""))
        except Forbidden as exc:
            return render("error.html", person, status=403, code=exc.code, message=exc.message)
    response = RedirectResponse("/login", status_code=303)
    sessions.end(response)
    return response
