"""Signing in (email and password, or a project key for scripts and existing setups), signing
out, and opening an invitation link."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound, SlowDown, Unauthenticated
from viewfinder.plumbing.offloop import call
from viewfinder.services import people, projects, signins, teams
from viewfinder.web import sessions
from viewfinder.web.present import render
from viewfinder.web.sessions import CSRF_FIELD, env_of

router = APIRouter(include_in_schema=False)


def _login_form(
    request: Request,
    target: str,
    *,
    error: str | None = None,
    status: int = 200,
    email: str = "",
) -> Response:
    env = env_of(request)
    token, cookie = sessions.login_token(env, request)
    response = render(
        "login.html",
        None,
        status=status,
        token=token,
        next=target,
        error=error,
        email=email,
        nav=None,
    )
    if cookie is not None:
        sessions.set_login_cookie(env, response, cookie)
    return response


@router.get("/login")
async def login_page(request: Request, next: str | None = None) -> Response:
    return _login_form(request, sessions.safe_next(next))


async def _checked_form(request: Request) -> tuple[dict[str, str], str]:
    """The posted form, once its login token checks out. Raises Forbidden."""
    env = env_of(request)
    form = await request.form()
    fields = {k: str(v) for k, v in form.items() if isinstance(v, str)}
    token, fresh = sessions.login_token(env, request)
    if fresh is not None:
        raise Forbidden("the sign-in form expired: try again")
    sessions.check_token(request, token, fields.get(CSRF_FIELD, ""))
    return fields, token


@router.post("/login")
async def login(request: Request) -> Response:
    env = env_of(request)
    form = await request.form()
    target = sessions.safe_next(str(form.get("next") or ""))
    email = str(form.get("email") or "").strip()
    try:
        fields, _ = await _checked_form(request)
        key = fields.get("key", "").strip()
        if key:
            actor = await call(projects.authenticate, env, key)
            session = await call(
                signins.start, env, project_id=actor.project_id, key_id=actor.key_id
            )
        else:
            person = await call(people.sign_in, env, email, fields.get("password", ""))
            session = await call(signins.start_for_person, env, person.id)
    except SlowDown as exc:
        return _login_form(request, target, error=exc.message, status=429, email=email)
    except (Forbidden, Unauthenticated) as exc:
        return _login_form(request, target, error=exc.message, status=400, email=email)
    response = RedirectResponse(target, status_code=303)
    sessions.start(env, response, session)
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
    await sessions.end(request, response)
    return response


async def _signed_in_person(request: Request) -> sessions.Viewer | None:
    try:
        viewer = await sessions.viewer(request)
    except Unauthenticated:
        return None
    return viewer if viewer.actor.person_id is not None else None


def _invitation_page(
    request: Request,
    token: str,
    view: teams.InvitationView,
    viewer: sessions.Viewer | None,
    *,
    error: str | None = None,
    status: int = 200,
) -> Response:
    env = env_of(request)
    login, cookie = sessions.login_token(env, request)
    response = render(
        "invitation.html",
        viewer,
        status=status,
        invitation=view,
        invite_token=token,
        token=login,
        error=error,
        nav=None,
    )
    if cookie is not None:
        sessions.set_login_cookie(env, response, cookie)
    return response


@router.get("/invitations/{token}")
async def invitation_page(request: Request, token: str) -> Response:
    env = env_of(request)
    try:
        view = await call(teams.read_invitation, env, token)
    except NotFound as exc:
        return render("error.html", None, status=404, code=exc.code, message=exc.message)
    return _invitation_page(request, token, view, await _signed_in_person(request))


@router.post("/invitations/{token}")
async def accept_invitation(request: Request, token: str) -> Response:
    """Accept as the signed-in person, or make an account (name and password) and accept."""
    env = env_of(request)
    try:
        view = await call(teams.read_invitation, env, token)
    except NotFound as exc:
        return render("error.html", None, status=404, code=exc.code, message=exc.message)
    viewer = await _signed_in_person(request)
    try:
        fields, _ = await _checked_form(request)
        if viewer is not None and viewer.actor.person_id is not None:
            person_id = viewer.actor.person_id
        else:
            if view.state != "open":
                await call(teams.accept_invitation, env, token, "")  # raises, saying why
            record = await call(
                people.create_person,
                env,
                fields.get("email", "") or (view.email or ""),
                fields.get("name", ""),
                fields.get("password", ""),
            )
            person_id = record.id
        project = await call(teams.accept_invitation, env, token, person_id)
    except (Conflict, Forbidden, InvalidInput) as exc:
        status = 409 if isinstance(exc, Conflict) else 400
        return _invitation_page(request, token, view, viewer, error=exc.message, status=status)
    session = await call(signins.start, env, project_id=project.id, person_id=person_id)
    if viewer is not None:
        await sessions.end(request, RedirectResponse("/builds"))
    response = RedirectResponse("/builds", status_code=303)
    sessions.start(env, response, session)
    return response
