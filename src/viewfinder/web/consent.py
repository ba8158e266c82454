"""The OAuth consent page: a signed-in person allows (or denies) an agent's client one of
their projects and some of their roles there. The authorization request arrives signed from
/authorize (mcp/oauth.py); the answer goes back to the client's redirect URI."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from viewfinder.errors import Forbidden, InvalidInput, Unauthenticated
from viewfinder.plumbing.offloop import call
from viewfinder.services import identity, oauth
from viewfinder.services.env import ROLES
from viewfinder.web import sessions
from viewfinder.web.present import CSP, HEADERS, login_redirect, render
from viewfinder.web.sessions import CSRF_FIELD, Viewer, env_of

router = APIRouter(include_in_schema=False)


def _back(request: oauth.ConsentRequest, **params: str | None) -> str:
    """The client's redirect URI with the answer added to its query."""
    query = {k: v for k, v in params.items() if v is not None}
    if request.state is not None:
        query["state"] = request.state
    joiner = "&" if urlsplit(request.redirect_uri).query else "?"
    return request.redirect_uri + joiner + urlencode(query)


async def _page(
    http: Request,
    viewer: Viewer,
    signed: str,
    request: oauth.ConsentRequest,
    *,
    error: str | None = None,
    status: int = 200,
) -> Response:
    env = env_of(http)
    listed = await call(identity.list_projects, env, viewer.actor)
    current = next((p for p in listed.projects if p.id == viewer.actor.project_id), None)
    response = render(
        "consent.html",
        viewer,
        status=status,
        request=request,
        signed=signed,
        projects=listed.projects,
        current=viewer.actor.project_id,
        checked=set(current.roles if current else []),
        roles=ROLES,
        error=error,
        redirect_host=urlsplit(request.redirect_uri).netloc or request.redirect_uri,
    )
    # The answer is a redirect to the client after a form post: the page's CSP must let the
    # form go there (form-action also covers redirects).
    origin = urlsplit(request.redirect_uri)
    target = f"{origin.scheme}://{origin.netloc}" if origin.netloc else f"{origin.scheme}:"
    response.headers["Content-Security-Policy"] = CSP.replace(
        "form-action 'self'", f"form-action 'self' {target}"
    )
    return response


async def _person(http: Request) -> Viewer | None:
    try:
        viewer = await sessions.viewer(http)
    except Unauthenticated:
        return None
    return viewer if viewer.actor.person_id is not None else None


@router.get("/oauth/consent")
async def consent_page(http: Request, request: str = "") -> Response:
    env = env_of(http)
    try:
        asked = oauth.read_consent(env, request)
    except InvalidInput as exc:
        return render("error.html", None, status=400, code=exc.code, message=exc.message)
    viewer = await _person(http)
    if viewer is None:
        return login_redirect(http)
    return await _page(http, viewer, request, asked)


@router.post("/oauth/consent")
async def consent(http: Request) -> Response:
    env = env_of(http)
    form = await http.form()
    signed = str(form.get("request") or "")
    try:
        asked = oauth.read_consent(env, signed)
    except InvalidInput as exc:
        return render("error.html", None, status=400, code=exc.code, message=exc.message)
    viewer = await _person(http)
    if viewer is None:
        return login_redirect(http)
    try:
        sessions.check_token(http, viewer.csrf, str(form.get(CSRF_FIELD) or ""))
    except Forbidden as exc:
        return await _page(http, viewer, signed, asked, error=exc.message, status=403)
    if form.get("decision") != "allow":
        description = f"{viewer.actor.name} denied the request"
        target = _back(asked, error="access_denied", error_description=description)
        return RedirectResponse(target, status_code=303, headers=HEADERS)
    roles = [str(r) for r in form.getlist("roles")]
    try:
        code = await call(
            oauth.allow,
            env,
            asked,
            str(viewer.actor.person_id),
            str(form.get("project") or ""),
            roles,
        )
    except (Forbidden, InvalidInput) as exc:
        return await _page(http, viewer, signed, asked, error=exc.message, status=400)
    return RedirectResponse(_back(asked, code=code), status_code=303, headers=HEADERS)
