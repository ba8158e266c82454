"""Viewfinder as its own OAuth 2.1 authorization server, the rules and the storage; the MCP
SDK's auth module speaks the protocol (mcp/oauth.py) and the dashboard shows the consent page.

- Clients register themselves (RFC 7591); their metadata is kept as they sent it.
- A person allows a client on the consent page: one project of theirs and some of their roles
  there. That makes an authorization code (10 minutes, once, PKCE S256, bound to its redirect
  URI and to the resource it was asked for, RFC 8707).
- The code becomes an access token (1 hour) and a refresh token (60 days). Refreshing rotates
  both; a refresh token used a second time means it leaked, and revokes every token of that
  sign-in (its family). Revoking any token revokes its family.
- A token works only at the resource it was issued for (one MCP endpoint, or the REST API).
- Secrets are stored as sha256 (each carries 192 random bits).

An agent using a person's token acts for them: its Actor is that person's, marked as an agent,
with the roles the person allowed and still has in the project.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from viewfinder.errors import Forbidden, InvalidInput, Unauthenticated
from viewfinder.ids import new_id
from viewfinder.services import people
from viewfinder.services.env import IMPLIED, ROLES, Actor, Env
from viewfinder.services.people import membership_roles
from viewfinder.store.models import OAuthClient, OAuthGrant, utcnow

CODE_PREFIX = "vf_oac_"
ACCESS_PREFIX = "vf_oat_"
REFRESH_PREFIX = "vf_ort_"
CODE_TTL = timedelta(minutes=10)
ACCESS_TTL = timedelta(hours=1)
REFRESH_TTL = timedelta(days=60)
CONSENT_TTL = 15 * 60  # seconds a consent page may stay open


class OAuthRefused(Exception):
    """A refusal the protocol words itself: an RFC 6749 ``error`` code and its description."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass(frozen=True)
class Grant:
    """A code or a token as stored (without its secret)."""

    id: str
    kind: str
    family_id: str
    client_id: str
    person_id: str
    project_id: str
    roles: list[str]
    resource: str
    scopes: list[str]
    code_challenge: str | None
    redirect_uri: str | None
    expires_at: datetime
    used: bool
    revoked: bool


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: list[str]


@dataclass(frozen=True)
class ConsentRequest:
    """What a client asked for, carried through the consent page signed."""

    client_id: str
    client_name: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    state: str | None
    scopes: list[str]
    resource: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _grant(row: OAuthGrant) -> Grant:
    return Grant(
        id=row.id,
        kind=row.kind,
        family_id=row.family_id,
        client_id=row.client_id,
        person_id=row.person_id,
        project_id=row.project_id,
        roles=row.roles.split(","),
        resource=row.resource,
        scopes=list(row.scopes or []),
        code_challenge=row.code_challenge,
        redirect_uri=row.redirect_uri,
        expires_at=row.expires_at,
        used=row.used_at is not None,
        revoked=row.revoked_at is not None,
    )


# Clients ---------------------------------------------------------------------------------


def register_client(env: Env, client_id: str, metadata: dict[str, Any]) -> None:
    with env.db.write() as s:
        s.add(OAuthClient(id=client_id, metadata_json=metadata))


def get_client(env: Env, client_id: str) -> dict[str, Any] | None:
    with env.db.read() as s:
        row = s.get(OAuthClient, client_id) if 0 < len(client_id) <= 80 else None
        return None if row is None else dict(row.metadata_json)


# Consent ---------------------------------------------------------------------------------


def sign_consent(env: Env, request: ConsentRequest) -> str:
    return env.signer.sign("oauth-consent", request.__dict__, ttl=CONSENT_TTL)


def read_consent(env: Env, token: str) -> ConsentRequest:
    """Raises InvalidInput when the consent page's request is forged or too old."""
    try:
        value = env.signer.unsign("oauth-consent", token, what="authorization request")
        return ConsentRequest(**value)
    except (InvalidInput, TypeError):
        raise InvalidInput(
            "this authorization request expired or is not valid: start connecting again "
            "from your agent"
        ) from None


def allow(
    env: Env, request: ConsentRequest, person_id: str, project_id: str, roles: list[str]
) -> str:
    """The authorization code for what the person allowed: ``roles`` in ``project_id``, which
    must be theirs. Raises Forbidden (not a member, or roles they do not have), InvalidInput
    (no role chosen)."""
    chosen = sorted(set(roles), key=lambda r: ROLES.index(r) if r in ROLES else 99)
    if not chosen or any(r not in ROLES for r in chosen):
        raise InvalidInput(f"choose one or more roles to allow, of {', '.join(ROLES)}")
    code = CODE_PREFIX + secrets.token_urlsafe(24)
    with env.db.write() as s:
        have = membership_roles(s, person_id, project_id)
        if have is None:
            raise Forbidden("you are not a member of that project: choose one of yours")
        beyond = [r for r in chosen if not any(r in IMPLIED[h] for h in have)]
        if beyond:
            raise Forbidden(
                f"you do not have the role {', '.join(beyond)} in that project, so you cannot "
                "allow an agent to use it"
            )
        s.add(
            OAuthGrant(
                id=new_id("oag"),
                token_hash=_hash(code),
                kind="code",
                family_id=new_id("fam"),
                client_id=request.client_id,
                person_id=person_id,
                project_id=project_id,
                roles=",".join(chosen),
                resource=request.resource,
                scopes=request.scopes,
                code_challenge=request.code_challenge,
                redirect_uri=request.redirect_uri if request.redirect_uri_explicit else None,
                expires_at=utcnow() + CODE_TTL,
            )
        )
    return code


