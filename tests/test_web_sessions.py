"""The dashboard's sign-in and its guards, in process: sessions that hold no secret and end with
their key, CSRF on every state-changing request, pages and images only for the session's own
project, and story names and comment bodies escaped."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Keys, drain, shot
from tests.web_client import sign_in
from viewfinder.app import create_app
from viewfinder.services import builds, projects, threads
from viewfinder.services.env import Env
from viewfinder.web.sessions import SESSION_COOKIE

# The dashboard has no database-specific code; the services it calls are tested on both.
pytestmark = pytest.mark.parametrize("env", ["sqlite"], indirect=True)

PAYLOAD_NAME = "<img src=x onerror=alert(1)>"
PAYLOAD_BODY = '<script>alert("x")</script><img src=x onerror="alert(2)">'


@pytest.fixture
def client(env: Env) -> Iterator[TestClient]:
    with TestClient(create_app(env=env, workers=0), base_url="http://dash.test") as c:
        yield c


def changed_build(env: Env, keys: Keys, name: str = "home") -> tuple[str, str, str]:
    """A build with one changed story: (build id, story id, diff id)."""
    first = builds.create_build(env, keys.ci, commit_sha="aaaa")
    builds.add_story(env, keys.ci, first.id, name=name, variant=None, data=shot())
    builds.finalize_build(env, keys.ci, first.id)
    second = builds.create_build(env, keys.ci, commit_sha="bbbb")
    builds.add_story(
        env, keys.ci, second.id, name=name, variant=None, data=shot(box=(4, 4, 30, 30))
    )
    builds.finalize_build(env, keys.ci, second.id)
    drain(env)
    story = builds.get_build(env, keys.ci, build_id=second.id).changed.items[0]
    assert story.diff_id is not None
    return second.id, story.id, story.diff_id


def test_pages_ask_to_sign_in_and_the_session_holds_no_key(client: TestClient, keys: Keys) -> None:
    page = client.get("/builds/bld_x", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login?next=%2Fbuilds%2Fbld_x"
    assert client.post("/ui/api/builds/bld_x/accept").status_code == 401
    assert client.get("/ui/thumbs/stories/sty_x").status_code == 401

    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token is not None
    wrong = client.post("/login", data={"key": "vf_proj_nope", "csrf": token.group(1)})
    assert wrong.status_code == 400 and "unknown or revoked" in wrong.text
    forged = client.post("/login", data={"key": keys.secrets["admin"], "csrf": "guess"})
    assert forged.status_code == 400 and "CSRF" in forged.text

    done = client.post(
        "/login",
        data={"key": keys.secrets["admin"], "csrf": token.group(1), "next": "//evil.test/x"},
        follow_redirects=False,
    )
    assert done.status_code == 303 and done.headers["location"] == "/builds"
    cookie = done.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Max-Age=43200" in cookie
    assert keys.secrets["admin"] not in cookie
    assert keys.secrets["admin"][8:20] not in client.get("/builds").text
    assert client.get("/builds").status_code == 200


def test_a_revoked_key_ends_its_sessions_and_signing_out_needs_the_token(
    env: Env, client: TestClient, keys: Keys
) -> None:
    person = projects.create_key(env, keys.admin, roles=["review"], label="dana")
    csrf = sign_in(client, person.key)
    assert "dana" in client.get("/builds").text
    refused = client.post("/logout", data={"csrf": "nope"}, follow_redirects=False)
    assert refused.status_code == 403
    projects.revoke_key(env, keys.admin, person.id)
    assert client.get("/builds", follow_redirects=False).status_code == 303

    csrf = sign_in(client, keys.secrets["admin"])
    out = client.post("/logout", data={"csrf": csrf}, follow_redirects=False)
    assert out.status_code == 303 and f'{SESSION_COOKIE}=""' in out.headers["set-cookie"]
    client.cookies.clear()
    assert client.get("/builds", follow_redirects=False).status_code == 303


def test_every_action_needs_the_csrf_token_from_this_origin(
    env: Env, client: TestClient, keys: Keys
) -> None:
    build_id, _, diff_id = changed_build(env, keys)
    csrf = sign_in(client, keys.secrets["admin"])
    url = f"/ui/api/diffs/{diff_id}/comments"
    body = {"body": "why?", "anchor": {"type": "point", "x": 0.5, "y": 0.5}}
    assert client.post(url, json=body).status_code == 403
    assert client.post(url, json=body, headers={"X-CSRF-Token": "forged"}).status_code == 403
    cross = {"X-CSRF-Token": csrf, "Origin": "http://evil.test"}
    assert client.post(url, json=body, headers=cross).status_code == 403
    same = {"X-CSRF-Token": csrf, "Origin": "http://dash.test"}
    made = client.post(url, json=body, headers=same)
    assert made.status_code == 201 and made.json()["author"]["name"] == "admin"

    # The services' rules hold: the open thread blocks accepting the diff and the build.
    refused = client.post(
        f"/ui/api/diffs/{diff_id}/review", json={"decision": "accept"}, headers=same
    )
    assert refused.status_code == 409 and "unresolved comment" in refused.json()["error"]["message"]
    blocked = client.post(f"/ui/api/builds/{build_id}/accept", headers=same).json()
    assert blocked["accepted"] == [] and blocked["blocked"][0]["name"] == "home"
    thread = made.json()["id"]
    for method, path, payload in (
        ("POST", f"/ui/api/comments/{thread}/replies", {"body": "fixed"}),
        ("PATCH", f"/ui/api/comments/{thread}", {"body": "why this?"}),
        ("POST", f"/ui/api/comments/{thread}/resolve", {"resolved": True}),
    ):
        assert client.request(method, path, json=payload).status_code == 403
        assert client.request(method, path, json=payload, headers=same).status_code < 300
    accepted = client.post(
        f"/ui/api/diffs/{diff_id}/review", json={"decision": "accept"}, headers=same
    )
    assert accepted.status_code == 200 and accepted.json()["baseline_updated"] is True


def test_another_projects_pages_and_images_read_as_not_found(
    env: Env, client: TestClient, keys: Keys, other: Keys
) -> None:
    build_id, story_id, diff_id = changed_build(env, keys)
    sign_in(client, other.secrets["admin"])
    for path in (
        f"/builds/{build_id}",
        f"/stories/{story_id}",
        f"/ui/thumbs/stories/{story_id}",
        f"/ui/img/stories/{story_id}",
        f"/ui/img/diffs/{diff_id}/after",
        f"/ui/img/diffs/{diff_id}/before?offset=0&height=10",
    ):
        assert client.get(path).status_code == 404, path
    assert build_id not in client.get("/builds").text

    client.cookies.clear()
    sign_in(client, keys.secrets["agent"])
    thumb = client.get(f"/ui/thumbs/stories/{story_id}?s=changed")
    assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/webp"
    page = client.get(f"/ui/img/diffs/{diff_id}/after?offset=8&height=16")
    assert page.status_code == 200 and page.content.startswith(b"\x89PNG")


def test_story_names_and_comment_bodies_are_escaped(
    env: Env, client: TestClient, keys: Keys
) -> None:
    build_id, story_id, diff_id = changed_build(env, keys, name=PAYLOAD_NAME)
    threads.create_comment(env, keys.agent, diff_id, PAYLOAD_BODY)
    sign_in(client, keys.secrets["admin"])
    for path in (f"/builds/{build_id}", f"/stories/{story_id}"):
        html = client.get(path).text
        assert PAYLOAD_NAME not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
        assert "<script>alert" not in html and 'onerror="alert' not in html
    story = client.get(f"/stories/{story_id}")
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in story.text
    assert "agent</span>" in story.text  # an agent's comment is marked as such
    assert "script-src 'self'" in story.headers["content-security-policy"]
