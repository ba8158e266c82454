"""People and projects over REST: the caller's projects, the project's members and invitation
links, and (for the server's owners, with an OAuth token of theirs) projects themselves."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import Field

from viewfinder.api.deps import ActorDep, EnvDep, op
from viewfinder.api.fields import MemberRoles, line
from viewfinder.plumbing.bodies import Body, JsonInt
from viewfinder.plumbing.offloop import call
from viewfinder.services import identity, people, teams
from viewfinder.services.identity import ProjectChoice, ProjectList
from viewfinder.services.teams import InvitationRecord, MemberRecord, TeamProject

router = APIRouter(tags=["people"])


@router.get("/projects", **op("list_projects"))
async def list_projects(env: EnvDep, actor: ActorDep) -> ProjectList:
    """The projects the caller can use: a person's, or a key's one project."""
    return await call(identity.list_projects, env, actor)


PROJECT_NAME = line(100)
EMAIL: dict[str, Any] = {"pattern": people.EMAIL_PATTERN, "maxLength": 254}


class NewProject(Body):
    name: str = Field(
        description="The project's name, unique on this server.", json_schema_extra=PROJECT_NAME
    )


@router.post("/projects", status_code=201, **op("create_project"))
async def create_project(body: NewProject, env: EnvDep, actor: ActorDep) -> TeamProject:
    """A new project (the server's owners only; the owner becomes its admin)."""
    return await call(teams.create_project, env, actor, body.name)


class ProjectChange(Body):
    name: str | None = Field(None, description="A new name.", json_schema_extra=PROJECT_NAME)
    archived: bool | None = Field(
        None, description="true archives it (nobody reaches it any more); false brings it back."
    )


@router.patch("/projects/{project}", **op("update_team_project"))
async def update_team_project(
    project: str, body: ProjectChange, env: EnvDep, actor: ActorDep
) -> TeamProject:
    """Rename, archive or bring back a project (the server's owners only)."""
    return await call(
        teams.update_project, env, actor, project, name=body.name, archived=body.archived
    )


class DefaultProject(Body):
    project: str = Field(description="Project id or name.", json_schema_extra=PROJECT_NAME)


@router.put("/me/project", **op("set_project"))
async def set_project(body: DefaultProject, env: EnvDep, actor: ActorDep) -> ProjectChoice:
    """Make a project the caller's default (a person's; a project key cannot)."""
    return await call(identity.set_project, env, actor, body.project)


@router.get("/project/members", **op("list_members"))
async def list_members(env: EnvDep, actor: ActorDep) -> list[MemberRecord]:
    return await call(teams.list_members, env, actor)


class MemberBody(Body):
    email: str = Field(description="The account's email.", json_schema_extra=EMAIL)
    roles: MemberRoles


@router.put("/project/members", **op("manage_members"))
async def set_member(body: MemberBody, env: EnvDep, actor: ActorDep) -> MemberRecord:
    """Add a person with an account to the project, or change their roles (admin role)."""
    return await call(teams.set_member, env, actor, body.email, body.roles)


@router.delete("/project/members/{person_id}", status_code=204, **op("manage_members"))
async def remove_member(person_id: str, env: EnvDep, actor: ActorDep) -> Response:
    await call(teams.remove_member, env, actor, person_id)
    return Response(status_code=204)


class InvitationBody(Body):
    roles: MemberRoles
    email: str | None = Field(
        None, description="Only this email may accept it.", json_schema_extra=EMAIL
    )
    days: JsonInt = Field(
        teams.INVITE_DAYS,
        description="Days until the link expires.",
        json_schema_extra={"minimum": 1, "maximum": 30},
    )


@router.post("/project/invitations", status_code=201, **op("invite"))
async def invite(body: InvitationBody, env: EnvDep, actor: ActorDep) -> InvitationRecord:
    """An invitation link for the project (admin role); its url is in the response, once."""
    return await call(teams.invite, env, actor, body.roles, email=body.email, days=body.days)
