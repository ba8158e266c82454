"""GitHub, as a repository's workflow meets Viewfinder: the Action's three modes run step by step
(tests/action.py) against a real `viewfinder serve`, and the commit statuses and the one PR
comment land on a loopback GitHub API (tests/github_api.py) that records every call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.action import run_action
from tests.conftest import Keys, shot
from tests.github_api import github_api
from tests.server import running_server
from viewfinder.errors import Forbidden, InvalidInput
from viewfinder.services import github
from viewfinder.services.env import Env

REPO = "acme/shop"
STATUS_TOKEN = "ghp_status_token_of_the_project"
WORKFLOW_TOKEN = "ghs_workflow_token"
MAIN, HEAD = "aaaa1111", "bbbb2222"


def event(api_url: str, sha: str, pr: dict[str, Any] | None = None) -> dict[str, Any]:
    """The github context of a push to main, or of a pull_request event."""
    context: dict[str, Any] = {
        "repository": REPO,
        "api_url": api_url,
        "token": WORKFLOW_TOKEN,
        "sha": sha,
        "ref_name": "main",
        "head_ref": "",
        "event": {},
    }
    if pr is not None:
        context |= {"head_ref": "feature", "ref_name": f"{pr['number']}/merge"}
        context["event"] = {"pull_request": pr}
        context["sha"] = "ffff0000"  # a pull_request's github.sha is the merge commit
    return context


def screenshots(folder: Path, home: bytes) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "home.png").write_bytes(home)
    (folder / "cart.png").write_bytes(shot((240, 240, 240)))
    return folder


def test_the_action_uploads_comments_and_merges_while_the_commit_status_follows_the_review(
    tmp_path: Path,
) -> None:
    with github_api(STATUS_TOKEN, WORKFLOW_TOKEN) as gh:
        with (
            running_server("sqlite", tmp_path, VIEWFINDER_GITHUB_API_URL=gh.url) as server,
            httpx.Client(base_url=f"{server.url}/api/v1", timeout=30) as api,
        ):

            def as_key(role: str) -> dict[str, str]:
                return {"Authorization": f"Bearer {server.keys[role]}"}

            # Only an admin gives the project a token; it is kept and never shown again.
            refused = server.run("github", "token", key="ci", VIEWFINDER_GITHUB_TOKEN="x")
            assert refused.returncode == 2 and "admin" in refused.stderr
            kept = server.run("github", "token", VIEWFINDER_GITHUB_TOKEN=STATUS_TOKEN)
            assert kept.returncode == 0, kept.stderr
            assert f"commit statuses go to {gh.url}" in kept.stdout
            shown = api.get("/project/github", headers=as_key("agent")).json()
            assert shown == {"configured": True, "api_url": gh.url}
            assert STATUS_TOKEN not in (tmp_path / "data" / "viewfinder.db").read_bytes().decode(
                "latin-1"
            )

            def action(mode: str, context: dict[str, Any], role: str, **inputs: str) -> str:
                given = {"mode": mode, "url": server.url, "key": server.keys[role], **inputs}
                done = run_action(given, context, tmp_path)
                assert done.returncode == 0, done.stdout
                # The key appears once, in the line that asks the runner to mask it.
                key = server.keys[role]
                assert done.stdout.count(key) == 1 and f"::add-mask::{key}" in done.stdout
                return done.stdout

            # A push to main: the first screenshots, which become the baselines.
            folder = screenshots(tmp_path / "shots", shot())
            out = action("upload", event(gh.url, MAIN), "ci", path=str(folder))
            assert "unchanged" in out
            gh.wait_for(
                lambda: gh.statuses_of(MAIN)[-1:] == [("success", "no visual changes, 2 new")],
                "main's success",
            )
            # Each status says the build's state when its job ran: a build that finishes before
            # then goes straight to its verdict, one still comparing shows pending first.
            assert {state for state, _ in gh.statuses_of(MAIN)} <= {"pending", "success"}

            # A pull request changes the home page: its head commit's status fails.
            pr = {"number": 7, "merged": False, "head": {"sha": HEAD}}
            screenshots(folder, shot(box=(0, 0, 20, 10)))
            changed = run_action(
                {
                    "mode": "upload",
                    "url": server.url,
                    "key": server.keys["ci"],
                    "path": str(folder),
                },
                event(gh.url, HEAD, pr),
                tmp_path,
            )
            assert changed.returncode == 1, changed.stdout  # changes await review
            tolerant = action(
                "upload",
                event(gh.url, HEAD, pr),
                "ci",
                path=str(folder),
                **{"exit-zero-on-changes": "true"},
            )
            assert "changed" in tolerant
            awaiting = ("failure", "1 change(s) await review")
            gh.wait_for(lambda: gh.statuses_of(HEAD)[-1:] == [awaiting], "the PR's failure")
            status = next(s for s in gh.statuses if s["sha"] == HEAD)
            assert status["context"] == "viewfinder" and status["repo"] == REPO
            assert status["target_url"].startswith(f"{server.url}/builds/bld_")
            assert not any(path.endswith("/statuses/ffff0000") for _, path, _ in gh.calls)

            # One comment, edited in place on the next run.
            first = action("comment", event(gh.url, HEAD, pr), "agent")
            assert "PR comment created: https://github.example/acme/shop/pull/7" in first
            second = action("comment", event(gh.url, HEAD, pr), "agent")
            assert "PR comment updated" in second
            (comment,) = gh.comments.values()
            assert comment["body"].startswith("<!-- viewfinder:pr-comment -->\n## Viewfinder")

            # Accepting the change turns the status green.
            builds = api.get("/builds", params={"pr_number": 7}, headers=as_key("agent")).json()
            stories = api.get(
                f"/builds/{builds['items'][0]['id']}/stories",
                params={"state": "changed"},
                headers=as_key("agent"),
            ).json()["items"]
            (story,) = stories
            accepted = api.post(
                f"/diffs/{story['diff_id']}/review",
                json={"decision": "accept"},
                headers=as_key("agent"),
            )
            assert accepted.status_code == 200, accepted.text
            gh.wait_for(
                lambda: gh.statuses_of(HEAD)[-1:] == [("success", "1 change(s) accepted")],
                "the PR's success",
            )
            # pending while comparing (the server's one worker takes the status job, queued
            # when the build opened, before the comparisons), then failure, then success.
            states = [state for state, _ in gh.statuses_of(HEAD)]
            assert states[0] == "pending" and states.index("failure") < len(states) - 1

            # Merging promotes the PR's baselines to the shared ones.
            merged = action("close", event(gh.url, HEAD, pr | {"merged": True}), "admin")
            assert "merged" in merged
            shared = api.get("/baselines", headers=as_key("agent")).json()["items"]
            home = next(b for b in shared if b["name"] == "home" and b["context_id"] is None)
            assert home["source"] == "promoted"

            # Statuses go with the project's token, the comment with the workflow's.
            for _, path, token in gh.calls:
                assert token == (STATUS_TOKEN if "/statuses/" in path else WORKFLOW_TOKEN)


def test_a_wrong_mode_and_a_comment_outside_a_pull_request_say_what_to_do(tmp_path: Path) -> None:
    context = event("http://127.0.0.1:9", MAIN)
    wrong = run_action(
        {"mode": "deploy", "url": "http://127.0.0.1:9", "key": "k"}, context, tmp_path
    )
    assert wrong.returncode == 2
    assert "::error::mode must be upload, comment or close (got 'deploy')" in wrong.stdout
    outside = run_action(
        {"mode": "comment", "url": "http://127.0.0.1:9", "key": "k"}, context, tmp_path
    )
    assert outside.returncode == 2 and "runs on pull_request events" in outside.stdout


@pytest.mark.parametrize(
    ("token", "why"),
    [
        ("", "token is 1 to 255 characters; this one is empty"),
        (
            "two words",
            "token has spaces or characters outside ASCII, which GitHub tokens never have: "
            "paste the token alone",
        ),
        ("a\x00b", "token contains a control character (U+0000) at position 1: remove it"),
    ],
)
def test_a_token_that_cannot_be_one_is_refused_and_nothing_is_kept(
    env: Env, keys: Keys, token: str, why: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        github.set_github_token(env, keys.admin, token)
    assert refused.value.message == why
    assert github.get_github(env, keys.agent).configured is False
    with pytest.raises(Forbidden, match="admin"):
        github.set_github_token(env, keys.ci, "ghp_x")
