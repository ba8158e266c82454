"""Projects and their API keys: creation, the first start's bootstrap, authentication."""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound, Unauthenticated
from viewfinder.ids import new_id, well_formed
from viewfinder.services import permissions
from viewfinder.services.env import RECORD, ROLES, Actor, Env
from viewfinder.services.records import (
    Record,
)
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_text
from viewfinder.store.models import ApiKey, Membership, Person, Project, utcnow


class ProjectRecord(Record):
    id: str
    name: str
    ignore_noise: bool = Field(
        True, description="Pairs whose every difference is rendering noise are not changed."
    )
    created_at: datetime


class KeyRecord(Record):
    id: str
    project_id: str
    prefix: str = Field(description="The key's first characters, to tell keys apart.")
    label: str
    kind: Literal["agent", "ci", "person"]
    roles: list[str]
    created_at: datetime
    revoked: bool


class NewKey(KeyRecord):
    key: str = Field(description="The secret key. It is shown this once and stored hashed.")


KEY_PREFIX = "vf_proj_"
KINDS = ("agent", "ci", "person")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _project_record(p: Project) -> ProjectRecord:
    return ProjectRecord(id=p.id, name=p.name, ignore_noise=p.ignore_noise, created_at=p.created_at)


def _key_record(k: ApiKey) -> KeyRecord:
    return KeyRecord(
        id=k.id,
        project_id=k.project_id,
        prefix=k.prefix,
        label=k.label,
        kind=k.kind,
        roles=k.roles.split(","),
        created_at=k.created_at,
        revoked=k.revoked_at is not None,
    )


def _check_roles(roles: list[str]) -> list[str]:
    if RECORD in roles:
        if set(roles) != {RECORD}:
            raise InvalidInput(
                f"a '{RECORD}' key is embedded in web pages for everyone to read, so it carries "
                f"no other role: make one key with --role {RECORD} and another for the rest"
            )
        return [RECORD]
    unknown = [r for r in roles if r not in ROLES]
    if not roles or unknown:
        got = f" (got {', '.join(unknown)})" if unknown else ""
        raise InvalidInput(
            f"roles must be one or more of {', '.join(ROLES)}, or {RECORD} alone{got}"
        )
    return sorted(set(roles), key=ROLES.index)


def record_key_refused(actor: Actor) -> Forbidden:
    """What a recorder's key gets anywhere but the session ingest."""
    return Forbidden(
        f"this is a '{RECORD}' key ({actor.name}): it is public in your web pages and can only "
        "send recorded sessions to /api/v1/sessions/ingest (recorder.js does that). Use an "
        "upload, review, approve or admin key for everything else.",
        role=RECORD,
    )


def _usable(actor: Actor, recording: bool) -> Actor:
    if actor.records_only and not recording:
        raise record_key_refused(actor)
    return actor


def _insert_key(
    session: Session, project_id: str, roles: list[str], label: str, kind: str
) -> NewKey:
    if kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
    key = KEY_PREFIX + secrets.token_urlsafe(24)
    row = ApiKey(
        id=new_id("key"),
        project_id=project_id,
        key_hash=hash_key(key),
        prefix=key[: len(KEY_PREFIX) + 6],
        roles=",".join(_check_roles(roles)),
        label=check_text("label", label, maximum=100, minimum=0, multiline=False) or kind,
        kind=kind,
    )
    session.add(row)
    session.flush()
    return NewKey(key=key, **_key_record(row).model_dump())


def create_project(env: Env, name: str) -> ProjectRecord:
    """A new, empty project. Raises InvalidInput for an empty or taken name."""
    name = check_text("a project name", name, maximum=100, multiline=False).strip()
    with env.db.write() as s:
        if s.scalar(select(Project).where(Project.name == name)):
            raise InvalidInput(f"a project named {name!r} exists already; choose another name")
        project = Project(id=new_id("prj"), name=name, quota_bytes=env.settings.default_quota_bytes)
        s.add(project)
        s.flush()
        return _project_record(project)


