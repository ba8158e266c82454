"""Projects as a team's: owners create, rename and archive them; a project's admins add
members with roles (the same roles as keys) and invite people by a link that expires."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound
from viewfinder.ids import new_id, well_formed
from viewfinder.services import permissions
from viewfinder.services.env import ROLES, Actor, Env
from viewfinder.services.people import check_email
from viewfinder.services.records import Record
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_text
from viewfinder.store.models import Invitation, Membership, Person, Project, utcnow

INVITE_PREFIX = "vf_inv_"
INVITE_DAYS = 7


class TeamProject(Record):
    id: str
    name: str
    archived: bool
    created_at: datetime


class MemberRecord(Record):
    person_id: str
    email: str
    name: str
    roles: list[str]


class InvitationRecord(Record):
    id: str
    project_id: str
    email: str | None
    roles: list[str]
    expires_at: datetime
    url: str = Field(description="The link to send; it is shown this once.")


def check_roles(roles: list[str]) -> list[str]:
    unknown = [r for r in roles if r not in ROLES]
    if not roles or unknown:
        got = f" (got {', '.join(unknown)})" if unknown else ""
        raise InvalidInput(f"roles must be one or more of {', '.join(ROLES)}{got}")
    return sorted(set(roles), key=ROLES.index)


def _owner(s: Session, actor: Actor | None, action: str) -> str | None:
    """The owner's person id (None for the local CLI). Raises Forbidden for anyone else."""
    if actor is None:
        return None
    if actor.person_id is None:
        raise Forbidden(
            f"a project key cannot {action}: that takes an owner, signed in to the dashboard "
            "(or `viewfinder projects` on the server's machine)",
            role="owner",
        )
    person = s.get(Person, actor.person_id)
    if person is None or not person.is_owner:
        raise Forbidden(f"only the server's owners can {action}: ask one of them", role="owner")
    return person.id


def _team_record(p: Project) -> TeamProject:
    return TeamProject(
        id=p.id, name=p.name, archived=p.archived_at is not None, created_at=p.created_at
    )


def _check_name(name: str) -> str:
    return check_text("a project name", name, maximum=100, multiline=False).strip()


def create_project(env: Env, actor: Actor | None, name: str) -> TeamProject:
    """A new project; the owner who made it is its admin. ``actor`` None: the local CLI.
    Raises Forbidden (not an owner), InvalidInput (empty or taken name)."""
    name = _check_name(name)
    with env.db.write() as s:
        owner = _owner(s, actor, "create projects")
        if s.scalar(select(Project.id).where(Project.name == name)) is not None:
            raise Conflict(f"a project named {name!r} exists already; choose another name")
        project = Project(id=new_id("prj"), name=name, quota_bytes=env.settings.default_quota_bytes)
        s.add(project)
        s.flush()
        if owner is not None:
            s.add(
                Membership(id=new_id("mem"), project_id=project.id, person_id=owner, roles="admin")
            )
        return _team_record(project)


def all_projects(env: Env) -> list[TeamProject]:
    """Every project of the server (the local CLI)."""
    with env.db.read() as s:
        return [_team_record(p) for p in s.scalars(select(Project).order_by(Project.name))]


def _find(s: Session, ref: str) -> Project:
    found = s.scalar(
        select(Project).where((Project.id == ref) if well_formed(ref) else (Project.name == ref))
    )
    if found is None:
        raise NotFound(f"no project {ref!r}: see list_projects for the ones you can use")
    return found


def update_project(
    env: Env,
    actor: Actor | None,
    project: str,
    *,
    name: str | None = None,
    archived: bool | None = None,
) -> TeamProject:
    """Rename, archive or bring back a project (owners). Archived, it keeps its data but no
    person, key or token reaches it. Raises Forbidden, NotFound, InvalidInput."""
    with env.db.write() as s:
        _owner(s, actor, "rename or archive projects")
        row = _find(s, project)
        if name is not None:
            name = _check_name(name)
            taken = s.scalar(select(Project.id).where(Project.name == name, Project.id != row.id))
            if taken is not None:
                raise Conflict(f"a project named {name!r} exists already; choose another")
            row.name = name
        if archived is not None:
            row.archived_at = (row.archived_at or utcnow()) if archived else None
        return _team_record(row)


@short_read
def list_members(env: Env, actor: Actor) -> list[MemberRecord]:
    permissions.require(actor, "list_members")
    with env.db.read() as s:
        rows = s.execute(
            select(Person, Membership.roles)
            .join(Membership, Membership.person_id == Person.id)
            .where(Membership.project_id == actor.project_id)
            .order_by(Person.email)
        )
        return [
            MemberRecord(person_id=p.id, email=p.email, name=p.name, roles=roles.split(","))
            for p, roles in rows.all()
        ]


def _admins_left(s: Session, project_id: str, without: str) -> bool:
    rows = s.scalars(
        select(Membership.roles).where(
            Membership.project_id == project_id, Membership.person_id != without
        )
    )
    return any("admin" in r.split(",") for r in rows)


def set_member(env: Env, actor: Actor, email: str, roles: list[str]) -> MemberRecord:
    """Add a person (who has an account) to the project, or change their roles. Raises
    Forbidden (admin role), NotFound (no such account), Conflict (the last admin)."""
    permissions.require(actor, "manage_members")
    email = check_email(email)
    checked = check_roles(roles)
    with env.db.write() as s:
        person = s.scalar(select(Person).where(Person.email == email))
        if person is None:
            raise NotFound(
                f"nobody has an account with {email}: send them an invitation link instead"
            )
        row = s.scalar(
            select(Membership)
            .where(Membership.project_id == actor.project_id, Membership.person_id == person.id)
            .with_for_update()
        )
        if row is None:
            row = Membership(id=new_id("mem"), project_id=actor.project_id, person_id=person.id)
            s.add(row)
        elif "admin" not in checked and not _admins_left(s, actor.project_id, person.id):
            raise Conflict(_LAST_ADMIN.format(email=email))
        row.roles = ",".join(checked)
        return MemberRecord(
            person_id=person.id, email=person.email, name=person.name, roles=checked
        )


