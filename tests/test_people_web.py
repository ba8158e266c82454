"""People on the dashboard, in process: signing in with an email and a password (and still with
a key), slowing down after wrong passwords, signing out that ends the session on the server,
and joining a project from an invitation link."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.conftest import Keys
from tests.web_client import sign_in
from viewfinder.app import create_app
from viewfinder.services import people, teams
from viewfinder.services.env import Env
from viewfinder.store.models import Invitation, utcnow
from viewfinder.web.sessions import SESSION_COOKIE

pytestmark = pytest.mark.parametrize("env", ["sqlite"], indirect=True)
PASSWORD = "correct horse battery"


@pytest.fixture
def client(env: Env) -> Iterator[TestClient]:
    with TestClient(create_app(env=env, workers=0), base_url="http://dash.test") as c:
        yield c


def login_token(client: TestClient, path: str = "/login") -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert found is not None
    return found.group(1)


def sign_in_as(client: TestClient, email: str, password: str) -> tuple[int, str]:
    token = login_token(client)
    done = client.post(
        "/login",
        data={"email": email, "password": password, "csrf": token},
        follow_redirects=False,
    )
    return done.status_code, done.text


def test_a_person_signs_in_with_email_and_password_and_is_named_on_every_page(
    env: Env, client: TestClient, keys: Keys
) -> None:
    people.create_person(env, "ada@example.com", "Ada Lovelace", PASSWORD, owner=True)
    status, _ = sign_in_as(client, "ada@example.com", PASSWORD)
    assert status == 303
    cookie = client.cookies.get(SESSION_COOKIE)
    assert cookie is not None and PASSWORD not in cookie
    page = client.get("/builds")
    assert page.status_code == 200 and "Ada Lovelace" in page.text


def test_a_person_in_no_project_is_told_how_to_join_one(
    env: Env, client: TestClient, keys: Keys
) -> None:
    people.create_person(env, "zoe@example.com", "Zoe", PASSWORD)
    status, text = sign_in_as(client, "zoe@example.com", PASSWORD)
    assert status == 400 and "you belong to no project yet: open an invitation link" in text


def test_a_wrong_password_is_refused_and_repeated_ones_slow_down(
    env: Env, client: TestClient, keys: Keys
) -> None:
    people.create_person(env, "ada@example.com", "Ada", PASSWORD)
    status, text = sign_in_as(client, "ada@example.com", "not my password")
    assert status == 400 and "wrong email or password: check both and try again" in text
    assert 'value="ada@example.com"' in text  # the email stays typed in
    for _ in range(people.FREE_TRIES - 1):
        sign_in_as(client, "ada@example.com", "not my password")
    status, text = sign_in_as(client, "ada@example.com", PASSWORD)
    assert status == 429 and "too many wrong passwords for this account: try again in" in text


def test_signing_out_ends_the_session_on_the_server_so_a_copied_cookie_is_useless(
    env: Env, client: TestClient, keys: Keys
) -> None:
    people.create_person(env, "ada@example.com", "Ada", PASSWORD, owner=True)
    assert sign_in_as(client, "ada@example.com", PASSWORD)[0] == 303
    copied = client.cookies.get(SESSION_COOKIE)
    assert copied is not None
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/builds").text)
    assert csrf is not None
    out = client.post("/logout", data={"csrf": csrf.group(1)}, follow_redirects=False)
    assert out.status_code == 303
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, copied)
    again = client.get("/builds", follow_redirects=False)
    assert again.status_code == 303 and again.headers["location"].startswith("/login")


def test_a_project_key_still_signs_in_for_scripts_and_existing_setups(
    client: TestClient, keys: Keys
) -> None:
    sign_in(client, keys.secrets["admin"])
    assert client.get("/builds").status_code == 200


def test_an_invitation_link_makes_an_account_and_a_member_and_refuses_when_expired(
    env: Env, client: TestClient, keys: Keys
) -> None:
    invited = teams.invite(env, keys.admin, ["review"])
    path = invited.url.removeprefix(env.settings.public_url)
    page = client.get(path)
    assert page.status_code == 200 and "Join default" in page.text and "review" in page.text
    token = login_token(client, path)
    short = client.post(
        path,
        data={"csrf": token, "email": "cy@example.com", "name": "Cy", "password": "short"},
        follow_redirects=False,
    )
    assert short.status_code == 400 and "at least 10 characters" in short.text
    joined = client.post(
        path,
        data={"csrf": token, "email": "cy@example.com", "name": "Cy", "password": PASSWORD},
        follow_redirects=False,
    )
    assert joined.status_code == 303
    assert "Cy" in client.get("/builds").text
    used = client.get(path)
    assert "was used already" in used.text

    client.cookies.clear()
    late = teams.invite(env, keys.admin, ["upload"])
    with env.db.write() as s:
        s.execute(
            update(Invitation)
            .where(Invitation.accepted_at.is_(None))
            .values(expires_at=utcnow() - timedelta(minutes=1))
        )
    late_path = late.url.removeprefix(env.settings.public_url)
    assert "This invitation has expired" in client.get(late_path).text
    refused = client.post(
        late_path,
        data={
            "csrf": login_token(client),
            "email": "dee@example.com",
            "name": "Dee",
            "password": PASSWORD,
        },
    )
    assert refused.status_code == 409 and "this invitation expired on" in refused.text


def test_the_projects_page_lets_owners_make_projects_people_switch_and_admins_invite(
    env: Env, client: TestClient, keys: Keys
) -> None:
    people.create_person(env, "ada@example.com", "Ada", PASSWORD, owner=True)
    assert sign_in_as(client, "ada@example.com", PASSWORD)[0] == 303
    page = client.get("/projects").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None and "default" in page and "(you are here)" in page
    token = csrf.group(1)
    made = client.post(
        "/projects/new", data={"csrf": token, "name": "shop"}, follow_redirects=False
    )
    assert made.status_code == 303
    taken = client.post("/projects/new", data={"csrf": token, "name": "shop"})
    assert taken.status_code == 409 and "exists already" in taken.text
    shop = next(p for p in teams.all_projects(env) if p.name == "shop")
    switched = client.post(
        "/projects/switch", data={"csrf": token, "project": shop.id}, follow_redirects=False
    )
    assert switched.status_code == 303
    here = (
        r'<strong>shop</strong>[^<]*<span class="hint">admin</span>\s*<span class="hint">\(you are'
    )
    assert re.search(here, client.get("/projects").text)
    invited = client.post("/projects/invite", data={"csrf": token, "roles": ["review"]})
    assert invited.status_code == 201 and "/invitations/vf_inv_" in invited.text
    renamed = client.post(
        f"/projects/{shop.id}/update",
        data={"csrf": token, "name": "storefront", "archive": ""},
        follow_redirects=False,
    )
    assert renamed.status_code == 303 and "storefront" in client.get("/projects").text
    forged = client.post("/projects/new", data={"csrf": "guess", "name": "x"})
    assert forged.status_code == 403


def test_a_person_without_the_admin_role_sees_no_members_and_cannot_invite(
    env: Env, client: TestClient, keys: Keys
) -> None:
    people.create_person(env, "bo@example.com", "Bo", PASSWORD)
    teams.add_member_locally(env, "default", "bo@example.com", ["review"])
    assert sign_in_as(client, "bo@example.com", PASSWORD)[0] == 303
    page = client.get("/projects").text
    assert "Invite someone" not in page and "All projects" not in page
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None
    refused = client.post("/projects/invite", data={"csrf": token.group(1), "roles": ["review"]})
    assert refused.status_code == 403
    assert "you cannot invite people in this project" in refused.text
    owner_only = client.post("/projects/new", data={"csrf": token.group(1), "name": "mine"})
    assert owner_only.status_code == 403 and "only the server&#39;s owners" in owner_only.text