@dataclass(frozen=True)
class Bootstrap:
    project: ProjectRecord
    keys: dict[str, NewKey]


def bootstrap(env: Env, project_name: str = "default") -> Bootstrap | None:
    """On the first start (no project yet): create one with an admin, a CI and an agent key.
    Returns None when a project exists already, so keys are shown only once. Nodes started at
    the same time take turns: exactly one of them makes the project."""
    with env.db.startup_lock(), env.db.write() as s:
        if s.scalar(select(Project.id).limit(1)) is not None:
            return None
        project = Project(
            id=new_id("prj"), name=project_name, quota_bytes=env.settings.default_quota_bytes
        )
        s.add(project)
        s.flush()
        keys = {
            "admin": _insert_key(s, project.id, ["admin"], "admin", "person"),
            "ci": _insert_key(s, project.id, ["upload"], "ci", "ci"),
            "agent": _insert_key(s, project.id, ["upload", "review"], "agent", "agent"),
        }
        return Bootstrap(_project_record(project), keys)


def create_key(
    env: Env,
    actor: Actor | None,
    *,
    roles: list[str],
    label: str = "",
    kind: str = "person",
    project: str | None = None,
) -> NewKey:
    """A new key. With an actor, it needs the admin role and makes a key of the actor's project;
    without one (the local CLI on the data directory) ``project`` names it (id or name), default
    the only project. Raises Forbidden, NotFound or InvalidInput."""
    with env.db.write() as s:
        if actor is not None:
            permissions.require(actor, "create_key")
            project_id = actor.project_id
        else:
            project_id = _find_project(s, project).id
        return _insert_key(s, project_id, roles, label, kind)


def _find_project(s: Session, ref: str | None) -> Project:
    if ref is None:
        projects = list(s.scalars(select(Project).limit(2)))
        if len(projects) != 1:
            raise InvalidInput(
                "there is no project yet: start `viewfinder serve` once"
                if not projects
                else "several projects exist: name one with --project"
            )
        return projects[0]
    found = s.scalar(select(Project).where((Project.id == ref) | (Project.name == ref)))
    if found is None:
        raise NotFound(f"no project {ref!r}")
    return found


@short_read
def list_keys(env: Env, actor: Actor) -> list[KeyRecord]:
    permissions.require(actor, "list_keys")
    with env.db.read() as s:
        rows = s.scalars(
            select(ApiKey).where(ApiKey.project_id == actor.project_id).order_by(ApiKey.id)
        )
        return [_key_record(k) for k in rows]


def revoke_key(env: Env, actor: Actor, key_id: str) -> KeyRecord:
    permissions.require(actor, "revoke_key")
    with env.db.write() as s:
        # Lock the project's keys: two admins revoking each other's keys at once must not
        # leave none.
        keys = list(
            s.scalars(
                select(ApiKey)
                .where(ApiKey.project_id == actor.project_id)
                .order_by(ApiKey.id)
                .with_for_update()
            )
        )
        row = next((k for k in keys if k.id == key_id), None)
        if row is None:
            raise NotFound(f"no key {key_id!r} in this project", key_id=key_id)
        admins = [k for k in keys if k.revoked_at is None and "admin" in k.roles.split(",")]
        if row.revoked_at is None and admins == [row]:
            raise Conflict(
                f"key {key_id} is this project's last admin key: revoking it would leave nobody "
                "who can manage keys. Create another admin key first (viewfinder keys create "
                "--role admin), then revoke this one.",
                key_id=key_id,
            )
        if row.revoked_at is None:
            row.revoked_at = utcnow()
        record = _key_record(row)
    _forget_key(env, key_id)
    return record


def _forget_key(env: Env, key_id: str) -> None:
    for digest, (_, known) in list(env.trusted_keys.items()):
        if known.key_id == key_id:
            env.trusted_keys.pop(digest, None)


