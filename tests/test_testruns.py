"""Test runs end to end in the service layer: sessions replayed in real Chromium on generated
builds served from 127.0.0.1, every screenshot pair compared by Viewfinder's engine by the job
queue, then read, reviewed and discussed as the reference's agent loops do."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.conftest import Keys, drain
from tests.replay_app import about_json, shopping_json, shopping_session
from tests.replay_sources import LocalSources
from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound
from viewfinder.replay.recording import Recording
from viewfinder.services import reviews
from viewfinder.services.env import Actor, Env
from viewfinder.services.testruns import checks, cover, review, runs, sources
from viewfinder.services.testruns import feedback as fb
from viewfinder.store.models import Comparison
from viewfinder.store.replay_models import Replay, ReplayDiff, ReplayScreenshot

BASE, HEAD, FIXED = "a" * 40, "b" * 40, "c" * 40
sqlite_only = pytest.mark.parametrize("env", ["sqlite"], indirect=True)


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalSources]:
    made = LocalSources(tmp_path / "deployments")
    sources.use(made)
    yield made
    sources._installed.clear()


def _run(env: Env, keys: Keys, local: LocalSources, head: str, **kw: object) -> str:
    started = runs.trigger_test_run(env, keys.ci, deployment_id=head, base_sha=BASE, **kw)  # type: ignore[arg-type]
    assert started.status == "processing"
    assert review.get_test_run_diffs(env, keys.agent, test_run_id=started.testRunId) == {
        "status": "processing"
    }
    drain(env)
    return started.testRunId


def test_a_regression_is_found_explained_rejected_and_gone_once_fixed(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    session = local.add_session(shopping_session())
    local.deploy(BASE)
    regressed = local.deploy(HEAD, "regressed")
    run_id = _run(env, keys, local, regressed, pr_number=12)
    assert runs.get_test_run(env, keys.agent, run_id).prNumber == 12

    found = review.get_test_run_diffs(env, keys.agent, commit_sha=HEAD[:12])
    assert found["status"] == "complete" and found["testRunId"] == run_id
    # The button changed on every screenshot of the first page: one DOM change, one row.
    [row] = found["diffs"]
    first_page = [f"after-event-{n}" for n in range(6)]
    assert row["screenshotName"] in first_page and row["outcome"] == "diff"
    every = review.get_test_run_diffs(env, keys.agent, test_run_id=run_id, include_all_diffs=True)
    listed = [(r["screenshotName"], r["isSelected"]) for r in every["diffs"]]
    assert sorted(n for n, _ in listed) == first_page
    assert [n for n, selected in listed if selected] == [row["screenshotName"]]
    counts = review.get_test_run_diffs_counts(env, keys.agent, test_run_id=run_id)
    assert counts["replays"] == 1 and counts["screenshots"] == 9
    assert counts["outcomes"] == {
        "no-diff": 3,
        "diff": 6,
        "missing-base": 0,
        "missing-head": 0,
        "different-size": 0,
        "flake": 0,
    }
    replay_diff, name = row["replayDiffId"], row["screenshotName"]

    urls = review.get_image_urls(env, keys.agent, replay_diff, name)
    assert urls["outcome"] == "diff" and all(urls[k] for k in ("before", "after", "diffImage"))
    dom = review.get_dom_diff(env, keys.agent, replay_diff, name)
    assert dom["hunks"] == 1 and '-"Add item"' in dom["diff"] and '+"Add to list"' in dom["diff"]
    timeline = review.get_timeline_diff(env, keys.agent, replay_diff)["rows"]
    assert {r["diff"] for r in timeline} == {"same"}
    assert cover.get_replay_diff_js_coverage_diff(env, keys.agent, replay_diff)["files"] == []

    # An agent rejects it (a real decision, once), and comments; a person replies.
    assert (
        review.reject_diff(env, keys.agent, replay_diff, name, "Button turned red", 0.5, 0.2) == {}
    )
    assert (
        review.reject_diff(env, keys.agent, replay_diff, name, "Button turned red", 0.5, 0.2) == {}
    )
    comments = review.get_diff_comments(env, keys.agent, replay_diff, name)["comments"]
    assert [(c["text"], c["x"], c["y"], c["isAgentAuthored"]) for c in comments] == [
        ("Button turned red", 0.5, 0.2, True)
    ]
    listed = review.get_test_run_diffs(
        env, keys.agent, test_run_id=run_id, only_rejected=True, include_reviews=True
    )["diffs"]
    assert [(r["screenshotName"], r["decision"], r["openComments"]) for r in listed] == [
        (name, "rejected", 1)
    ]
    other = next(n for n in first_page if n != name)
    review.ignore_diff(env, keys.agent, replay_diff, other, "Same change", 0.1, 0.1)
    again = review.get_test_run_diffs_counts(env, keys.agent, test_run_id=run_id)["decisions"]
    assert again == {"accepted": 0, "rejected": 1, "ignored": 0, "unreviewed": 5}
    # Only a person accepts or ignores, and not while a thread is open.
    with pytest.raises(Forbidden, match="only a person may accept a screenshot diff"):
        review.decide(env, keys.agent, replay_diff, other, "accept")
    with pytest.raises(Conflict, match="has open comment threads"):
        review.decide(env, keys.admin, replay_diff, other, "accept")
    third = next(n for n in first_page if n not in (name, other))
    assert review.decide(env, keys.admin, replay_diff, third, "accept") == {"decision": "accepted"}
    # Its pair is a diff like any other to the review tools, under the same rules; a replay
    # has no baseline to approve.
    [shown] = review.get_test_run_diffs(env, keys.agent, test_run_id=run_id, include_diff_ids=True)[
        "diffs"
    ]
    with pytest.raises(Forbidden, match="only a person may ignore a screenshot diff"):
        reviews.review_diff(env, keys.agent, shown["diffId"], "ignore")
    with pytest.raises(InvalidInput, match="compares two replays of a session: there is no"):
        reviews.approve_diff(env, keys.admin, shown["diffId"])

    # The fixed build: no difference, and the base replay was reused, not replayed again.
    fixed = local.deploy(FIXED)
    base_replays = len(local.opened) - 1
    second = _run(env, keys, local, fixed)
    assert review.get_test_run_diffs(env, keys.agent, test_run_id=second)["diffs"] == []
    assert len(local.opened) - base_replays == 2  # the fixed head only
    reply = review.reply_to_diff_comment(env, keys.agent, comments[0]["id"], "Fixed.")
    thread = review.get_diff_comments(env, keys.agent, replay_diff, name)["comments"][0]
    assert thread["replies"][0] == {
        "id": reply["commentId"],
        "isAgentAuthored": True,
        "text": "Fixed.",
        "x": 0.5,
        "y": 0.2,
        "author": "agent",
    }
    with env.db.read() as s:
        assert s.scalar(select(func.count(Replay.id))) == 3
        decided = s.scalar(select(Comparison).where(Comparison.decision == "denied"))
        assert decided is not None and decided.decided_by == keys.agent.key_id
    assert session in runs.get_test_run(env, keys.agent, second).sessionIds


@sqlite_only
def test_a_session_whose_network_differs_on_replay_shows_in_checks_and_timeline(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    local.add_session(shopping_session())
    local.deploy(BASE)
    run_id = _run(env, keys, local, local.deploy(HEAD, "network"))
    assert checks.available_ids(env, keys.agent, run_id)["builtin"] == [
        "console-errors",
        "failed-requests",
        "uncaught-exceptions",
        "unrecorded-requests",
    ]
    report = checks.get_check(env, keys.agent, run_id, "unrecorded-requests")
    assert report.status == "complete" and report.text is not None
    assert "GET /api/stats" in report.text and "1 in 1 sessions" in report.text
    errors = checks.get_check(env, keys.agent, run_id, "console-errors").text or ""
    assert "stats are unavailable" in errors
    exceptions = checks.get_check(env, keys.agent, run_id, "uncaught-exceptions").text or ""
    assert "None in 1 replayed sessions." in exceptions
    # Nothing looks different: the difference is in the network and the console only.
    assert review.get_test_run_diffs(env, keys.agent, test_run_id=run_id)["diffs"] == []
    with env.db.read() as s:
        replay_diff = s.scalar(select(ReplayDiff.id).where(ReplayDiff.test_run_id == run_id))
    assert replay_diff is not None
    rows = review.get_timeline_diff(env, keys.agent, replay_diff)["rows"]
    added = [(r["event"], r["description"]) for r in rows if r["diff"] == "added"]
    assert ("network", "GET /api/stats 404 (not in the recording)") in added


@sqlite_only
def test_a_screenshot_that_differs_from_itself_when_taken_again_is_a_flake(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    # Two sessions, both taken again (side by side in the camera), both found flaky.
    local.add_session(shopping_session())
    local.add_session(shopping_session())
    local.deploy(BASE, "flaky")
    run_id = _run(env, keys, local, local.deploy(HEAD, "flaky"))
    counts = review.get_test_run_diffs_counts(env, keys.agent, test_run_id=run_id)["outcomes"]
    assert counts["flake"] >= 2 and counts["diff"] == 0
    rows = review.get_test_run_diffs(env, keys.agent, test_run_id=run_id, include_all_diffs=True)
    flaky = [r for r in rows["diffs"] if r["outcome"] == "flake"]
    assert len({r["sessionId"] for r in flaky}) == 2
    assert not any(r["isSelected"] for r in flaky)
    urls = review.get_image_urls(
        env, keys.agent, flaky[0]["replayDiffId"], flaky[0]["screenshotName"]
    )
    assert urls["retake"]
    # The run belongs to no pull request: a rejection is a verdict on one.
    refusal = (
        f"test run {run_id} belongs to no pull request, so its diffs cannot be rejected: trigger "
        "the pull request's run with its number (prNumber, pr_number or --pr), or say what is "
        "wrong in a comment"
    )
    with pytest.raises(Conflict, match=re.escape(refusal)):
        review.reject_diff(
            env, keys.agent, flaky[0]["replayDiffId"], flaky[0]["screenshotName"], "no", 0, 0
        )
    with pytest.raises(Conflict, match="belongs to no pull request"):
        review.decide(
            env, keys.admin, flaky[0]["replayDiffId"], flaky[0]["screenshotName"], "reject"
        )
    decisions = review.get_test_run_diffs_counts(env, keys.agent, test_run_id=run_id)["decisions"]
    assert decisions["rejected"] == 0


@sqlite_only
def test_sessions_are_chosen_by_the_coverage_of_the_changed_lines(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    shopping = local.add_session(shopping_session())
    about = local.add_session(Recording.from_json(about_json()))
    local.deploy(BASE)
    first = _run(env, keys, local, local.deploy(HEAD))
    assert runs.get_test_run(env, keys.agent, first).sessionIds == [about, shopping]
    # Which lines of app.js hold addItem: only the shopping session ran it.
    js = (local.root / local.deploy(FIXED) / "assets" / "app.js").read_text().splitlines()
    line = next(n for n, text in enumerate(js, start=1) if "async function addItem" in text)
    diff = (
        "diff --git a/web/assets/app.js b/web/assets/app.js\n--- a/web/assets/app.js\n"
        f"+++ b/web/assets/app.js\n@@ -{line + 1},1 +{line + 1},1 @@\n-  old\n+  new\n"
    )
    chosen = runs.trigger_test_run(
        env, keys.ci, commit_sha=FIXED, base_sha=BASE, git_diff_output=diff, dry_run=True
    )
    assert chosen.selection == "coverage" and chosen.sessionIds == [shopping]
    unrun = diff.replace(f"+{line + 1},1", "+2000,1")
    with pytest.raises(InvalidInput, match="none of the chosen sessions runs code the git diff"):
        runs.trigger_test_run(env, keys.ci, commit_sha=FIXED, base_sha=BASE, git_diff_output=unrun)
    whole = cover.get_test_run_js_coverage(env, keys.agent, test_run_id=first)
    [app] = [f for f in whole["files"] if f["repoFilePath"] == "assets/app.js"]
    assert 0 < app["coveragePercentage"] <= 100
    assert "addItem" in {f["name"] for f in app["functions"]}
    latest = cover.get_project_js_coverage(env, keys.agent)
    assert latest["testRunId"] == first and latest["files"] == whole["files"]
    with env.db.read() as s:
        replay_id = s.scalar(
            select(Replay.id).where(Replay.test_run_id == first, Replay.session_id == shopping)
        )
    assert replay_id is not None
    # The click on "Add item" (event 1) ran addItem; the scroll after it (event 3) ran nothing.
    click = cover.get_replay_js_coverage(
        env, keys.agent, replay_id, screenshot_name="after-event-1"
    )["files"]
    assert "addItem" in {f["name"] for f in click[0]["functions"]}
    scroll = cover.get_replay_js_coverage(
        env, keys.agent, replay_id, screenshot_name="after-event-3"
    )
    assert scroll["files"] == []


@sqlite_only
def test_custom_checks_are_processing_until_ci_reports_them(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    local.add_session(shopping_session())
    local.deploy(BASE)
    run_id = _run(env, keys, local, local.deploy(BASE[:-1] + "d"))
    with pytest.raises(Conflict, match="not expecting custom check 'lint'"):
        checks.get_check(env, keys.agent, run_id, "lint", "custom")
    checks.expect_checks(env, keys.ci, run_id, ["lint"])
    assert checks.get_check(env, keys.agent, run_id, "lint", "custom").status == "processing"
    checks.report_check(env, keys.ci, run_id, "lint", text="## Lint\n\nAll clean.")
    done = checks.get_check(env, keys.agent, run_id, "lint", "custom")
    assert (done.status, done.text) == ("complete", "## Lint\n\nAll clean.")
    assert checks.available_ids(env, keys.agent, run_id)["custom"] == ["lint"]
    made = fb.submit_feedback(env, keys.agent, "The DOM diff made it obvious", outcome="helped")
    [kept] = fb.list_feedback(env, keys.admin)
    assert kept.id == made["feedbackId"] and kept.outcome == "helped" and kept.is_agent
    with pytest.raises(Forbidden, match="'admin' role"):
        fb.list_feedback(env, keys.agent)


@sqlite_only
def test_every_refusal_says_what_is_wrong_and_changes_nothing(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    session = local.add_session(shopping_session())
    head = local.deploy(HEAD)
    with pytest.raises(InvalidInput, match="baseSha must be a git commit sha"):
        runs.trigger_test_run(env, keys.ci, deployment_id=head, base_sha="main")
    with pytest.raises(InvalidInput, match="name the deployment to test"):
        runs.trigger_test_run(env, keys.ci, base_sha=BASE)
    with pytest.raises(NotFound, match="commit 1234567 has no deployment"):
        runs.trigger_test_run(env, keys.ci, commit_sha="1234567", base_sha=BASE)
    with pytest.raises(NotFound, match="no deployment 'dep_nope'"):
        runs.trigger_test_run(env, keys.ci, deployment_id="dep_nope", base_sha=BASE)
    with pytest.raises(NotFound, match="no session 'ses_gone'"):
        runs.trigger_test_run(
            env, keys.ci, deployment_id=head, base_sha=BASE, session_ids=["ses_gone"]
        )
    with pytest.raises(InvalidInput, match="sessionIds is empty"):
        runs.trigger_test_run(env, keys.ci, deployment_id=head, base_sha=BASE, session_ids=[])
    with pytest.raises(InvalidInput, match="pr_number must be a positive integer"):
        runs.trigger_test_run(env, keys.ci, deployment_id=head, base_sha=BASE, pr_number=0)
    with pytest.raises(InvalidInput, match="gitDiffOutput names no changed file"):
        runs.trigger_test_run(
            env, keys.ci, deployment_id=head, base_sha=BASE, git_diff_output="nothing here"
        )
    reader = Actor(keys.agent.project_id, keys.agent.key_id, "reader", frozenset({"review"}))
    with pytest.raises(Forbidden, match="'upload' role"):
        runs.trigger_test_run(env, reader, deployment_id=head, base_sha=BASE)
    with env.db.read() as s:
        assert s.scalar(select(func.count(Replay.id))) == 0

    # No base deployment: every screenshot is missing its base, and nothing can be rejected.
    run_id = _run(env, keys, local, head, session_ids=[session], pr_number=3)
    rows = review.get_test_run_diffs(env, keys.agent, test_run_id=run_id, include_all_diffs=True)
    assert {r["outcome"] for r in rows["diffs"]} == {"missing-base"}
    replay_diff = rows["diffs"][0]["replayDiffId"]
    with pytest.raises(Conflict, match="is missing-base: there is no pair of screenshots"):
        review.reject_diff(env, keys.agent, replay_diff, "end-state", "why", 0.5, 0.5)
    with pytest.raises(
        NotFound, match="has no screenshot 'after-event-99' \\(it has after-event-0"
    ):
        review.get_dom_diff(env, keys.agent, replay_diff, "after-event-99")
    with pytest.raises(InvalidInput, match="context is a number of lines"):
        review.get_dom_diff(env, keys.agent, replay_diff, "end-state", context="some")
    with pytest.raises(NotFound, match="no test run for commit 9999999"):
        review.get_test_run_diffs(env, keys.agent, commit_sha="9999999")
    with pytest.raises(InvalidInput, match="x is a fraction of the image"):
        review.create_diff_comment(env, keys.agent, replay_diff, "end-state", "hi", 2, 0.5)
    with pytest.raises(InvalidInput, match="outcome is one of helped, neutral, hindered"):
        fb.submit_feedback(env, keys.agent, "hm", outcome="great")


@sqlite_only
def test_complete_base_run_replays_only_the_chosen_sessions_the_base_lacks(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    local.add_session(shopping_session())
    local.deploy(BASE)
    run_id = _run(env, keys, local, local.deploy(HEAD))
    later = local.add_session(Recording.from_json(about_json()))
    opened = len(local.opened)
    base_run = runs.complete_base_run(env, keys.ci, run_id)
    assert (base_run.kind, base_run.sessionIds, base_run.status) == ("base", [later], "processing")
    drain(env)
    assert runs.get_test_run(env, keys.agent, base_run.testRunId).status == "complete"
    assert len(local.opened) == opened + 1
    # Nothing is left to replay on that base: the next one has no session.
    assert runs.complete_base_run(env, keys.ci, run_id).sessionIds == []


@sqlite_only
def test_a_deployment_that_cannot_be_reached_fails_its_replays_and_says_why(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    local.add_session(shopping_session())
    local.deploy(BASE)
    head = local.deploy(HEAD)
    local.unreachable.add(head)
    run_id = _run(env, keys, local, head)
    found = review.get_test_run_diffs(env, keys.agent, test_run_id=run_id, include_all_diffs=True)
    assert found["status"] == "complete"
    assert {r["outcome"] for r in found["diffs"]} == {"missing-head"}
    reason = found["diffs"][0]["reason"]
    assert reason.startswith("the head replay failed (the replay stopped: ")
    assert "127.0.0.1:9" in reason


@sqlite_only
def test_a_replay_that_outlives_the_runs_max_duration_stops_and_keeps_what_it_took(
    env: Env, keys: Keys, local: LocalSources
) -> None:
    # A name typed, then six clicks on the hidden toast: each waits its 3 s for the toast to
    # show, so the replay needs well over the run's 10 s.
    whole = shopping_json()
    events = [whole["events"][0]] + [
        {"type": "click", "selectors": ["#toast"], "label": "text 'Saved'", "box": None}
        for _ in range(6)
    ]
    for seq, event in enumerate(events):
        event.update(seq=seq, t=400 + 500 * seq)
    local.add_session(Recording.from_json({**whole, "events": events}))
    run_id = _run(env, keys, local, local.deploy(HEAD), max_duration_seconds=10)
    assert runs.get_test_run(env, keys.agent, run_id).status == "complete"
    with env.db.read() as s:
        replay = s.scalars(select(Replay).where(Replay.test_run_id == run_id)).one()
        taken = s.scalars(
            select(ReplayScreenshot.name)
            .where(ReplayScreenshot.replay_id == replay.id)
            .order_by(ReplayScreenshot.position)
        ).all()
        timeline = [(e["event"], e["description"]) for e in replay.timeline]
        state, reason = replay.state, replay.reason
        # A stopped replay is never reused: the next run of that deployment replays it again.
        run = runs.get_run_row(s, keys.agent, run_id)
        assert runs._reusable(s, run, replay.session_id, replay.deployment_id) is None
    played = len(taken)
    assert state == "stopped" and 1 <= played < len(events)
    assert reason == (
        f"stopped after {played} events: the run's maxDurationSeconds (10 s) passed; the "
        "screenshots taken before are kept"
    )
    assert taken == [f"after-event-{n}" for n in range(played)]  # no end-state
    assert timeline[-1] == ("error", f"stopped after {played} of 7 events: out of time")