_LAST_ADMIN = (
    "{email} is this project's last admin: make someone else an admin first, or the project "
    "would have nobody who can manage its members"
)


def remove_member(env: Env, actor: Actor, person_id: str) -> None:
    """Raises Forbidden (admin role), NotFound, Conflict (the last admin)."""
    permissions.require(actor, "manage_members")
    with env.db.write() as s:
        row = s.scalar(
            select(Membership).where(
                Membership.project_id == actor.project_id, Membership.person_id == person_id
            )
        )
        if row is None:
            raise NotFound(f"no member {person_id!r} in this project", person_id=person_id)
        person = s.get(Person, person_id)
        if "admin" in row.roles.split(",") and not _admins_left(s, actor.project_id, person_id):
            raise Conflict(_LAST_ADMIN.format(email=person.email if person else person_id))
        s.delete(row)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invite(
    env: Env,
    actor: Actor,
    roles: list[str],
    *,
    email: str | None = None,
    days: int = INVITE_DAYS,
) -> InvitationRecord:
    """A link that makes whoever opens it a member with these roles, for ``days`` days (and
    once). Raises Forbidden (admin role), InvalidInput."""
    permissions.require(actor, "invite")
    checked = check_roles(roles)
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= 30:
        raise InvalidInput(f"days must be from 1 to 30 (got {days!r})")
    token = INVITE_PREFIX + secrets.token_urlsafe(24)
    with env.db.write() as s:
        row = Invitation(
            id=new_id("inv"),
            project_id=actor.project_id,
            token_hash=_hash(token),
            email=check_email(email) if email else None,
            roles=",".join(checked),
            created_by=actor.key_id,
            expires_at=utcnow() + timedelta(days=days),
        )
        s.add(row)
        s.flush()
        return InvitationRecord(
            id=row.id,
            project_id=row.project_id,
            email=row.email,
            roles=checked,
            expires_at=row.expires_at,
            url=f"{env.settings.public_url.rstrip('/')}/invitations/{token}",
        )


class InvitationView(Record):
    project_id: str
    project_name: str
    roles: list[str]
    email: str | None
    expires_at: datetime
    state: Literal["open", "used", "expired"]


def _invitation(s: Session, token: str, *, lock: bool = False) -> Invitation:
    query = select(Invitation).where(Invitation.token_hash == _hash(token))
    row = s.scalar(query.with_for_update() if lock else query)
    if row is None or not token.startswith(INVITE_PREFIX):
        raise NotFound("this invitation link is not one of this server's: check the link")
    return row


def _state(row: Invitation) -> Literal["open", "used", "expired"]:
    if row.accepted_at is not None:
        return "used"
    return "expired" if row.expires_at <= utcnow() else "open"


def read_invitation(env: Env, token: str) -> InvitationView:
    with env.db.read() as s:
        row = _invitation(s, token)
        project = s.get(Project, row.project_id)
        assert project is not None
        return InvitationView(
            project_id=project.id,
            project_name=project.name,
            roles=row.roles.split(","),
            email=row.email,
            expires_at=row.expires_at,
            state=_state(row),
        )


def accept_invitation(env: Env, token: str, person_id: str) -> TeamProject:
    """Make the person a member with the invitation's roles (kept when they have more).
    Raises NotFound, Conflict (expired, used, or meant for another email)."""
    with env.db.write() as s:
        row = _invitation(s, token, lock=True)
        state = _state(row)
        if state == "expired":
            raise Conflict(
                f"this invitation expired on {row.expires_at:%Y-%m-%d %H:%M} UTC: ask the "
                "project's admins for a new link"
            )
        if state == "used":
            raise Conflict(
                "this invitation was used already: ask the project's admins for a new one"
            )
        person = s.get(Person, person_id)
        assert person is not None
        if row.email and row.email != person.email:
            raise Conflict(
                f"this invitation is for {row.email}, and you are signed in as {person.email}: "
                "sign in with that account"
            )
        project = s.get(Project, row.project_id)
        if project is None or project.archived_at is not None:
            raise Conflict("the project of this invitation is archived")
        member = s.scalar(
            select(Membership).where(
                Membership.project_id == row.project_id, Membership.person_id == person_id
            )
        )
        if member is None:
            s.add(
                Membership(
                    id=new_id("mem"),
                    project_id=row.project_id,
                    person_id=person_id,
                    roles=row.roles,
                )
            )
        else:
            member.roles = ",".join(check_roles([*member.roles.split(","), *row.roles.split(",")]))
        row.accepted_at = utcnow()
        row.accepted_by = person_id
        return _team_record(project)


def add_member_locally(env: Env, project: str, email: str, roles: list[str]) -> None:
    """The local CLI: put an account into a project with these roles."""
    email = check_email(email)
    checked = check_roles(roles)
    with env.db.write() as s:
        row = _find(s, project)
        person = s.scalar(select(Person).where(Person.email == email))
        if person is None:
            raise NotFound(f"nobody has the email {email}: viewfinder users create {email}")
        member = s.scalar(
            select(Membership).where(
                Membership.project_id == row.id, Membership.person_id == person.id
            )
        )
        if member is None:
            s.add(
                Membership(
                    id=new_id("mem"),
                    project_id=row.id,
                    person_id=person.id,
                    roles=",".join(checked),
                )
            )
        else:
            member.roles = ",".join(checked)