# Codes and tokens ------------------------------------------------------------------------


def _load(env: Env, secret: str, kind: str) -> Grant | None:
    with env.db.read() as s:
        row = s.scalar(
            select(OAuthGrant).where(
                OAuthGrant.token_hash == _hash(secret), OAuthGrant.kind == kind
            )
        )
        return None if row is None else _grant(row)


def load_code(env: Env, code: str) -> Grant | None:
    return _load(env, code, "code") if code.startswith(CODE_PREFIX) else None


def load_refresh(env: Env, token: str) -> Grant | None:
    return _load(env, token, "refresh") if token.startswith(REFRESH_PREFIX) else None


def load_access(env: Env, token: str) -> Grant | None:
    return _load(env, token, "access") if token.startswith(ACCESS_PREFIX) else None


def _issue(s: Any, grant: Grant, project_id: str) -> Tokens:
    access = ACCESS_PREFIX + secrets.token_urlsafe(24)
    refresh = REFRESH_PREFIX + secrets.token_urlsafe(24)
    now = utcnow()
    for kind, secret, ttl in (("access", access, ACCESS_TTL), ("refresh", refresh, REFRESH_TTL)):
        s.add(
            OAuthGrant(
                id=new_id("oag"),
                token_hash=_hash(secret),
                kind=kind,
                family_id=grant.family_id,
                client_id=grant.client_id,
                person_id=grant.person_id,
                project_id=project_id,
                roles=",".join(grant.roles),
                resource=grant.resource,
                scopes=grant.scopes,
                expires_at=now + ttl,
            )
        )
    return Tokens(access, refresh, int(ACCESS_TTL.total_seconds()), grant.scopes)


def _revoke_family(s: Any, family_id: str) -> None:
    s.execute(
        update(OAuthGrant)
        .where(OAuthGrant.family_id == family_id, OAuthGrant.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )


def _spend(env: Env, grant: Grant, what: str) -> Tokens:
    """Use a code or a refresh token once, for a new pair of tokens. A second use revokes the
    family (it leaked) and raises OAuthRefused, as do a revoked or expired one."""
    refused: OAuthRefused | None = None
    with env.db.write() as s:
        row = s.get(OAuthGrant, grant.id, with_for_update=True)
        assert row is not None
        if row.revoked_at is not None:
            refused = OAuthRefused("invalid_grant", f"this {what} was revoked: sign in again")
        elif row.used_at is not None:
            # The revocation is committed before the refusal is raised.
            _revoke_family(s, row.family_id)
            refused = OAuthRefused(
                "invalid_grant",
                f"this {what} was used already, so it may have leaked: every token of this "
                "sign-in is revoked now. Connect again to sign in.",
            )
        elif row.expires_at <= utcnow():
            refused = OAuthRefused("invalid_grant", f"this {what} has expired: sign in again")
        elif membership_roles(s, row.person_id, row.project_id) is None:
            _revoke_family(s, row.family_id)
            refused = OAuthRefused(
                "invalid_grant",
                "you are no longer a member of this sign-in's project: connect again",
            )
        else:
            row.used_at = utcnow()
            # row.project_id follows set_project (it moves the whole family).
            return _issue(s, grant, row.project_id)
    raise refused


def exchange_code(env: Env, grant: Grant) -> Tokens:
    return _spend(env, grant, "authorization code")


def rotate(env: Env, grant: Grant) -> Tokens:
    return _spend(env, grant, "refresh token")


def revoke(env: Env, grant: Grant) -> None:
    """Revoke the token and every other token of its sign-in."""
    with env.db.write() as s:
        _revoke_family(s, grant.family_id)


def revoke_person(env: Env, person_id: str) -> None:
    """Every token of a person (their password was reset, say)."""
    with env.db.write() as s:
        s.execute(
            update(OAuthGrant)
            .where(OAuthGrant.person_id == person_id, OAuthGrant.revoked_at.is_(None))
            .values(revoked_at=utcnow())
        )


def verify(env: Env, token: str, resource: str) -> Grant:
    """The access token's grant, when it is live and was issued for ``resource``. Raises
    Unauthenticated saying which of those it is not."""
    grant = load_access(env, token)
    if grant is None or grant.revoked:
        raise Unauthenticated("this access token is unknown or revoked: connect again")
    if grant.expires_at <= utcnow():
        raise Unauthenticated("this access token has expired: refresh it, or connect again")
    if grant.resource.rstrip("/") != resource.rstrip("/"):
        raise Unauthenticated(
            f"this access token was issued for {grant.resource}, not for {resource}: "
            "ask for a token for this endpoint"
        )
    return grant


def actor_for(env: Env, token: str, resource: str) -> Actor:
    """The Actor of an agent acting with a person's access token at ``resource``. Raises
    Unauthenticated (see verify) or Forbidden (the person left the project)."""
    grant = verify(env, token, resource)
    actor = people.person_actor(
        env, grant.person_id, grant.project_id, as_agent=True, granted=frozenset(grant.roles)
    )
    return Actor(
        project_id=actor.project_id,
        key_id=actor.key_id,
        name=actor.name,
        roles=actor.roles,
        is_agent=True,
        person_id=actor.person_id,
        connection=grant.family_id,
    )


def is_token(secret: str | None) -> bool:
    return bool(secret) and str(secret).startswith(ACCESS_PREFIX)
