"""The authorization server's rules in services/oauth.py, on SQLite and PostgreSQL: a code
and a refresh token work once, a second use revokes the sign-in, tokens keep to their resource
and to what the person allowed and still has, a password reset ends them."""

from __future__ import annotations

import pytest

from tests.conftest import Keys
from viewfinder.errors import Forbidden, Unauthenticated
from viewfinder.services import oauth, people, projects, teams
from viewfinder.services.env import Env

PASSWORD = "correct horse battery"
MCP = "http://127.0.0.1:8000/mcp"


def consent(resource: str = MCP) -> oauth.ConsentRequest:
    return oauth.ConsentRequest(
        client_id="client-1",
        client_name="agent",
        redirect_uri="http://127.0.0.1:9/cb",
        redirect_uri_explicit=True,
        code_challenge="c",
        state=None,
        scopes=[],
        resource=resource,
    )


def sign_in(env: Env, keys: Keys, roles: list[str]) -> tuple[str, oauth.Tokens]:
    bo = people.create_person(env, "bo@example.com", "Bo", PASSWORD)
    teams.add_member_locally(env, "default", bo.email, ["approve"])
    oauth.register_client(env, "client-1", {"client_name": "agent"})
    code = oauth.allow(env, consent(), bo.id, keys.admin.project_id, roles)
    grant = oauth.load_code(env, code)
    assert grant is not None
    return bo.id, oauth.exchange_code(env, grant)


def test_a_refresh_token_rotates_once_and_its_reuse_revokes_the_sign_in(
    env: Env, keys: Keys
) -> None:
    _, first = sign_in(env, keys, ["review"])
    old = oauth.load_refresh(env, first.refresh_token)
    assert old is not None
    second = oauth.rotate(env, old)
    assert oauth.actor_for(env, second.access_token, MCP).name == "agent for Bo"
    with pytest.raises(oauth.OAuthRefused, match="used already, so it may have leaked"):
        oauth.rotate(env, old)
    for token in (first.access_token, second.access_token):
        with pytest.raises(Unauthenticated, match="unknown or revoked"):
            oauth.verify(env, token, MCP)
    newer = oauth.load_refresh(env, second.refresh_token)
    assert newer is not None
    with pytest.raises(oauth.OAuthRefused, match="was revoked"):
        oauth.rotate(env, newer)


def test_an_agents_roles_are_what_its_person_allowed_and_still_has(env: Env, keys: Keys) -> None:
    bo_id, tokens = sign_in(env, keys, ["review"])
    actor = oauth.actor_for(env, tokens.access_token, MCP)
    assert actor.roles == {"review"} and actor.is_agent and actor.person_id == bo_id
    with pytest.raises(Unauthenticated, match="issued for http://127.0.0.1:8000/mcp, not for"):
        oauth.actor_for(env, tokens.access_token, MCP + "/uiverify")
    with pytest.raises(Forbidden, match="you do not have the role admin"):
        oauth.allow(env, consent(), bo_id, keys.admin.project_id, ["admin"])
    teams.remove_member(env, keys.admin, bo_id)
    with pytest.raises(Forbidden, match="no longer a member"):
        oauth.actor_for(env, tokens.access_token, MCP)


def test_a_password_reset_ends_the_persons_tokens(env: Env, keys: Keys) -> None:
    _, tokens = sign_in(env, keys, ["review"])
    people.reset_password(env, "bo@example.com", "a whole new password")
    with pytest.raises(Unauthenticated, match="unknown or revoked"):
        oauth.verify(env, tokens.access_token, MCP)


def test_people_are_named_beside_keys_for_who_did_what(env: Env, keys: Keys) -> None:
    bo_id, _ = sign_in(env, keys, ["review"])
    named = projects.key_labels(env, keys.admin)
    assert named[bo_id] == "Bo" and named[keys.admin.key_id] == "admin"
