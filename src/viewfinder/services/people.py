"""People: accounts with an email and a password, signing in, and who a person is in a project.

Passwords are hashed with argon2id (argon2-cffi's defaults) and never shown or logged. A wrong
password counts against the account: after ``FREE_TRIES`` wrong ones in a row, each further
try must wait twice as long as the one before (capped at ``MAX_WAIT``), and is refused with
SlowDown until then; a right password resets the count. An unknown email gets the same answer
as a wrong password, so sign-in does not tell who has an account.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import Field
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from viewfinder.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    SlowDown,
    Unauthenticated,
)
from viewfinder.ids import new_id, well_formed
from viewfinder.services.env import IMPLIED, Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.text import check_text
from viewfinder.store.models import (
    Membership,
    OAuthGrant,
    Person,
    Project,
    WebSession,
    utcnow,
)

FREE_TRIES = 3
MAX_WAIT = 15 * 60  # seconds
MIN_PASSWORD = 10
_PART = "[^@\\s\\x00-\\x1f\\x7f-\\x9f]+"
EMAIL_PATTERN = f"^{_PART}@{_PART}\\.{_PART}$"
_EMAIL = re.compile(EMAIL_PATTERN)
_hasher = PasswordHasher()  # argon2id, RFC 9106's second recommended parameters
# Verified against when the email is unknown, so that answer takes as long as a wrong password.
_DUMMY_HASH = _hasher.hash("not anyone's password")


class PersonRecord(Record):
    id: str
    email: str
    name: str
    is_owner: bool = Field(description="Owners create projects and people.")
    default_project_id: str | None
    created_at: datetime


def person_record(p: Person) -> PersonRecord:
    return PersonRecord(
        id=p.id,
        email=p.email,
        name=p.name,
        is_owner=p.is_owner,
        default_project_id=p.default_project_id,
        created_at=p.created_at,
    )


def check_email(email: object) -> str:
    value = check_text("an email", email, maximum=254, multiline=False).strip().lower()
    if not _EMAIL.match(value):
        raise InvalidInput(f"{value!r} is not an email address (name@example.com)")
    return value


def check_password(password: object) -> str:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise InvalidInput(
            f"a password needs at least {MIN_PASSWORD} characters: choose a longer one"
        )
    if len(password) > 1000:
        raise InvalidInput("a password has at most 1000 characters")
    return password


def create_person(
    env: Env, email: str, name: str, password: str, *, owner: bool = False
) -> PersonRecord:
    """A new account (the local CLI, or a person accepting an invitation). Raises Conflict for
    a taken email, InvalidInput for a malformed one or a short password."""
    email = check_email(email)
    name = check_text("a name", name, maximum=100, multiline=False).strip()
    hashed = _hasher.hash(check_password(password))
    with env.db.write() as s:
        if s.scalar(select(Person.id).where(Person.email == email)) is not None:
            raise Conflict(
                f"{email} has an account already: sign in, or ask an owner to reset its "
                "password (viewfinder users reset-password)"
            )
        row = Person(
            id=new_id("usr"),
            email=email,
            name=name,
            password_hash=hashed,
            is_owner=owner,
            failed_logins=0,
        )
        s.add(row)
        s.flush()
        if owner:
            # The first owner of a server that has projects already runs them all.
            for (project_id,) in s.execute(select(Project.id).where(Project.archived_at.is_(None))):
                s.add(
                    Membership(
                        id=new_id("mem"), project_id=project_id, person_id=row.id, roles="admin"
                    )
                )
        return person_record(row)


def any_person(env: Env) -> bool:
    with env.db.read() as s:
        return s.scalar(select(Person.id).limit(1)) is not None


def reset_password(env: Env, email: str, password: str) -> PersonRecord:
    """Set a new password (an owner, on the server's machine); it is not shown anywhere, the
    count of wrong passwords starts again, and the person's dashboard sessions and OAuth tokens
    end. Raises NotFound, InvalidInput."""
    email = check_email(email)
    hashed = _hasher.hash(check_password(password))
    with env.db.write() as s:
        row = s.scalar(select(Person).where(Person.email == email))
        if row is None:
            raise NotFound(f"nobody has the email {email}: see viewfinder users list")
        row.password_hash = hashed
        row.failed_logins = 0
        row.last_failed_at = None
        # Whoever knew the old password is signed out, and the agents they allowed too.
        now = utcnow()
        s.execute(
            update(WebSession)
            .where(WebSession.person_id == row.id, WebSession.ended_at.is_(None))
            .values(ended_at=now)
        )
        s.execute(
            update(OAuthGrant)
            .where(OAuthGrant.person_id == row.id, OAuthGrant.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        return person_record(row)


def list_people(env: Env) -> list[PersonRecord]:
    with env.db.read() as s:
        return [person_record(p) for p in s.scalars(select(Person).order_by(Person.email))]


def wait_after(failures: int) -> int:
    """Seconds a try must wait after this many wrong passwords in a row."""
    if failures < FREE_TRIES:
        return 0
    return int(min(2 ** (failures - FREE_TRIES + 1), MAX_WAIT))


def _refuse_while_waiting(row: Person, now: datetime) -> None:
    wait = wait_after(row.failed_logins)
    if wait and row.last_failed_at is not None:
        left = (row.last_failed_at + timedelta(seconds=wait) - now).total_seconds()
        if left > 0:
            seconds = int(left) + 1
            raise SlowDown(
                f"too many wrong passwords for this account: try again in {seconds} s "
                "(or ask an owner to reset the password)",
                retry_after=seconds,
            )


def sign_in(env: Env, email: str, password: str) -> PersonRecord:
    """The person with that email and password. Raises Unauthenticated (wrong email or
    password) or SlowDown (too many wrong ones lately: wait)."""
    wrong = Unauthenticated("wrong email or password: check both and try again")
    try:
        email = check_email(email)
    except InvalidInput:
        raise wrong from None
    if not isinstance(password, str) or not password:
        raise wrong
    with env.db.read() as s:
        row = s.scalar(select(Person).where(Person.email == email))
        if row is None:
            _verify(_DUMMY_HASH, password)
            raise wrong
        _refuse_while_waiting(row, utcnow())
        stored = row.password_hash
    ok = _verify(stored, password)
    with env.db.write() as s:
        row = s.scalar(select(Person).where(Person.email == email).with_for_update())
        assert row is not None
        # Checked again under the lock: tries made at once each count.
        _refuse_while_waiting(row, utcnow())
        if not ok:
            row.failed_logins += 1
            row.last_failed_at = utcnow()
        else:
            row.failed_logins = 0
            row.last_failed_at = None
            if _hasher.check_needs_rehash(row.password_hash):
                row.password_hash = _hasher.hash(password)
        record = person_record(row)
    if not ok:
        raise wrong
    return record


def _verify(stored: str, password: str) -> bool:
    try:
        return _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def get_person(env: Env, person_id: str) -> PersonRecord:
    """Raises Unauthenticated when the account is gone (a session or token outliving it)."""
    with env.db.read() as s:
        row = s.get(Person, person_id) if well_formed(person_id) else None
        if row is None:
            raise Unauthenticated("this account no longer exists: sign in again")
        return person_record(row)


def membership_roles(s: Session, person_id: str, project_id: str) -> frozenset[str] | None:
    """The person's roles in a live (not archived) project, or None when not a member."""
    row = s.execute(
        select(Membership.roles)
        .join(Project, Project.id == Membership.project_id)
        .where(
            Membership.person_id == person_id,
            Membership.project_id == project_id,
            Project.archived_at.is_(None),
        )
    ).first()
    return None if row is None else frozenset(str(row[0]).split(","))


def person_actor(
    env: Env,
    person_id: str,
    project_id: str,
    *,
    as_agent: bool = False,
    granted: frozenset[str] | None = None,
) -> Actor:
    """A person (or an agent acting for them, ``as_agent``) in a project with their roles there,
    narrowed to ``granted`` (what an OAuth consent allowed). Raises Unauthenticated when the
    account is gone, Forbidden when they are no longer a member (or the project is archived)."""
    with env.db.read() as s:
        person = s.get(Person, person_id) if well_formed(person_id) else None
        if person is None:
            raise Unauthenticated("this account no longer exists: sign in again")
        roles = membership_roles(s, person_id, project_id)
        if roles is None:
            raise Forbidden(
                "you are no longer a member of this project (or it was archived): choose "
                "another project, or ask its admins to add you again"
            )
        if granted is not None:
            roles = frozenset(r for r in granted if any(r in IMPLIED[m] for m in roles))
            if not roles:
                raise Forbidden(
                    "the roles this sign-in was granted are no longer yours in this project: "
                    "connect again"
                )
        name = f"agent for {person.name}" if as_agent else person.name
        return Actor(
            project_id=project_id,
            key_id=person.id,
            name=name[:100],
            roles=roles,
            is_agent=as_agent,
            person_id=person.id,
        )
