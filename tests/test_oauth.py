"""Viewfinder as an OAuth 2.1 authorization server, in process over HTTP: discovery, dynamic
registration of a public client, consent by a signed-in person, PKCE S256, tokens bound to
their resource, rotation with reuse detection, revocation; MCP endpoints answering 401 with
their resource metadata; the identity tools for a person's token and a project key; and every
refusal with its message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Keys, make_build, shot
from tests.oauth_flow import (
    BASE,
    REDIRECT,
    answer_consent,
    full_flow,
    open_consent,
    pkce,
    register,
    sign_in_person,
    token,
)
from viewfinder.app import create_app
from viewfinder.services import builds, people, teams
from viewfinder.services.env import Env
from viewfinder.settings import Settings

PASSWORD = "correct horse battery"
MCP = f"{BASE}/mcp"


@pytest.fixture
def client(env: Env) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=env.settings.data_dir,
        database_url=env.settings.database_url,
        workers=0,
        secret="test",
        protected_profiles="miseru",
    )
    env.settings = settings
    with TestClient(create_app(env=env, workers=0), base_url=BASE) as c:
        yield c


def rpc(
    client: TestClient, path: str, bearer: str | None, method: str, params: dict[str, Any]
) -> Any:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    if bearer is not None:
        headers["Authorization"] = f"Bearer {bearer}"
    return client.post(
        path, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers
    )


def call_tool(client: TestClient, path: str, bearer: str, name: str, **args: Any) -> Any:
    answer = rpc(client, path, bearer, "tools/call", {"name": name, "arguments": args})
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


@pytest.fixture
def ada(env: Env, keys: Keys) -> people.PersonRecord:
    return people.create_person(env, "ada@example.com", "Ada", PASSWORD, owner=True)


pytestmark = pytest.mark.parametrize("env", ["sqlite"], indirect=True)


def test_discovery_names_the_authorization_server_and_each_endpoint_as_a_resource(
    client: TestClient,
) -> None:
    server = client.get("/.well-known/oauth-authorization-server").json()
    assert server["issuer"].rstrip("/") == BASE
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert {"authorization_code", "refresh_token"} <= set(server["grant_types_supported"])
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        assert server[key].startswith(BASE)
    assert server["revocation_endpoint"] == f"{BASE}/revoke"
    for path in ("/mcp", "/mcp/uiverify", "/mcp/miseru", "/api/v1"):
        resource = client.get(f"/.well-known/oauth-protected-resource{path}").json()
        assert resource["resource"] == f"{BASE}{path}"
        assert [a.rstrip("/") for a in resource["authorization_servers"]] == [BASE]


def test_open_profiles_list_tools_without_a_token_and_protected_ones_answer_401(
    client: TestClient, keys: Keys
) -> None:
    open_list = rpc(client, "/mcp", None, "tools/list", {})
    assert open_list.status_code == 200 and open_list.json()["result"]["tools"]
    shut = rpc(client, "/mcp/miseru", None, "tools/list", {})
    assert shut.status_code == 401
    assert shut.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp/miseru"'
    )
    assert "sign in with OAuth" in shut.json()["error"]["message"]
    # A project key is still accepted everywhere as a Bearer token.
    keyed = rpc(client, "/mcp/miseru", keys.secrets["agent"], "tools/list", {})
    assert keyed.status_code == 200
    # A presented token that is not valid gets 401 with the metadata, on an open profile too.
    wrong = rpc(client, "/mcp", "vf_proj_" + "x" * 32, "tools/list", {})
    assert wrong.status_code == 401
    challenge = wrong.headers["www-authenticate"]
    assert 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"' in (
        challenge
    )
    assert 'error="invalid_token"' in challenge and "unknown or revoked" in challenge


def test_a_person_allows_an_agent_which_then_acts_for_them_in_the_chosen_project(
    client: TestClient, env: Env, keys: Keys, other: Keys, ada: people.PersonRecord
) -> None:
    client_id = register(client)
    sign_in_person(client, "ada@example.com", PASSWORD)
    verifier, challenge = pkce()
    consent = open_consent(client, client_id, challenge, MCP)
    assert "Allow test agent?" in consent.html and "default" in consent.html
    back = answer_consent(client, consent, project=other.admin.project_id, roles=["review"])
    status, tokens = token(
        client,
        grant_type="authorization_code",
        code=back["code"],
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
    )
    assert status == 200 and tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 3600 and tokens["refresh_token"].startswith("vf_ort_")
    access = tokens["access_token"]
    me = call_tool(client, "/mcp", access, "whoami")["structuredContent"]
    assert (me["kind"], me["name"], me["acting_for"]) == ("agent", "agent for Ada", "Ada")
    assert me["project"]["name"] == "other" and me["roles"] == ["review"]
    # The code works once.
    again, refused = token(
        client,
        grant_type="authorization_code",
        code=back["code"],
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
    )
    assert again == 400 and refused["error"] == "invalid_grant"
    assert "used already" in refused["error_description"]
    # ... and using it twice revoked what it gave.
    assert rpc(client, "/mcp", access, "tools/list", {}).status_code == 401


def test_the_identity_tools_change_a_persons_default_and_refuse_a_key_saying_why(
    client: TestClient, env: Env, keys: Keys, other: Keys, ada: people.PersonRecord
) -> None:
    client_id = register(client)
    sign_in_person(client, "ada@example.com", PASSWORD)
    tokens = full_flow(client, client_id, MCP, keys.admin.project_id, ["review", "approve"])
    access = tokens["access_token"]
    listed = call_tool(client, "/mcp", access, "list_projects")["structuredContent"]
    assert [p["name"] for p in listed["projects"]] == ["default", "other"]
    moved = call_tool(client, "/mcp", access, "set_project", project="other")
    assert moved["structuredContent"]["project"]["name"] == "other"
    overview = call_tool(client, "/mcp", access, "get_project")["structuredContent"]
    assert overview["project"]["name"] == "other" and overview["source"] == "connection"
    assert overview["key_name"] == "agent for Ada"

    refused = call_tool(client, "/mcp", keys.secrets["agent"], "set_project", project="other")
    assert refused["isError"] is True
    text = refused["content"][0]["text"]
    assert text.startswith("[forbidden] a project key works in its own project only")
    mine = call_tool(client, "/mcp", keys.secrets["agent"], "whoami")["structuredContent"]
    assert mine["kind"] == "key" and mine["project"]["name"] == "default"


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_whole_family(
    client: TestClient, env: Env, keys: Keys, ada: people.PersonRecord
) -> None:
    client_id = register(client)
    sign_in_person(client, "ada@example.com", PASSWORD)
    first = full_flow(client, client_id, MCP, keys.admin.project_id, ["review"])
    status, second = token(
        client,
        grant_type="refresh_token",
        refresh_token=first["refresh_token"],
        client_id=client_id,
    )
    assert status == 200 and second["refresh_token"] != first["refresh_token"]
    assert call_tool(client, "/mcp", second["access_token"], "whoami")["isError"] is False

    status, reused = token(
        client,
        grant_type="refresh_token",
        refresh_token=first["refresh_token"],
        client_id=client_id,
    )
    assert status == 400 and reused["error"] == "invalid_grant"
    assert reused["error_description"] == (
        "this refresh token was used already, so it may have leaked: every token of this "
        "sign-in is revoked now. Connect again to sign in."
    )
    for access in (first["access_token"], second["access_token"]):
        answer = rpc(client, "/mcp", access, "tools/list", {})
        assert answer.status_code == 401 and "unknown or revoked" in answer.text
    status, late = token(
        client,
        grant_type="refresh_token",
        refresh_token=second["refresh_token"],
        client_id=client_id,
    )
    assert status == 400 and "revoked" in late["error_description"]


def test_revoking_a_token_ends_its_sign_in(
    client: TestClient, env: Env, keys: Keys, ada: people.PersonRecord
) -> None:
    client_id = register(client)
    sign_in_person(client, "ada@example.com", PASSWORD)
    tokens = full_flow(client, client_id, MCP, keys.admin.project_id, ["review"])
    done = client.post("/revoke", data={"token": tokens["access_token"], "client_id": client_id})
    assert done.status_code == 200
    assert rpc(client, "/mcp", tokens["access_token"], "tools/list", {}).status_code == 401
    status, refused = token(
        client,
        grant_type="refresh_token",
        refresh_token=tokens["refresh_token"],
        client_id=client_id,
    )
    assert status == 400 and "revoked" in refused["error_description"]


def test_a_token_works_only_at_the_resource_it_was_issued_for(
    client: TestClient, env: Env, keys: Keys, ada: people.PersonRecord
) -> None:
    client_id = register(client)
    sign_in_person(client, "ada@example.com", PASSWORD)
    tokens = full_flow(client, client_id, f"{BASE}/mcp/uiverify", keys.admin.project_id, ["review"])
    access = tokens["access_token"]
    assert rpc(client, "/mcp/uiverify", access, "tools/list", {}).status_code == 200
    elsewhere = rpc(client, "/mcp", access, "tools/list", {})
    assert elsewhere.status_code == 401
    assert (
        f"this access token was issued for {BASE}/mcp/uiverify, not for {BASE}/mcp"
        in elsewhere.json()["error"]["message"]
    )
    api = client.get("/api/v1/builds", headers={"Authorization": f"Bearer {access}"})
    assert api.status_code == 401 and "not for http://127.0.0.1:8000/api/v1" in api.text
    # A token for the REST API works there, for the person (projects are people's to make).
    rest = full_flow(client, client_id, f"{BASE}/api/v1", keys.admin.project_id, ["admin"])
    made = client.post(
        "/api/v1/projects",
        json={"name": "storefront"},
        headers={"Authorization": f"Bearer {rest['access_token']}"},
    )
    assert made.status_code == 201 and made.json()["name"] == "storefront"


def test_refusals_of_the_flow_say_what_went_wrong(
    client: TestClient, env: Env, keys: Keys, ada: people.PersonRecord
) -> None:
    client_id = register(client)
    sign_in_person(client, "ada@example.com", PASSWORD)

    # Consent denied: the client hears access_denied.
    _, challenge = pkce()
    consent = open_consent(client, client_id, challenge, MCP)
    denied = answer_consent(
        client, consent, project=keys.admin.project_id, roles=["review"], decision="deny"
    )
    assert denied["error"] == "access_denied" and denied["state"] == "st4te"
    assert denied["error_description"] == "Ada denied the request"

    # A PKCE mismatch.
    verifier, challenge = pkce()
    consent = open_consent(client, client_id, challenge, MCP)
    back = answer_consent(client, consent, project=keys.admin.project_id, roles=["review"])
    status, refused = token(
        client,
        grant_type="authorization_code",
        code=back["code"],
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier + "x",
    )
    assert (status, refused["error"]) == (400, "invalid_grant")
    assert refused["error_description"] == "incorrect code_verifier"

    # PKCE plain is not offered; a resource of another server is not ours to grant.
    plain = client.get(
        "/authorize",
        params={
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": "abc",
            "code_challenge_method": "plain",
            "resource": MCP,
        },
        follow_redirects=False,
    )
    assert "code_challenge_method" in (plain.headers.get("location", "") + plain.text)
    foreign = client.get(
        "/authorize",
        params={
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": "https://elsewhere.example/mcp",
        },
        follow_redirects=False,
    )
    assert "invalid_target" in foreign.headers["location"]

    # Roles the person does not have in the project cannot be allowed.
    teams.add_member_locally(env, "default", "ada@example.com", ["review"])
    consent = open_consent(client, client_id, challenge, MCP)
    over = client.post(
        "/oauth/consent",
        data={
            "csrf": consent.csrf,
            "request": consent.request,
            "project": keys.admin.project_id,
            "roles": ["approve"],
            "decision": "allow",
        },
    )
    assert over.status_code == 400
    assert "you do not have the role approve in that project" in over.text
    forged = client.get("/oauth/consent", params={"request": "forged"})
    assert forged.status_code == 400 and "start connecting again" in forged.text


def test_the_consent_page_asks_a_person_to_sign_in_first(
    client: TestClient, env: Env, keys: Keys, ada: people.PersonRecord
) -> None:
    client_id = register(client)
    _, challenge = pkce()
    answer = client.get(
        "/authorize",
        params={
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s",
            "resource": MCP,
        },
        follow_redirects=False,
    )
    page = client.get(answer.headers["location"], follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/login?next=")


def test_two_projects_people_sessions_and_tokens_of_one_read_nothing_of_the_other(
    client: TestClient, env: Env, keys: Keys, other: Keys
) -> None:
    people.create_person(env, "bo@example.com", "Bo", PASSWORD)
    teams.add_member_locally(env, "other", "bo@example.com", ["review"])
    make_build(env, keys.ci, "aaaa", {"home": shot()})
    theirs = make_build(env, keys.ci, "bbbb", {"home": shot(box=(2, 2, 20, 20))})
    diff_id = builds.get_build(env, keys.ci, build_id=theirs).changed.items[0].diff_id
    assert diff_id is not None
    mine = make_build(env, other.ci, "cccc", {"home": shot()})

    client_id = register(client)
    sign_in_person(client, "bo@example.com", PASSWORD)
    # The dashboard session: the other project's build is not found; Bo's own is there.
    assert client.get(f"/builds/{theirs}").status_code == 404
    assert client.get(f"/builds/{mine}").status_code == 200
    # An MCP token: nothing of the first project, not even by switching to it.
    access = full_flow(client, client_id, MCP, other.admin.project_id, ["review"])["access_token"]
    for name, args in (("get_build", {"build_id": theirs}), ("get_diff", {"diff_id": diff_id})):
        refused = call_tool(client, "/mcp", access, name, **args)
        assert refused["isError"] is True
        assert refused["content"][0]["text"].startswith("[not_found]")
    listed = call_tool(client, "/mcp", access, "list_builds")["structuredContent"]
    assert [b["id"] for b in listed["items"]] == [mine]
    moved = call_tool(client, "/mcp", access, "set_project", project="default")
    assert (
        moved["isError"] is True
        and "you are not a member of a project" in (moved["content"][0]["text"])
    )
    # A REST token the same.
    rest = full_flow(client, client_id, f"{BASE}/api/v1", other.admin.project_id, ["review"])
    bearer = {"Authorization": f"Bearer {rest['access_token']}"}
    assert client.get(f"/api/v1/builds/{theirs}", headers=bearer).status_code == 404
    assert client.get(f"/api/v1/diffs/{diff_id}", headers=bearer).status_code == 404
    assert client.get(f"/api/v1/builds/{mine}", headers=bearer).status_code == 200
    # The consent page offers only Bo's projects, and refuses another one posted anyway.
    _, challenge = pkce()
    consent = open_consent(client, client_id, challenge, MCP)
    assert ">other (you: review)<" in consent.html and "default (you" not in consent.html
    forced = client.post(
        "/oauth/consent",
        data={
            "csrf": consent.csrf,
            "request": consent.request,
            "project": keys.admin.project_id,
            "roles": ["review"],
            "decision": "allow",
        },
    )
    assert forced.status_code == 400 and "you are not a member of that project" in forced.text
