"""The OAuth flow driven by hand over HTTP, for tests that look at each step and each refusal:
register a public client, sign a person in to the dashboard, /authorize, answer the consent
form, /token. (The browser-driven flow with the SDK's own client is in test_oauth_e2e.py.)"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

REDIRECT = "http://127.0.0.1:9/callback"
BASE = "http://127.0.0.1:8000"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


def register(client: TestClient) -> str:
    made = client.post(
        "/register",
        json={
            "client_name": "test agent",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert made.status_code == 201, made.text
    assert "client_secret" not in made.json() or made.json()["client_secret"] is None
    client_id: str = made.json()["client_id"]
    return client_id


def sign_in_person(client: TestClient, email: str, password: str) -> None:
    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token is not None
    done = client.post(
        "/login",
        data={"email": email, "password": password, "csrf": token.group(1)},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text


@dataclass
class Consent:
    """The consent page reached from /authorize: its signed request and CSRF token."""

    request: str
    csrf: str
    html: str


def open_consent(
    client: TestClient, client_id: str, challenge: str, resource: str, **extra: str
) -> Consent:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st4te",
        "resource": resource,
    } | extra
    answer = client.get("/authorize", params=params, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    page = client.get(answer.headers["location"])
    assert page.status_code == 200, page.text
    request = re.search(r'name="request" value="([^"]+)"', page.text)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert request is not None and csrf is not None, page.text
    return Consent(request.group(1), csrf.group(1), page.text)


def answer_consent(
    client: TestClient,
    consent: Consent,
    *,
    project: str,
    roles: list[str],
    decision: str = "allow",
) -> dict[str, str]:
    """Submit the consent form; returns the query the client's redirect URI got."""
    answer = client.post(
        "/oauth/consent",
        data={
            "csrf": consent.csrf,
            "request": consent.request,
            "project": project,
            "roles": roles,
            "decision": decision,
        },
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    target = answer.headers["location"]
    assert target.startswith(REDIRECT)
    return {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}


def token(client: TestClient, **form: str) -> tuple[int, dict[str, Any]]:
    answer = client.post("/token", data=form)
    return answer.status_code, answer.json()


def full_flow(
    client: TestClient, client_id: str, resource: str, project: str, roles: list[str]
) -> dict[str, Any]:
    """Consent (the person must be signed in) and the code exchanged: the token response."""
    verifier, challenge = pkce()
    consent = open_consent(client, client_id, challenge, resource)
    back = answer_consent(client, consent, project=project, roles=roles)
    assert back["state"] == "st4te"
    status, tokens = token(
        client,
        grant_type="authorization_code",
        code=back["code"],
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
    )
    assert status == 200, tokens
    return tokens
