"""The REST API's contract: one error shape, status codes, OpenAPI, bounded uploads."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import Keys, drain, shot
from viewfinder.app import create_app
from viewfinder.services.env import Env
from viewfinder.store.models import Image


@pytest.fixture
def client(env: Env) -> Iterator[TestClient]:
    with TestClient(create_app(env=env, workers=0)) as c:
        yield c


def auth(keys: Keys, role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {keys.secrets[role]}"}


def assert_error(response: object, status: int, code: str, fragment: str) -> None:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code and fragment in body["error"]["message"]


def test_every_error_has_one_shape(client: TestClient, keys: Keys) -> None:
    assert_error(client.get("/api/v1/builds"), 401, "unauthenticated", "no API key")
    assert_error(
        client.get("/api/v1/builds/bld_x", headers=auth(keys, "ci")), 404, "not_found", "no build"
    )
    assert_error(
        client.post("/api/v1/keys", json={"roles": ["review"]}, headers=auth(keys, "ci")),
        403,
        "forbidden",
        "'admin' role",
    )
    assert_error(
        client.get("/api/v1/build", headers=auth(keys, "ci")),
        400,
        "invalid_input",
        "exactly one of",
    )
    response = client.post("/api/v1/builds", json={"branch": 3}, headers=auth(keys, "ci"))
    assert_error(response, 400, "invalid_input", "commit_sha")
    assert {"field": "commit_sha", "problem": "Field required"} in response.json()["error"][
        "details"
    ]
    assert_error(client.get("/nowhere"), 404, "not_found", "Not Found")


def test_an_oversized_upload_is_refused_before_it_is_read(client: TestClient, keys: Keys) -> None:
    build = client.post("/api/v1/builds", json={"commit_sha": "abcd"}, headers=auth(keys, "ci"))
    big = b"\x89PNG" + b"\0" * (client.app.state.env.settings.max_image_bytes)  # type: ignore[attr-defined]
    response = client.put(
        f"/api/v1/builds/{build.json()['id']}/stories",
        params={"name": "x"},
        content=big,
        headers=auth(keys, "ci"),
    )
    assert_error(response, 413, "image_too_large", "at most")
    # Refused on its declared length, nothing of it read: the connection closes.
    assert response.headers["connection"] == "close"


def test_a_streamed_upload_past_the_limit_is_refused_and_an_unread_body_closes_its_connection(
    client: TestClient, keys: Keys
) -> None:
    limit = client.app.state.env.settings.push_max_bytes  # type: ignore[attr-defined]

    def chunks() -> Iterator[bytes]:  # no declared length: chunked, as a pipe is sent
        for _ in range(2 * limit // (1 << 16)):
            yield b"\0" * (1 << 16)

    response = client.post(
        "/api/v1/images",
        params={"name": "zero", "context": "streamed"},
        content=chunks(),
        headers=auth(keys, "ci"),
    )
    assert_error(response, 413, "image_too_large", "is over")
    # (The test client hands the app the body in one piece, so the connection of a body refused
    # part way through is seen closing against a real server: test_cli_errors.) A body sent
    # with a key nobody knows is refused before any of it is read, and its connection closes.
    refused = client.post(
        "/api/v1/images",
        params={"name": "zero", "context": "streamed"},
        content=chunks(),
        headers={"Authorization": "Bearer vf_proj_unknown"},
    )
    assert refused.status_code == 401 and refused.headers["connection"] == "close"
    # A body read to its end, or none, keeps the connection.
    kept = client.post("/api/v1/builds", json={"commit_sha": "abcd"}, headers=auth(keys, "ci"))
    assert kept.status_code == 201 and "connection" not in kept.headers
    assert "connection" not in client.get("/api/v1/usage", headers=auth(keys, "ci")).headers


def test_a_story_upload_round_trips(client: TestClient, keys: Keys) -> None:
    build = client.post("/api/v1/builds", json={"commit_sha": "abcd"}, headers=auth(keys, "ci"))
    story = client.put(
        f"/api/v1/builds/{build.json()['id']}/stories",
        params={"name": "home", "variant": "64x48"},
        content=shot(),
        headers=auth(keys, "ci"),
    )
    assert story.status_code == 201 and story.json()["state"] == "new"
    image = client.get(f"/api/v1/stories/{story.json()['id']}/image", headers=auth(keys, "agent"))
    assert image.headers["content-type"] == "image/png" and image.content == shot()
    signed = client.get(story.json()["urls"]["candidate"].split("8000", 1)[1])
    assert signed.status_code == 200 and signed.content == shot()


def test_the_openapi_document_describes_the_api(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert doc["info"]["title"] == "Viewfinder"
    for path in (
        "/api/v1/builds",
        "/api/v1/build",
        "/api/v1/diffs/{diff_id}/review",
        "/api/v1/images",
        "/api/v1/contexts/close",
        "/api/v1/baselines",
    ):
        assert path in doc["paths"]


def test_stories_upload_in_one_multipart_request(client: TestClient, keys: Keys) -> None:
    build = client.post("/api/v1/builds", json={"commit_sha": "abcd"}, headers=auth(keys, "ci"))
    url = f"/api/v1/builds/{build.json()['id']}/stories"
    files = [("file", (f"pages/s{i}", shot(box=(0, 0, i + 1, 2)), "image/png")) for i in range(3)]
    stories = client.post(url, files=files, data={"variant": "64x48"}, headers=auth(keys, "ci"))
    assert stories.status_code == 201, stories.text
    assert [(s["name"], s["variant"], s["state"]) for s in stories.json()] == [
        (f"pages/s{i}", "64x48", "new") for i in range(3)
    ]
    again = client.post(url, files=files, data={"variant": "64x48"}, headers=auth(keys, "ci"))
    assert [s["id"] for s in again.json()] == [s["id"] for s in stories.json()]
    bad = files[:1] + [("file", ("broken", b"not a png", "image/png"))]
    assert_error(
        client.post(url, files=bad, headers=auth(keys, "ci")),
        400,
        "invalid_image",
        "story 'broken' is not a PNG",
    )
    assert_error(
        client.post(url, content=b"x", headers=auth(keys, "ci")),
        400,
        "invalid_input",
        "multipart/form-data",
    )


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "field"),
    [
        (
            "post",
            "/api/v1/builds",
            {"json": {"commit_sha": "abcd", "branch": "ma\x00in"}},
            "branch",
        ),
        ("post", "/api/v1/builds", {"json": {"commit_sha": "ab\x00cd"}}, "commit_sha"),
        ("get", "/api/v1/builds?branch=x%00", {}, "branch"),
        ("get", "/api/v1/baselines?name=x%00", {}, "name"),
        ("post", "/api/v1/keys", {"json": {"roles": ["review"], "label": "a\x00"}}, "label"),
        ("post", "/api/v1/contexts/close", {"json": {"context_key": "a\x00b"}}, "context_key"),
        ("post", "/api/v1/images?name=a%00&context_key=x", {}, "name"),
    ],
)
def test_control_characters_are_refused_on_both_databases(
    client: TestClient, keys: Keys, method: str, path: str, kwargs: dict[str, Any], field: str
) -> None:
    if path.startswith("/api/v1/images"):
        kwargs["content"] = shot()
    answer = client.request(method, path, headers=auth(keys, "admin"), **kwargs)
    assert answer.status_code == 400, answer.text
    assert field in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    "path", ["/api/v1/builds/bld_%00", "/api/v1/diffs/dif_x%00y", "/api/v1/images/..%2F..%2Fetc"]
)
def test_ids_that_cannot_be_ids_read_as_not_found(
    client: TestClient, keys: Keys, path: str
) -> None:
    answer = client.get(path, headers=auth(keys, "ci"))
    assert answer.status_code == 404, answer.text


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/builds", {"commit_sha": "abcd", "pr_number": True, "repo": "o/r"}, "pr_number"),
        ("/api/v1/builds", {"commit_sha": "abcd", "pr_number": "5", "repo": "o/r"}, "pr_number"),
        ("/api/v1/usage/quota", {"quota_bytes": False}, "quota_bytes"),
        ("/api/v1/project", {"ignore_noise": 1}, "ignore_noise"),
        ("/api/v1/builds", {"commit_sha": "abcd", "colour": "red"}, "colour"),
    ],
)
def test_numbers_and_booleans_are_strict_and_unknown_fields_refused(
    client: TestClient, keys: Keys, path: str, body: dict[str, Any], field: str
) -> None:
    method = {"/api/v1/usage/quota": "put", "/api/v1/project": "patch"}.get(path, "post")
    answer = client.request(method, path, json=body, headers=auth(keys, "admin"))
    assert answer.status_code == 400, answer.text
    assert field in answer.json()["error"]["message"]
    assert client.get("/api/v1/builds", headers=auth(keys, "ci")).json()["items"] == []


def test_names_in_the_pr_comment_cannot_add_images_or_links(client: TestClient, keys: Keys) -> None:
    name = "a](https://evil.example/track.png)![b"
    pushed = client.post(
        "/api/v1/images",
        params={"name": name, "pr_number": 4, "repo": "acme/web"},
        content=shot(),
        headers=auth(keys, "ci"),
    )
    assert pushed.status_code == 201, pushed.text
    assert pushed.json()["markdown"].startswith("![a\\](https://evil.example/track.png)!\\[b](")
    comment = client.get("/api/v1/prs/acme/web/4/comment", headers=auth(keys, "ci")).json()
    # Every "](" of the name is escaped: the only image is Viewfinder's own link.
    assert not re.search(r"(?<!\\)\]\(https://evil", comment["markdown"])
    assert len(re.findall(r"(?<!\\)\]\(http", comment["markdown"])) == 1


def test_a_phone_screenshot_uploaded_with_its_scale_is_judged_at_it(
    client: TestClient, keys: Keys, env: Env
) -> None:
    # Text drawn again with letter-spacing 0.01 px off, on a phone at device scale 3: rendering
    # noise, which the analysis sees as such only when told the scale.
    from tests import style_corpus

    base, respaced = style_corpus.phone_pair("shop-light-3x/glyph_spacing")
    states = {}
    for commit, png in (("aaa1", base), ("bbb2", respaced)):
        build = client.post("/api/v1/builds", json={"commit_sha": commit}, headers=auth(keys, "ci"))
        url = f"/api/v1/builds/{build.json()['id']}/stories"
        told = client.put(
            url, params={"name": "told", "scale": 3}, content=png, headers=auth(keys, "ci")
        )
        files = [("file", ("untold", png, "image/png"))]
        untold = client.post(url, files=files, headers=auth(keys, "ci"))
        assert told.status_code == 201 and untold.status_code == 201, (told.text, untold.text)
        client.post(f"{url.rsplit('/', 1)[0]}/finalize", headers=auth(keys, "ci"))
        drain(env)
        stories = client.get(url, params={"state": "unchanged"}, headers=auth(keys, "agent"))
        states[commit] = {s["name"] for s in stories.json()["items"]}
    assert states["bbb2"] == {"told"}  # "untold" awaits review as a change
    with env.db.read() as s:
        scales = {(i.name, i.scale) for i in s.scalars(select(Image))}
    assert scales == {("told", 3.0), ("untold", None)}


def test_a_scale_out_of_range_is_refused_and_nothing_is_stored(
    client: TestClient, keys: Keys
) -> None:
    build = client.post("/api/v1/builds", json={"commit_sha": "abcd"}, headers=auth(keys, "ci"))
    url = f"/api/v1/builds/{build.json()['id']}/stories"
    put = client.put(
        url, params={"name": "x", "scale": 9}, content=shot(), headers=auth(keys, "ci")
    )
    assert_error(put, 400, "invalid_input", "scale")
    files = [("file", ("x", shot(), "image/png"))]
    for bad in ("nan", "three", "0"):
        posted = client.post(url, files=files, data={"scale": bad}, headers=auth(keys, "ci"))
        assert_error(posted, 400, "invalid_input", "scale")
    listed = client.get(url, params={"state": "new"}, headers=auth(keys, "agent"))
    assert listed.json()["items"] == []
