"""`viewfinder deploy` and `viewfinder sessions` against a real `viewfinder serve`: a static
build's folder is zipped, uploaded to the signed URL and registered for a commit; a record
key's session is listed and read as a user flow; mistakes exit 2 with a message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server import Server, running_server

SHA = "abc1234def"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server("sqlite", tmp_path_factory.mktemp("server")) as s:
        yield s


def test_deploy_uploads_a_build_and_sessions_read_what_a_recorder_sent(
    server: Server, tmp_path: Path
) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<h1>Shop</h1>")
    (dist / "assets" / "app.js").write_text("console.log(1)")
    (tmp_path / "secret.txt").write_text("outside")
    (dist / "escape.txt").symlink_to(tmp_path / "secret.txt")  # left out of the zip

    made = server.json("deploy", dist, "--commit", SHA, "--rewrite", "/app/*=/index.html", key="ci")
    assert made["kind"] == "static" and made["files"] == 2 and made["commit_sha"] == SHA.lower()
    assert made["rewrites"] == [{"source": "/app/*", "destination": "/index.html"}]
    plain = server.run("deploy", dist, "--commit", SHA, key="ci")
    assert plain.returncode == 0 and plain.stdout.startswith("deployment dep_")
    assert "(static, 2 files)" in plain.stdout
    listed = httpx.get(
        f"{server.url}/api/v1/deployments",
        params={"commit_sha": SHA},
        headers={"Authorization": f"Bearer {server.keys['ci']}"},
    ).json()
    assert len(listed) == 2

    no_commit = server.run("deploy", dist, key="ci")
    assert no_commit.returncode == 2 and "--commit SHA" in no_commit.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = server.run("deploy", empty, "--commit", SHA, key="ci")
    assert missing.returncode == 2 and "has no index.html" in missing.stderr
    local = server.run("deploy", "--preview", "http://127.0.0.1:9/", "--commit", SHA, key="ci")
    assert local.returncode != 0 and "VIEWFINDER_CAPTURE_ALLOW" in local.stderr
    review = server.run("deploy", dist, "--commit", SHA, key="agent")
    assert review.returncode == 0  # the first start's agent key can upload
    bad_rule = server.run("deploy", dist, "--commit", SHA, "--rewrite", "/x", key="ci")
    assert bad_rule.returncode == 2 and "SOURCE=DESTINATION" in bad_rule.stderr

    both = server.run(
        "keys",
        "create",
        "--role",
        "record",
        "--role",
        "upload",
        "--data-dir",
        server.data_dir,
        key=None,
    )
    assert both.returncode == 2 and "carries no other role" in both.stderr
    created = server.run(
        "keys",
        "create",
        "--role",
        "record",
        "--label",
        "shop",
        "--json",
        "--data-dir",
        server.data_dir,
        key=None,
    )
    assert created.returncode == 0, created.stderr
    record_key = json.loads(created.stdout)["key"]

    none = server.run("sessions", key="agent")
    assert none.returncode == 0 and "no recorded sessions in project default" in none.stdout
    batch = {
        "session": "cli-test-0000001",
        "seq": 0,
        "start": {
            "startUrl": "https://shop.example/",
            "viewport": {"width": 800, "height": 600},
            "startedAt": 0,
        },
        "events": [
            {"seq": 0, "t": 500, "type": "click", "selectors": ["#add"], "label": "button 'Add'"}
        ],
        "network": [
            {
                "seq": 0,
                "t": 600,
                "method": "GET",
                "url": "https://shop.example/api/items",
                "status": 200,
            }
        ],
    }
    sent = httpx.post(
        f"{server.url}/api/v1/sessions/ingest",
        params={"key": record_key},
        content=json.dumps(batch),
        headers={"Content-Type": "text/plain", "Origin": "https://shop.example"},
    )
    assert sent.status_code == 200, sent.text
    session_id = sent.json()["session_id"]
    table = server.run("sessions", key="agent")
    assert table.returncode == 0 and session_id in table.stdout
    assert "https://shop.example/" in table.stdout
    shown = server.run("session", session_id, key="agent")
    assert shown.returncode == 0, shown.stderr
    assert "1. click button 'Add'" in shown.stdout and "GET /api/items 200" in shown.stdout
    whole = json.loads(server.run("session", session_id, "--recording", key="agent").stdout)
    assert whole["events"][0]["label"] == "button 'Add'"
    refused = server.run("sessions", key=record_key)
    assert refused.returncode != 0 and "is a 'record' key" in refused.stderr
    unknown = server.run("session", "ses_nope", key="agent")
    assert unknown.returncode != 0 and "no session" in unknown.stderr
