"""The dashboard's projects page: a person's projects and switching between them; for owners,
making, renaming and archiving projects; for a project's admins, its members and invitation
links. Plain forms (each carrying the session's CSRF token) over the same services as REST."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from viewfinder.errors import ViewfinderError
from viewfinder.plumbing.offloop import call
from viewfinder.services import identity, signins, teams
from viewfinder.services.env import ROLES
from viewfinder.web import sessions
from viewfinder.web.present import page, render
from viewfinder.web.sessions import CSRF_FIELD, Viewer, env_of, viewer

router = APIRouter(include_in_schema=False)


async def _render(
    request: Request,
    person: Viewer,
    *,
    error: str | None = None,
    invited: teams.InvitationRecord | None = None,
    status: int = 200,
) -> Response:
    env = env_of(request)
    mine = await call(identity.list_projects, env, person.actor)
    every = await call(teams.all_projects, env) if person.is_owner else []
    members: list[teams.MemberRecord] = []
    if person.actor.can("admin"):
        members = await call(teams.list_members, env, person.actor)
    return render(
        "projects.html",
        person,
        status=status,
        nav="projects",
        mine=mine.projects,
        every=every,
        members=members,
        roles=ROLES,
        error=error,
        invited=invited,
    )


@router.get("/projects")
@page
async def projects_page(request: Request) -> Response:
    return await _render(request, await viewer(request))


async def _form(request: Request) -> tuple[Viewer, Any]:
    person = await viewer(request)
    form = await request.form()
    sessions.check_token(request, person.csrf, str(form.get(CSRF_FIELD) or ""))
    return person, form


@router.post("/projects/switch")
@page
async def switch(request: Request) -> Response:
    person, form = await _form(request)
    env = env_of(request)
    try:
        await call(
            signins.switch_project, env, sessions.session_token(request), str(form.get("project"))
        )
    except ViewfinderError as exc:
        return await _render(request, person, error=exc.message, status=exc.status)
    return RedirectResponse("/builds", status_code=303)


@router.post("/projects/new")
@page
async def new_project(request: Request) -> Response:
    person, form = await _form(request)
    try:
        await call(teams.create_project, env_of(request), person.actor, str(form.get("name")))
    except ViewfinderError as exc:
        return await _render(request, person, error=exc.message, status=exc.status)
    return RedirectResponse("/projects", status_code=303)


@router.post("/projects/{project_id}/update")
@page
async def update(request: Request, project_id: str) -> Response:
    person, form = await _form(request)
    name = str(form.get("name") or "").strip() or None
    archived = {"archive": True, "restore": False}.get(str(form.get("archive") or ""))
    try:
        await call(
            teams.update_project,
            env_of(request),
            person.actor,
            project_id,
            name=name,
            archived=archived,
        )
    except ViewfinderError as exc:
        return await _render(request, person, error=exc.message, status=exc.status)
    return RedirectResponse("/projects", status_code=303)


@router.post("/projects/invite")
@page
async def invite(request: Request) -> Response:
    person, form = await _form(request)
    try:
        days = int(str(form.get("days") or teams.INVITE_DAYS))
    except ValueError:
        days = 0
    try:
        invited = await call(
            teams.invite,
            env_of(request),
            person.actor,
            [str(r) for r in form.getlist("roles")],
            email=str(form.get("email") or "").strip() or None,
            days=days,
        )
    except ViewfinderError as exc:
        return await _render(request, person, error=exc.message, status=exc.status)
    return await _render(request, person, invited=invited, status=201)


@router.post("/projects/members/{person_id}/remove")
@page
async def remove(request: Request, person_id: str) -> Response:
    person, _ = await _form(request)
    try:
        await call(teams.remove_member, env_of(request), person.actor, person_id)
    except ViewfinderError as exc:
        return await _render(request, person, error=exc.message, status=exc.status)
    return RedirectResponse("/projects", status_code=303)
