"""Recorded sessions over the REST API: batches from a record key are stored whole or not at
all, a session is listed newest first with the reference's filters and read as a user flow and
a network summary; the project's allowed origins decide which pages may send; a record key can
do nothing else, and no other key can send sessions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.conftest import Keys
from tests.mcp_clients import BASE, connect, serving, texts
from viewfinder.app import create_app
from viewfinder.errors import Conflict, InvalidInput, NotFound
from viewfinder.replay.recorder import recorder_script
from viewfinder.services import permissions, projects, sessions
from viewfinder.services.env import Env
from viewfinder.store.recorded import RecordedSession, SessionBatch

APP = "https://shop.example"


def start(**extra: Any) -> dict[str, Any]:
    return {
        "startUrl": f"{APP}/items?page=1",
        "viewport": {"width": 1280, "height": 800},
        "userAgent": "Mozilla/5.0 test",
        "storage": {"local": {"theme": "dark"}, "session": {}, "cookies": "a=1"},
        "startedAt": int(datetime.now(UTC).timestamp() * 1000) - 5000,
        **extra,
    }


def first_batch(session: str = "tab-0000000001", **extra: Any) -> dict[str, Any]:
    return {
        "session": session,
        "seq": 0,
        "start": start(),
        "events": [
            {
                "seq": 0,
                "t": 900,
                "type": "input",
                "selectors": ['[data-testid="name"]', "#name"],
                "box": {"x": 10, "y": 20, "width": 200, "height": 24},
                "label": "textbox 'Item name'",
                "value": "milk",
            },
            {
                "seq": 1,
                "t": 1200,
                "type": "click",
                "selectors": ['[data-testid="add"]', "#add", "text=Add item"],
                "box": {"x": 220, "y": 20, "width": 80, "height": 24},
                "label": "button 'Add item'",
            },
        ],
        "network": [
            {
                "seq": 0,
                "t": 300,
                "method": "GET",
                "url": f"{APP}/api/items",
                "status": 200,
                "requestBody": None,
                "responseBody": "[]",
                "responseHeaders": {"content-type": "application/json"},
                "truncated": False,
            },
            {
                "seq": 1,
                "t": 1300,
                "method": "POST",
                "url": f"{APP}/api/items",
                "status": 201,
                "requestBody": '{"name":"milk"}',
                "responseBody": "{}",
                "responseHeaders": {"content-type": "application/json"},
                "truncated": False,
            },
        ],
        "urls": [{"t": 0, "url": f"{APP}/items?page=1"}],
        **extra,
    }


def second_batch(session: str = "tab-0000000001") -> dict[str, Any]:
    return {
        "session": session,
        "seq": 1,
        "events": [
            {"seq": 2, "t": 2000, "type": "key", "key": "Enter", "selectors": [], "box": None},
            {"seq": 3, "t": 2500, "type": "scroll", "selectors": [], "scroll": {"x": 0, "y": 640}},
            {"seq": 4, "t": 3000, "type": "navigation", "url": f"{APP}/about", "selectors": []},
        ],
        "network": [
            {
                "seq": 2,
                "t": 1400,
                "method": "GET",
                "url": f"{APP}/api/items?after=1",
                "status": 200,
                "responseBody": '[{"name":"milk"}]',
            }
        ],
        "urls": [{"t": 3000, "url": f"{APP}/about"}],
        "recordedBy": "ada@shop.example",
    }


@pytest.fixture
def record_key(env: Env, keys: Keys) -> str:
    return projects.create_key(env, keys.admin, roles=["record"], label="shop", kind="ci").key


@pytest.fixture
def client(env: Env) -> Iterator[TestClient]:
    with TestClient(create_app(env=env, workers=0)) as c:
        yield c


def send(client: TestClient, key: str, batch: Any, *, origin: str | None = APP) -> Any:
    body = batch if isinstance(batch, bytes) else json.dumps(batch).encode()
    headers = {"Content-Type": "text/plain"} | ({"Origin": origin} if origin else {})
    return client.post(
        "/api/v1/sessions/ingest", params={"key": key}, content=body, headers=headers
    )


def stored(env: Env) -> tuple[int, int]:
    with env.db.read() as s:
        return (
            s.scalar(select(func.count()).select_from(RecordedSession)) or 0,
            s.scalar(select(func.count()).select_from(SessionBatch)) or 0,
        )


def test_batches_make_a_session_read_as_a_user_flow_and_a_network_summary(
    env: Env, keys: Keys, record_key: str, client: TestClient
) -> None:
    answer = send(client, record_key, first_batch())
    assert answer.status_code == 200, answer.text
    assert answer.headers["access-control-allow-origin"] == APP  # the page may read it
    session_id = answer.json()["session_id"]
    assert answer.json() == {"session_id": session_id, "seq": 0, "stored": True}
    assert send(client, record_key, second_batch()).json()["stored"] is True
    again = send(client, record_key, second_batch())  # a page unloading sent it twice
    assert again.status_code == 200 and again.json()["stored"] is False

    data = sessions.get_session_data(env, keys.agent, session_id)
    assert data.user_flow == [
        "type 'milk' into textbox 'Item name'",
        "click button 'Add item'",
        "press Enter",
        "scroll the page to y=640",
        f"go to {APP}/about",
    ]
    assert data.network == ["GET /api/items 200 x2", "POST /api/items 201"]
    assert data.recorded_by == "ada@shop.example" and data.status == "recording"
    assert data.duration_seconds == 3.0

    recording = sessions.get_recording(env, keys.agent, session_id)
    assert [e.seq for e in recording.events] == [0, 1, 2, 3, 4]
    assert recording.storage.local == {"theme": "dark"} and recording.storage.cookies == "a=1"
    assert [u.url for u in recording.urls] == [f"{APP}/items?page=1", f"{APP}/about"]
    auth = {"Authorization": f"Bearer {keys.secrets['agent']}"}
    over_rest = client.get(f"/api/v1/sessions/{session_id}/recording", headers=auth).json()
    assert over_rest == recording.to_json()
    assert client.get(f"/api/v1/sessions/{session_id}", headers=auth).json()["user_flow"][1] == (
        "click button 'Add item'"
    )


def test_sessions_are_listed_newest_first_with_the_filters_of_the_reference(
    env: Env, keys: Keys, record_key: str, client: TestClient
) -> None:
    ids = []
    for n in range(3):
        batch = first_batch(f"tab-000000000{n}", synthetic=n == 2)
        if n == 1:
            batch["recordedBy"] = "grace"
            batch["urls"].append({"t": 50, "url": f"{APP}/checkout/step-2"})
        ids.append(send(client, record_key, batch).json()["session_id"])
    listed = sessions.list_sessions(env, keys.agent)
    assert listed.project == "default"
    assert [s.id for s in listed.sessions] == ids[::-1]
    assert listed.sessions[0].start_url is None  # asked for columns only
    full = sessions.list_sessions(env, keys.agent, include=set(sessions.INCLUDES), limit=1)
    row = full.sessions[0]
    assert (row.start_url, row.number_user_events, row.number_urls_visited) == (
        f"{APP}/items?page=1",
        2,
        1,
    )
    assert row.duration_seconds == 1.3 and row.abandoned_reason is None

    def only(**filters: Any) -> list[str]:
        return [s.id for s in sessions.list_sessions(env, keys.agent, **filters).sessions]

    assert only(recorded_by="grace") == [ids[1]]
    assert only(exclude_synthetic=True) == [ids[1], ids[0]]
    assert only(visited_url_filter=f"{APP}/checkout/*") == [ids[1]]
    assert only(visited_url_filter="*step_2") == []  # _ is a character, not a wildcard
    assert only(visited_url_filter="*/items?page=1") == ids[::-1]
    assert only(offset=1, limit=1) == [ids[1]]
    hour = timedelta(hours=1)
    assert only(created_since=datetime.now(UTC) + hour) == []
    assert only(recorded_until=datetime.now(UTC) + hour) == ids[::-1]
    assert (
        only(recorded_since=datetime.now(UTC) - hour, created_until=datetime.now(UTC))
        == (ids[::-1])
    )
    auth = {"Authorization": f"Bearer {keys.secrets['agent']}"}
    rest = client.get(
        "/api/v1/sessions",
        params={"recorded_by": "grace", "include": ["start_url", "duration_seconds"]},
        headers=auth,
    ).json()
    assert [s["id"] for s in rest["sessions"]] == [ids[1]]
    assert rest["sessions"][0]["start_url"] == f"{APP}/items?page=1"
    with pytest.raises(InvalidInput, match="limit must be 1 to 1000"):
        sessions.list_sessions(env, keys.agent, limit=0)
    with pytest.raises(InvalidInput, match="unknown columns"):
        sessions.list_sessions(env, keys.agent, include={"everything"})


def bad(batch: dict[str, Any], **change: Any) -> dict[str, Any]:
    return {**batch, **change}


MALFORMED = [
    (b"{not json", "the batch is not JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (bad(first_batch(), session="x"), "batch field session must be the recorder's id"),
    (bad(first_batch(), seq=-1), "batch field seq must be an integer"),
    (bad(first_batch(), start=None), "batch 0 must carry start"),
    (bad(first_batch(), spy=True), "fields nobody reads: spy"),
    (
        bad(first_batch(), events=[*first_batch()["events"], {"seq": 2, "t": 5, "type": "hover"}]),
        "batch 0: recording field events[2].type must be one of click",
    ),
    (
        bad(
            first_batch(),
            network=[{"seq": 0, "t": 1, "method": "GET", "url": "/rel", "status": 200}],
        ),
        "recording field network[0].url must be an absolute http(s) URL",
    ),
    (bad(first_batch(), start=start(viewport={"width": 0})), "viewport.width must be at least 1"),
]


@pytest.mark.parametrize(("batch", "message"), MALFORMED)
def test_a_malformed_batch_is_refused_naming_the_field_and_nothing_is_stored(
    env: Env, record_key: str, client: TestClient, batch: Any, message: str
) -> None:
    answer = send(client, record_key, batch)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "invalid_input"
    assert message in answer.json()["error"]["message"]
    assert answer.headers["access-control-allow-origin"] == APP  # the page can read why
    assert stored(env) == (0, 0)


def test_an_oversized_batch_and_a_session_past_its_cap_are_refused_whole(
    env: Env, keys: Keys, record_key: str
) -> None:
    room = len(json.dumps(first_batch())) + 100  # the first batch fits, the second not
    settings = env.settings.model_copy(
        update={"record_max_batch_bytes": 4096, "record_max_session_bytes": room}
    )
    small = Env(settings=settings, db=env.db, blobs=env.blobs, signer=env.signer)
    with TestClient(create_app(env=small, workers=0)) as client:
        huge = first_batch()
        huge["network"][0]["responseBody"] = "x" * 5000
        answer = send(client, record_key, huge)
        assert answer.status_code == 413 and answer.json()["error"]["code"] == "too_large"
        assert "at most 4,096 are accepted in one batch" in answer.json()["error"]["message"]
        assert stored(env) == (0, 0)
        session_id = send(client, record_key, first_batch()).json()["session_id"]
        before = stored(env)
        capped = send(client, record_key, second_batch())
        more = send(client, record_key, second_batch() | {"seq": 2, "events": []})
        assert capped.status_code == more.status_code == 413
        assert f"reached its cap of {room:,} bytes" in more.json()["error"]["message"]
        assert stored(env) == before  # kept as it was
    (row,) = sessions.list_sessions(env, keys.agent, include={"abandoned_reason"}).sessions
    assert row.id == session_id and row.status == "capped"
    assert row.abandoned_reason is not None and "size cap" in row.abandoned_reason


def test_only_the_projects_allowed_origins_may_send_and_preflights_are_answered(
    env: Env, keys: Keys, record_key: str, client: TestClient
) -> None:
    admin = {"Authorization": f"Bearer {keys.secrets['admin']}"}
    assert client.get("/api/v1/project/record-origins", headers=admin).json() == {"origins": None}
    put = client.put(
        "/api/v1/project/record-origins",
        json={"origins": ["https://Shop.example:443/", "http://127.0.0.2:8080"]},
        headers=admin,
    )
    assert put.json() == {"origins": ["http://127.0.0.2:8080", APP]}
    refused = send(client, record_key, first_batch(), origin="https://evil.example")
    assert refused.status_code == 403
    assert "pages of origin https://evil.example may not send" in refused.json()["error"]["message"]
    no_origin = send(client, record_key, first_batch(), origin=None)
    assert no_origin.status_code == 403
    assert stored(env) == (0, 0)
    assert send(client, record_key, first_batch()).status_code == 200

    preflight = client.options(
        "/api/v1/sessions/ingest",
        headers={"Origin": APP, "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == APP
    assert "POST" in preflight.headers["access-control-allow-methods"]

    bad_origin = client.put(
        "/api/v1/project/record-origins", json={"origins": ["shop.example"]}, headers=admin
    )
    assert bad_origin.status_code == 400 and "origins.0" in bad_origin.text
    with pytest.raises(InvalidInput, match="is not an origin"):
        sessions.set_record_origins(env, keys.admin, ["shop.example"])
    ci = {"Authorization": f"Bearer {keys.secrets['ci']}"}
    assert (
        client.put("/api/v1/project/record-origins", json={"origins": None}, headers=ci).status_code
        == 403
    )
    assert client.put(
        "/api/v1/project/record-origins", json={"origins": None}, headers=admin
    ).json() == {"origins": None}


def test_no_key_but_a_record_key_may_send_sessions_not_even_an_admin_key(
    env: Env, keys: Keys, client: TestClient
) -> None:
    for role in ("admin", "ci", "agent"):
        answer = send(client, keys.secrets[role], first_batch())
        assert answer.status_code == 403
        assert "that needs the 'record' role" in answer.json()["error"]["message"]
        header = client.post(
            "/api/v1/sessions/ingest",
            content=json.dumps(first_batch()),
            headers={"Authorization": f"Bearer {keys.secrets[role]}", "Origin": APP},
        )
        assert header.status_code == 403
    unknown = send(client, "vf_proj_unknown", first_batch())
    assert unknown.status_code == 401
    assert stored(env) == (0, 0)
    with pytest.raises(InvalidInput, match="carries no other role"):
        projects.create_key(env, None, roles=["record", "upload"])
    with pytest.raises(InvalidInput, match="or record alone"):
        projects.create_key(env, None, roles=["recorder"])


def test_a_record_key_is_refused_everywhere_else_with_a_clear_error(
    env: Env, keys: Keys, record_key: str, client: TestClient
) -> None:
    app = client.app
    document = app.openapi()  # type: ignore[attr-defined]
    called = 0
    for path, methods in document["paths"].items():
        for method, spec in methods.items():
            operation = spec["x-operation"]
            if permissions.needs(operation).public or operation == "ingest_session":
                continue
            url = path
            for param in spec.get("parameters", []):
                if param["in"] == "path":
                    url = url.replace("{" + param["name"] + "}", "x1")
            answer = client.request(
                method, url, headers={"Authorization": f"Bearer {record_key}"}, json={}
            )
            assert answer.status_code == 403, f"{method} {path}: {answer.text}"
            message = answer.json()["error"]["message"]
            assert "is a 'record' key" in message and "can only send recorded sessions" in message
            called += 1
    assert called >= 40
    login = client.get("/login").text
    import re

    csrf = re.search(r'name="csrf" value="([^"]+)"', login)
    assert csrf is not None
    signed = client.post(
        "/login", data={"key": record_key, "csrf": csrf.group(1)}, follow_redirects=False
    )
    assert signed.status_code != 303 and "record" in signed.text

    async def mcp() -> str:
        async with (
            serving(env) as served,
            connect(f"{BASE}/mcp", key=record_key, app=served) as mcp_client,
        ):
            result = await mcp_client.call_tool("list_builds", {})
            return texts(result)[0]

    text = anyio.run(mcp)
    assert text.startswith("[forbidden]") and "'record' key" in text


def test_sessions_of_another_project_and_unknown_ids_are_not_found(
    env: Env, keys: Keys, other: Keys, record_key: str, client: TestClient
) -> None:
    session_id = send(client, record_key, first_batch()).json()["session_id"]
    with pytest.raises(NotFound, match="no session"):
        sessions.get_session_data(env, other.agent, session_id)
    assert sessions.list_sessions(env, other.agent).sessions == []
    with pytest.raises(NotFound):
        sessions.get_recording(env, keys.agent, "ses_nope")
    late = send(client, record_key, second_batch("tab-late-000001")).json()["session_id"]
    with pytest.raises(Conflict, match="has not sent its first batch"):
        sessions.get_recording(env, keys.agent, late)


def test_the_recorder_is_served_with_the_sample_rate_of_the_settings(client: TestClient) -> None:
    answer = client.get("/recorder.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/javascript")
    assert "var SAMPLE_RATE = 1.0;" in answer.text
    assert "var SAMPLE_RATE = 0.25;" in recorder_script(0.25)
    assert "var SAMPLE_RATE = 0.0;" in recorder_script(-3)


def test_an_admin_can_forget_a_session_and_everything_it_sent(
    env: Env, keys: Keys, record_key: str, client: TestClient
) -> None:
    session_id = send(client, record_key, first_batch()).json()["session_id"]
    send(client, record_key, second_batch())
    kept = send(client, record_key, first_batch("tab-other-00001")).json()["session_id"]
    refused = client.delete(
        f"/api/v1/sessions/{session_id}", headers={"Authorization": f"Bearer {keys.secrets['ci']}"}
    )
    assert refused.status_code == 403 and "'admin' role" in refused.json()["error"]["message"]
    admin = {"Authorization": f"Bearer {keys.secrets['admin']}"}
    assert client.delete(f"/api/v1/sessions/{session_id}", headers=admin).status_code == 204
    assert stored(env) == (1, 1)
    assert [s.id for s in sessions.list_sessions(env, keys.agent).sessions] == [kept]
    assert client.delete(f"/api/v1/sessions/{session_id}", headers=admin).status_code == 404


def test_batches_of_a_new_session_sent_at_once_make_one_session(
    env: Env, keys: Keys, record_key: str
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    actor = projects.authenticate(env, record_key, recording=True)
    later = [second_batch("tab-race-000001") | {"seq": seq} for seq in range(1, 8)]
    batches = [json.dumps(b).encode() for b in [first_batch("tab-race-000001"), *later]]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda raw: sessions.ingest(env, actor, raw, origin=APP), batches))
    assert len({r.session_id for r in results}) == 1
    assert all(r.stored for r in results)
    assert stored(env) == (1, 8)
    data = sessions.get_session_data(env, keys.agent, results[0].session_id)
    assert len(data.user_flow) == 2 + 3 * 7  # every batch, whichever came first