def known_actor(
    env: Env, key: str | None, *, as_agent: bool = False, recording: bool = False
) -> Actor | None:
    """The Actor of a key this process checked less than ``key_cache_seconds`` ago, or None.
    Reads no database, so a front door may ask on its event loop before going to a thread.
    Raises Forbidden for a record key unless ``recording`` (the session ingest)."""
    ttl = env.settings.key_cache_seconds
    entry = env.trusted_keys.get(hash_key(key)) if ttl and key else None
    if entry is None or time.monotonic() - entry[0] > ttl:
        return None
    known = _usable(entry[1], recording)
    return dataclasses.replace(known, is_agent=True) if as_agent else known


def authenticate(
    env: Env, key: str | None, *, as_agent: bool = False, recording: bool = False
) -> Actor:
    """The Actor of a key. Raises Unauthenticated for a missing, unknown or revoked key, and
    Forbidden for a record key anywhere but the session ingest (``recording``)."""
    if not key:
        raise Unauthenticated(
            f"no API key: send your {KEY_PREFIX}... key as `Authorization: Bearer <key>`"
        )
    if not key.startswith(KEY_PREFIX):
        raise Unauthenticated(f"not a Viewfinder key: keys start with {KEY_PREFIX}")
    digest = hash_key(key)
    with env.db.read() as s:
        row = s.scalar(select(ApiKey).where(ApiKey.key_hash == digest))
        if row is None or row.revoked_at is not None:
            raise Unauthenticated("this API key is unknown or revoked: ask an admin for a new one")
        known = _actor(row)
    if env.settings.key_cache_seconds:
        env.trusted_keys[digest] = (time.monotonic(), known)
    _usable(known, recording)
    return dataclasses.replace(known, is_agent=True) if as_agent else known


def actor_for_key_id(env: Env, key_id: str) -> Actor:
    """The Actor of a key named by its id, for sessions that keep the id rather than the secret:
    each request checks again that the key still exists and is not revoked.
    Raises Unauthenticated."""
    with env.db.read() as s:
        row = s.get(ApiKey, key_id) if well_formed(key_id) else None
        if row is None or row.revoked_at is not None:
            raise Unauthenticated("this sign-in's key is unknown or revoked: sign in again")
        return _usable(_actor(row), False)


def _actor(row: ApiKey, *, as_agent: bool = False) -> Actor:
    return Actor(
        project_id=row.project_id,
        key_id=row.id,
        name=row.label,
        roles=frozenset(row.roles.split(",")),
        is_agent=as_agent or row.kind == "agent",
    )


def key_labels(env: Env, actor: Actor) -> dict[str, str]:
    """Key id -> label, and person id -> name, for the actor's project's keys and members, to
    name who did what (no secrets, no roles)."""
    with env.db.read() as s:
        rows = s.execute(
            select(ApiKey.id, ApiKey.label).where(ApiKey.project_id == actor.project_id)
        )
        named = {str(key_id): str(label) for key_id, label in rows.all()}
        members = s.execute(
            select(Person.id, Person.name)
            .join(Membership, Membership.person_id == Person.id)
            .where(Membership.project_id == actor.project_id)
        )
        named.update({str(person_id): str(name) for person_id, name in members.all()})
        return named


def update_project(env: Env, actor: Actor, *, ignore_noise: bool | None = None) -> ProjectRecord:
    """Change the project's settings; a setting left None stays as it is. Comparisons made
    from now on follow them. Raises Forbidden (admin role), InvalidInput."""
    permissions.require(actor, "update_project")
    if ignore_noise is not None and not isinstance(ignore_noise, bool):
        raise InvalidInput(f"ignore_noise must be true or false (got {ignore_noise!r})")
    with env.db.write() as s:
        project = s.get(Project, actor.project_id)
        assert project is not None
        if ignore_noise is not None:
            project.ignore_noise = ignore_noise
        return _project_record(project)


@short_read
def whoami(env: Env, actor: Actor) -> ProjectRecord:
    with env.db.read() as s:
        project = s.get(Project, actor.project_id)
        if project is None:
            raise NotFound("the key's project no longer exists")
        return _project_record(project)
