"""Who a caller is and which project their calls work in: whoami, list_projects, get_project
and set_project, for a person, an agent acting with a person's OAuth token, or a project key
(which describes its one project and cannot change it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from viewfinder.errors import Forbidden, NotFound
from viewfinder.ids import well_formed
from viewfinder.services.env import Actor, Env
from viewfinder.services.people import membership_roles
from viewfinder.services.records import Record
from viewfinder.services.shortreads import short_read
from viewfinder.store.models import ApiKey, Membership, OAuthGrant, Person, Project


class ProjectRef(Record):
    id: str
    name: str


class Identity(Record):
    kind: Literal["person", "agent", "key"] = Field(
        description="person: signed in; agent: an agent acting with a person's OAuth token; "
        "key: a project key"
    )
    name: str = Field(description="Who the calls are authored by, as shown to others.")
    email: str | None = Field(description="The person's email (null for a project key).")
    acting_for: str | None = Field(description="For an agent: the person it acts for (their name).")
    key_id: str | None = Field(description="The project key's id (null for a person).")
    project: ProjectRef = Field(description="The project calls work in.")
    roles: list[str]


class ProjectEntry(Record):
    id: str
    name: str
    roles: list[str]
    is_default: bool


class ProjectList(Record):
    projects: list[ProjectEntry]


class ProjectChoice(Record):
    project: ProjectRef
    source: Literal["key", "connection", "default", "only_project"] = Field(
        description="Where the project came from: the project key's own project; this "
        "connection's (chosen when it was allowed, or by set_project); the person's default; "
        "the only project they belong to."
    )
    default_project: ProjectRef | None = Field(
        description="The person's default project (null for a project key)."
    )


def _ref(s: Session, project_id: str | None) -> ProjectRef | None:
    row = s.get(Project, project_id) if project_id else None
    return None if row is None else ProjectRef(id=row.id, name=row.name)


def whoami(env: Env, actor: Actor) -> Identity:
    with env.db.read() as s:
        project = _ref(s, actor.project_id)
        if project is None:
            raise NotFound("the project of this connection no longer exists")
        roles = sorted(actor.roles)
        if actor.person_id is None:
            key = s.get(ApiKey, actor.key_id)
            return Identity(
                kind="key",
                name=key.label if key else actor.name,
                email=None,
                acting_for=None,
                key_id=actor.key_id,
                project=project,
                roles=roles,
            )
        person = s.get(Person, actor.person_id)
        assert person is not None
        return Identity(
            kind="agent" if actor.is_agent else "person",
            name=actor.name,
            email=person.email,
            acting_for=person.name if actor.is_agent else None,
            key_id=None,
            project=project,
            roles=roles,
        )


@short_read
def list_projects(env: Env, actor: Actor) -> ProjectList:
    """The projects the caller can use: a person's memberships (archived ones left out), or a
    key's one project."""
    with env.db.read() as s:
        if actor.person_id is None:
            project = _ref(s, actor.project_id)
            assert project is not None
            entry = ProjectEntry(
                id=project.id, name=project.name, roles=sorted(actor.roles), is_default=True
            )
            return ProjectList(projects=[entry])
        person = s.get(Person, actor.person_id)
        assert person is not None
        rows = s.execute(
            select(Project, Membership.roles)
            .join(Membership, Membership.project_id == Project.id)
            .where(Membership.person_id == person.id, Project.archived_at.is_(None))
            .order_by(Project.name)
        ).all()
        return ProjectList(
            projects=[
                ProjectEntry(
                    id=p.id,
                    name=p.name,
                    roles=roles.split(","),
                    is_default=p.id == default_project_id(person, [q.id for q, _ in rows]),
                )
                for p, roles in rows
            ]
        )


def default_project_id(person: Person, member_of: list[str]) -> str | None:
    """The person's default project: the one they chose while they still belong to it, else
    the only project they belong to."""
    if person.default_project_id in member_of:
        return person.default_project_id
    return member_of[0] if len(member_of) == 1 else None


def member_of(env: Env, person_id: str) -> list[str]:
    """Ids of the live projects the person belongs to, by name."""
    with env.db.read() as s:
        return list(
            s.scalars(
                select(Membership.project_id)
                .join(Project, Project.id == Membership.project_id)
                .where(Membership.person_id == person_id, Project.archived_at.is_(None))
                .order_by(Project.name)
            )
        )


def person_default(env: Env, person_id: str) -> str | None:
    with env.db.read() as s:
        person = s.get(Person, person_id)
    return None if person is None else default_project_id(person, member_of(env, person_id))


def get_project(env: Env, actor: Actor) -> ProjectChoice:
    with env.db.read() as s:
        current = _ref(s, actor.project_id)
        assert current is not None
        if actor.person_id is None:
            return ProjectChoice(project=current, source="key", default_project=None)
    default = person_default(env, actor.person_id)
    with env.db.read() as s:
        chosen = _ref(s, default)
    return ProjectChoice(project=current, source="connection", default_project=chosen)


def set_project(env: Env, actor: Actor, project: str) -> ProjectChoice:
    """Make ``project`` (id or name) the person's default, for every session and machine, and
    the project of this connection (the OAuth sign-in it came with, ``actor.connection``).
    Raises Forbidden for a project key (its project is fixed) and NotFound for a project the
    person is not in."""
    if actor.person_id is None:
        raise Forbidden(
            "a project key works in its own project only and cannot change it: connect with "
            "your own account (OAuth) to choose a default project, or use a key of the other "
            "project",
            role="person",
        )
    with env.db.write() as s:
        ref = project.strip() if isinstance(project, str) else ""
        row = s.scalar(
            select(Project).where(
                (Project.id == ref) if well_formed(ref) else (Project.name == ref)
            )
        )
        if row is None or membership_roles(s, actor.person_id, row.id) is None:
            raise NotFound(
                f"you are not a member of a project {project!r}: list_projects shows yours"
            )
        person = s.get(Person, actor.person_id)
        assert person is not None
        person.default_project_id = row.id
        if actor.connection is not None:
            s.execute(
                update(OAuthGrant)
                .where(OAuthGrant.family_id == actor.connection, OAuthGrant.revoked_at.is_(None))
                .values(project_id=row.id)
            )
        chosen = ProjectRef(id=row.id, name=row.name)
    return ProjectChoice(
        project=chosen,
        source="connection" if actor.connection else "default",
        default_project=chosen,
    )
