"""Dashboard sign-ins, kept in the database: the browser holds a random token, the row holds
its sha256, who signed in (a person, or a project key) and in which project. Signing out ends
the row, so a copy of the cookie signs nobody in afterwards; revoking the key, removing the
person from the project or archiving it ends their sessions at the next request."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select

from viewfinder.errors import Forbidden, NotFound, Unauthenticated
from viewfinder.ids import new_id
from viewfinder.services import identity, people, projects
from viewfinder.services.env import Actor, Env
from viewfinder.store.models import WebSession, utcnow

TTL = timedelta(hours=12)


@dataclass(frozen=True)
class SignedIn:
    actor: Actor
    csrf: str
    is_owner: bool


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start(
    env: Env, *, project_id: str, person_id: str | None = None, key_id: str | None = None
) -> str:
    """A new session; returns the token for the cookie."""
    token = secrets.token_urlsafe(32)
    with env.db.write() as s:
        s.add(
            WebSession(
                id=new_id("ses"),
                token_hash=_hash(token),
                person_id=person_id,
                key_id=key_id,
                project_id=project_id,
                csrf=secrets.token_urlsafe(24),
                expires_at=utcnow() + TTL,
            )
        )
    return token


def start_for_person(env: Env, person_id: str) -> str:
    """A session in the person's default project. Raises Forbidden when they belong to none."""
    project_id = identity.person_default(env, person_id)
    if project_id is None:
        projects_of = identity.member_of(env, person_id)
        if not projects_of:
            raise Forbidden(
                "you belong to no project yet: open an invitation link from a project's admin "
                "(an owner can also add you: viewfinder projects add-member)"
            )
        project_id = projects_of[0]
    return start(env, project_id=project_id, person_id=person_id)


def resolve(env: Env, token: str | None) -> SignedIn:
    """Who the session signs in. Raises Unauthenticated (none, ended, expired, or its key or
    membership gone)."""
    if not token:
        raise Unauthenticated("sign in to use the dashboard")
    with env.db.read() as s:
        row = s.scalar(select(WebSession).where(WebSession.token_hash == _hash(token)))
        if row is None or row.ended_at is not None:
            raise Unauthenticated("you are signed out: sign in again")
        if row.expires_at <= utcnow():
            raise Unauthenticated("your session has expired: sign in again")
        person_id, key_id, project_id, csrf = row.person_id, row.key_id, row.project_id, row.csrf
    if key_id is not None:
        actor = projects.actor_for_key_id(env, key_id)
        return SignedIn(actor, csrf, is_owner=False)
    assert person_id is not None and project_id is not None
    try:
        actor = people.person_actor(env, person_id, project_id)
    except Forbidden as exc:
        raise Unauthenticated(f"{exc.message} (sign in again)") from None
    return SignedIn(actor, csrf, is_owner=people.get_person(env, person_id).is_owner)


def end(env: Env, token: str | None) -> None:
    """Sign out: the session signs nobody in any more."""
    if not token:
        return
    with env.db.write() as s:
        row = s.scalar(select(WebSession).where(WebSession.token_hash == _hash(token)))
        if row is not None and row.ended_at is None:
            row.ended_at = utcnow()


def switch_project(env: Env, token: str, project: str) -> None:
    """Move a person's session to another project of theirs (and make it their default).
    Raises Forbidden for a key's session, NotFound for a project they are not in."""
    signed = resolve(env, token)
    chosen = identity.set_project(env, signed.actor, project)
    with env.db.write() as s:
        row = s.scalar(select(WebSession).where(WebSession.token_hash == _hash(token)))
        if row is None:
            raise NotFound("no such session")
        row.project_id = chosen.project.id
