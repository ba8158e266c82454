"""`viewfinder checkup create|get|list|resolve` against a real `viewfinder serve` (its worker
captures the email), with the person acting through the REST routes of their review link and
nothing else: the whole loop, and the refusals a user meets on the command line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.capture_site import WIDE_EMAIL
from tests.conftest import shot
from tests.server import BACKENDS, Server, running_server


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with running_server(request.param, tmp_path_factory.mktemp("server")) as s:
        yield s


def _link(server: Server, review: dict[str, object], path: str = "") -> str:
    token = str(review["review_url"]).rsplit("/r/", 1)[1]
    return f"{server.url}/api/v1/r/{token}{path}"


def test_the_checkup_loop_on_the_command_line(server: Server, tmp_path: Path) -> None:
    before = tmp_path / "before.png"
    before.write_bytes(shot(box=(20, 20, 60, 40), size=(200, 100)))
    after = tmp_path / "after.png"
    after.write_bytes(shot(box=(20, 20, 60, 40), size=(200, 100), fill=(90, 90, 90)))

    # Refusals first: two sources, and a decision nobody made yet.
    both = server.run(
        "checkup", "create", "--title", "x", "--image", before, "--pdf", before, key="agent"
    )
    assert both.returncode == 2
    for name in ("images", "capture_url", "pdf", "html"):
        assert name in both.stderr

    review = server.json("checkup", "create", "--title", "Checkout", "--image", before, key="agent")
    assert review["pass"] == 1 and review["status"] == "pending" and review["type"] == "ui"
    pending = server.run("checkup", "resolve", review["id"], "cmt_x", key="agent")
    assert (
        pending.returncode == 2 and "only while the review is changes_requested" in pending.stderr
    )
    no_hook = server.run("checkup", "resume-webhook", review["id"], key="agent")
    assert no_hook.returncode == 2 and "has no webhook" in no_hook.stderr

    # The person marks and decides with their link alone.
    mark = httpx.post(
        _link(server, review, "/marks"),
        json={
            "screenshot_index": 0,
            "body": "Too dark",
            "severity": "must-fix",
            "area": {"x": 0.1, "y": 0.2, "w": 0.2, "h": 0.2},
        },
    )
    assert mark.status_code == 201, mark.text
    assert mark.json()["number"] == "M1"
    decided = httpx.post(
        _link(server, review, "/decision"),
        json={"decision": "changes_requested", "note": "Lighter"},
    )
    assert decided.json()["next_action"]["action"] == "apply_pins_then_next_pass"

    resolved = server.json(
        "checkup",
        "resolve",
        review["id"],
        mark.json()["id"],
        "--note",
        "Lighter grey",
        "--after",
        after,
        key="agent",
    )
    assert resolved["updated"][0]["number"] == "M1"
    assert resolved["next_action"]["action"] == "open_next_pass"
    printed = server.run("checkup", "get", review["id"], key="agent")
    assert "open_next_pass" in printed.stdout and "M1" in printed.stdout

    second = server.json(
        "checkup",
        "create",
        "--title",
        "Pass 2",
        "--image",
        after,
        "--parent",
        review["id"],
        key="agent",
    )
    assert second["pass"] == 2
    listed = server.json("checkup", "list", key="agent")
    assert [r["id"] for r in listed["reviews"]] == [second["id"], review["id"]]

    # An email is captured by the server's worker while create waits for it.
    email = tmp_path / "email.html"
    email.write_text(WIDE_EMAIL)
    captured = server.json(
        "checkup", "create", "--title", "Newsletter", "--html", email, key="agent"
    )
    assert captured["capture"]["state"] == "done", captured["capture"]
    assert [s["label"] for s in captured["screenshots"]] == ["light", "dark"]
    assert "email-width" in {p["rule"] for p in captured["work_packets"]["second_opinion"]}

    # Credits: an admin sets the allowance; an agent cannot.
    refused = server.run("checkup", "allowance", "3", key="agent")
    assert refused.returncode == 2 and "admin" in refused.stderr
    billing = server.json("checkup", "allowance", "3", key="admin")
    assert billing["used"] == 5 and billing["remaining"] == 0
    out = server.run("checkup", "create", "--title", "More", "--image", before, key="agent")
    assert out.returncode == 2 and "[insufficient_credits]" in out.stderr
    assert json.loads(json.dumps(billing))["burn"]["capture_url"] == 5
