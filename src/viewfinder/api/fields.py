"""How the REST API describes its fields in the OpenAPI document, from the services' own
rules (patterns, bounds): a client, or a fuzzer, that follows the document is not refused. The
services enforce the rules; these only say them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import Field

from viewfinder.plumbing.bodies import JsonInt
from viewfinder.services import contexts, images, projects, threads
from viewfinder.services.env import RECORD, ROLES
from viewfinder.services.text import (
    LINE_PATTERN,
    OPTIONAL_LINE_PATTERN,
    SHA_PATTERN,
    TEXT_PATTERN,
)


def line(maximum: int, minimum: int = 1) -> dict[str, Any]:
    """One line of text: no control characters; unless it may be empty, something besides
    spaces."""
    if minimum:
        return {"pattern": LINE_PATTERN, "minLength": minimum, "maxLength": maximum}
    return {"pattern": OPTIONAL_LINE_PATTERN, "maxLength": maximum}


def text(maximum: int) -> dict[str, Any]:
    """Text of several lines (line breaks and tabs allowed)."""
    return {"pattern": TEXT_PATTERN, "minLength": 1, "maxLength": maximum}


SHA = {"pattern": SHA_PATTERN}
REPO = {"pattern": contexts.REPO_PATTERN, "maxLength": 200}
PR = {"minimum": 1, "maximum": contexts.PR_MAX}
VIEWPORT = {"pattern": images.VIEWPORT_PATTERN}
NAME = line(images.NAME_MAX)
SCALE = images.SCALE_HELP

CommitSha = Annotated[
    str, Field(description="The commit (4 to 40 hex digits).", json_schema_extra=SHA)
]
Branch = Annotated[str | None, Field(None, json_schema_extra=line(300))]
Repo = Annotated[str | None, Field(None, description="owner/name.", json_schema_extra=REPO)]
PrNumber = Annotated[JsonInt | None, Field(None, json_schema_extra=PR)]
CommentText = Annotated[
    str, Field(description="1 to 4000 characters.", json_schema_extra=text(threads.BODY_MAX))
]


def _roles_schema(schema: dict[str, Any]) -> None:
    # One or more of the roles, or `record` alone (a recorder's key carries no other role).
    schema.clear()
    schema["anyOf"] = [
        {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(ROLES)}},
        {"type": "array", "minItems": 1, "items": {"type": "string", "const": RECORD}},
    ]


Roles = Annotated[list[str], Field(json_schema_extra=_roles_schema)]
# A person's roles in a project: a recorder's role is for keys in pages only.
MemberRoles = Annotated[
    list[str],
    Field(json_schema_extra={"minItems": 1, "items": {"type": "string", "enum": list(ROLES)}}),
]
KeyLabel = Annotated[str, Field("", json_schema_extra=line(100, minimum=0))]
KeyKind = Annotated[str, Field("person", json_schema_extra={"enum": list(projects.KINDS)})]

BranchQuery = Annotated[str | None, Query(json_schema_extra=line(300))]
PrQuery = Annotated[int | None, Query(json_schema_extra=PR)]
NameQuery = Annotated[str | None, Query(json_schema_extra=NAME)]

OwnerPath = Annotated[str, Path(json_schema_extra={"pattern": "^[A-Za-z0-9_.-]+$"})]
RepoNamePath = Annotated[str, Path(json_schema_extra={"pattern": "^[A-Za-z0-9_.-]+$"})]
PrPath = Annotated[int, Path(json_schema_extra=PR)]
