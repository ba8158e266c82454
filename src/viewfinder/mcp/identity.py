"""The identity tools (whoami, list_projects, get_project, set_project), declared once for
any profile to list: ``TOOLS`` is all four (the Meticulous profile's names and shapes); the
default profile takes those its own get_project does not already cover (``DEFAULT_TOOLS``).

With a person's OAuth token they describe that person and change their default project (and
this connection's); with a project key they describe the key's project and refuse to change
it, saying why."""

from __future__ import annotations

from pydantic import BaseModel, Field

from viewfinder.mcp.tooling import Call, ToolSpec
from viewfinder.services import identity
from viewfinder.services.identity import Identity, ProjectChoice, ProjectList


class NoArgs(BaseModel):
    pass


class SetProject(BaseModel):
    project: str = Field(description="The project: its id, or its name.")


WHOAMI = ToolSpec(
    "whoami",
    "Show the identity the connection is authenticated as (a person, an agent acting for a "
    "person, or a project key), and the project it resolves to.",
    NoArgs,
    Identity,
    lambda call, _: identity.whoami(call.env, call.actor),
    read_only=True,
    operation="whoami",
)
LIST_PROJECTS = ToolSpec(
    "list_projects",
    "List the projects the authenticated person can use, with their roles in each (a project "
    "key sees its one project).",
    NoArgs,
    ProjectList,
    lambda call, _: identity.list_projects(call.env, call.actor),
    read_only=True,
    operation="list_projects",
)
GET_PROJECT = ToolSpec(
    "get_project",
    "Show the project the tools work in, where that came from, and the person's default.",
    NoArgs,
    ProjectChoice,
    lambda call, _: identity.get_project(call.env, call.actor),
    read_only=True,
    operation="get_project",
)


def _set_project(call: Call, args: SetProject) -> ProjectChoice:
    return identity.set_project(call.env, call.actor, args.project)


SET_PROJECT = ToolSpec(
    "set_project",
    "Change the default project of the person's account (every session and machine) and of "
    "this connection. A project key cannot: it works in its own project only.",
    SetProject,
    ProjectChoice,
    _set_project,
    idempotent=True,
    operation="set_project",
)

TOOLS: list[ToolSpec] = [WHOAMI, LIST_PROJECTS, GET_PROJECT, SET_PROJECT]
DEFAULT_TOOLS: list[ToolSpec] = [WHOAMI, LIST_PROJECTS, SET_PROJECT]
