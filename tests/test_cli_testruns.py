"""`viewfinder test-run` against a real `viewfinder serve` whose worker replays in Chromium: a
session sent as recorder.js sends it, two builds uploaded as zips, a run triggered and waited
for, its diffs, DOM diff, timeline diff and coverage read on the command line, an agent's
rejection (a pull request's run only), then the run's dashboard page, where a person accepts
one screenshot diff and replies on the rejected one's thread."""

from __future__ import annotations

import contextlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.dashboard import browser, sign_in
from tests.replay_app import shopping_json, write_app
from tests.server import Server, running_server

BASE_SHA, HEAD_SHA = "4" * 40, "5" * 40


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server("sqlite", tmp_path_factory.mktemp("server")) as s:
        yield s


def _zip(root: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()


def _deploy(http: httpx.Client, root: Path, sha: str) -> str:
    ticket = http.post("/api/v1/deployments/uploads").json()
    assert http.put(ticket["upload_url"], content=_zip(root)).status_code == 200
    made = http.post(
        "/api/v1/deployments", json={"upload_id": ticket["upload_id"], "commit_sha": sha}
    )
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def test_a_run_is_triggered_waited_for_and_explained_on_the_command_line(
    server: Server, tmp_path: Path
) -> None:
    made = ("--data-dir", server.data_dir, "--role", "record", "--label", "shop")
    record = server.json("keys", "create", *made, key=None)["key"]
    whole = shopping_json()
    batch = {
        "session": "shopper-cli-1",
        "seq": 0,
        "start": {k: whole[k] for k in ("startUrl", "viewport", "userAgent", "storage")},
        **{k: whole[k] for k in ("events", "network", "urls")},
    }
    sent = httpx.post(
        f"{server.url}/api/v1/sessions/ingest",
        content=json.dumps(batch),
        headers={"Authorization": f"Bearer {record}", "Content-Type": "text/plain"},
    )
    assert sent.status_code == 200, sent.text
    ci = {"Authorization": f"Bearer {server.keys['ci']}"}
    with httpx.Client(base_url=server.url, headers=ci, timeout=60) as http:
        _deploy(http, write_app(tmp_path / "base"), BASE_SHA)
        head = _deploy(http, write_app(tmp_path / "head", "regressed"), HEAD_SHA)

    done = server.run(
        "test-run",
        "trigger",
        "--deployment",
        head,
        "--base",
        BASE_SHA,
        "--pr",
        "12",
        "--wait",
        key="ci",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("test run trn_") and lines[0].endswith(": 1 difference(s)")
    replay_diff, name, outcome = lines[1].split()
    assert outcome == "diff" and name.startswith("after-event-")
    run_id = lines[0].split()[2].rstrip(":")

    listed = server.json("test-run", "diffs", run_id, "--all", key="agent")
    assert len(listed["diffs"]) == 6 and sum(r["isSelected"] for r in listed["diffs"]) == 1
    dom = server.run("test-run", "dom-diff", replay_diff, name.rstrip(":"), key="agent")
    assert dom.returncode == 0, dom.stderr
    assert dom.stdout.startswith("[diff 1]") and '+"Add to list"' in dom.stdout
    timeline = server.run("test-run", "timeline-diff", replay_diff, "--changes", key="agent")
    assert timeline.returncode == 0 and timeline.stdout == ""
    covered = server.run("test-run", "coverage", run_id, key="agent")
    assert covered.returncode == 0, covered.stderr
    assert covered.stdout.startswith("assets/app.js: ")
    same = server.run("test-run", "coverage", "--replay-diff", replay_diff, key="agent")
    assert same.returncode == 0 and same.stdout == ""

    refused = server.run("test-run", "trigger", "--deployment", head, "--base", "main", key="ci")
    assert refused.returncode != 0
    assert "baseSha must be a git commit sha" in refused.stderr

    # The run is the pull request's: an agent rejects a screenshot, saying why. The same build
    # run for no pull request (its replays reused) has nothing a rejection could be given to.
    other = next(r for r in listed["diffs"] if r["screenshotName"] != name.rstrip(":"))
    shot = f"/api/v1/replay-diffs/{other['replayDiffId']}/screenshots/{other['screenshotName']}"
    reason = {"reason": "The button turned red", "x": 0.6, "y": 0.1}
    branch = server.run(
        "test-run", "trigger", "--deployment", head, "--base", BASE_SHA, "--wait", key="ci"
    )
    assert branch.returncode == 0, branch.stderr
    branch_id = branch.stdout.split()[2].rstrip(":")
    agent = {"Authorization": f"Bearer {server.keys['agent']}"}
    with httpx.Client(base_url=server.url, headers=agent, timeout=60) as http:
        assert http.get(f"/api/v1/test-runs/{run_id}").json()["prNumber"] == 12
        assert http.post(shot + "/reject", json=reason).status_code == 200
        [branch_row] = http.get(f"/api/v1/test-runs/{branch_id}/diffs").json()["diffs"]
        no_pr = http.post(
            f"/api/v1/replay-diffs/{branch_row['replayDiffId']}/screenshots/"
            f"{branch_row['screenshotName']}/reject",
            json=reason,
        )
        assert no_pr.status_code == 409
        assert no_pr.json()["error"]["message"].startswith(
            f"test run {branch_id} belongs to no pull request, so its diffs cannot be rejected"
        )

    with httpx.Client(base_url=server.url, timeout=60) as http:
        answer = http.post(
            "/api/v1/feedback",
            json={"message": "The timeline diff was clear", "outcome": "helped"},
            headers={"Authorization": f"Bearer {server.keys['agent']}"},
        )
        assert answer.status_code == 201, answer.text
    kept = server.run("feedback")
    assert kept.returncode == 0 and "[helped]: The timeline diff was clear" in kept.stdout

    # The dashboard: a person sees the run's screenshots with their images and DOM diff, and
    # accepts one.
    with contextlib.contextmanager(browser)() as chromium:
        page = chromium.new_page(viewport={"width": 1280, "height": 800})
        sign_in(page, server, "admin")
        page.goto(f"{server.url}/test-runs/{run_id}")
        shots = page.locator(".replay-shot")
        assert shots.count() == 6
        first = shots.first
        images = first.locator("img")
        assert images.count() == 3
        # Whether each has loaded is asked and waited for in one script, so that an image that
        # loads (or fails) in between cannot leave the wait hanging.
        loaded = (
            "(img) => img.complete ? img.naturalWidth : new Promise((ok) => {"
            " img.addEventListener('load', () => ok(img.naturalWidth), {once: true});"
            " img.addEventListener('error', () => ok(-1), {once: true}); })"
        )
        assert [images.nth(i).evaluate(loaded) for i in range(3)] == [800, 800, 800]
        assert '+"Add to list"' in first.locator(".dom-diff").text_content(timeout=5000)
        first.get_by_role("button", name="Accept").click()
        accepted = page.locator(".replay-shot").first.locator("[data-decision]")
        accepted.filter(has_text="accepted").wait_for(timeout=10_000)
        # The rejected screenshot shows its thread; the person replies on it.
        rejected = page.locator(f'[data-shot="{other["replayDiffId"]}/{other["screenshotName"]}"]')
        thread = rejected.locator(".thread")
        assert thread.locator(".comment .body").text_content() == "The button turned red"
        assert thread.locator(".badge.agent").count() == 1
        thread.get_by_label("Reply").fill("Intended: the new brand colour.")
        thread.get_by_role("button", name="Reply").click()
        replies = page.locator(f'[data-shot="{other["replayDiffId"]}/{other["screenshotName"]}"]')
        replies.locator(".comment .body", has_text="Intended: the new brand colour.").wait_for(
            timeout=10_000
        )
    with httpx.Client(base_url=server.url, headers=agent, timeout=60) as http:
        [kept] = http.get(shot + "/comments").json()["comments"]
    assert [(r["text"], r["author"], r["isAgentAuthored"]) for r in kept["replies"]] == [
        ("Intended: the new brand colour.", "admin", False)
    ]
    counts = server.json("test-run", "diffs", run_id, "--all", key="agent")
    assert len(counts["diffs"]) == 6
