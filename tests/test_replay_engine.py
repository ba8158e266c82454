"""The replay engine in real Chromium: a recorded session played on a generated app served
from 127.0.0.1 gives the same pixels every time, answers the page's calls from the recording,
and explains what a new build changed by its DOM, its timeline and the code that ran."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.replay_app import serving, shopping_json, shopping_session, write_app
from viewfinder.replay import ReplayResult, dom_diff, replay, timeline_diff
from viewfinder.replay import coverage as cov
from viewfinder.replay.recording import Recording


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("builds")
    with (
        serving(write_app(root / "base")) as base,
        serving(write_app(root / "regressed", "regressed")) as regressed,
        serving(write_app(root / "network", "network")) as network,
    ):
        yield {"base": base, "regressed": regressed, "network": network}


@pytest.fixture(scope="module")
def base_replay(builds: dict[str, str]) -> ReplayResult:
    return replay(shopping_session(), builds["base"])


def test_a_replay_takes_a_screenshot_after_each_event_and_at_the_end(
    base_replay: ReplayResult,
) -> None:
    names = [s.name for s in base_replay.shots]
    assert names == [f"after-event-{n}" for n in range(8)] + ["end-state"]
    assert all((s.width, s.height) == (800, 600) for s in base_replay.shots)
    assert base_replay.steps == 8


def test_the_same_session_replayed_again_gives_identical_pixels_and_dom(
    builds: dict[str, str], base_replay: ReplayResult
) -> None:
    again = replay(shopping_session(), builds["base"])
    assert [s.png for s in again.shots] == [s.png for s in base_replay.shots]
    assert [s.dom for s in again.shots] == [s.dom for s in base_replay.shots]
    assert again.timeline == base_replay.timeline


def test_the_clock_is_frozen_random_is_seeded_and_the_page_knows_it_is_a_replay(
    base_replay: ReplayResult,
) -> None:
    first = base_replay.shots[0].dom
    assert '"2024-01-01T00:00:00.000Z"' in first or '"2024-01-01T00:00:01.000Z"' in first
    assert 'data-replay="true"' in first
    # The storage and cookies the session began with are there before the page's scripts run.
    assert 'data-theme="light"' in first and 'data-cookie="seen=1"' in first


def test_the_pages_calls_are_answered_from_the_recording_in_order(
    base_replay: ReplayResult,
) -> None:
    after_add = base_replay.shots[1].dom
    assert '"milk"' in after_add and '"cheese 1"' not in after_add
    assert '"cheese 1"' in base_replay.shots[2].dom
    assert '"eggs"' in base_replay.shot("after-event-5").dom  # type: ignore[union-attr]
    calls = [e.description for e in base_replay.timeline if e.event == "network"]
    assert calls == [
        "GET /api/items 200",
        "POST /api/items 201",
        "GET /api/items 200",
        "GET /api/items?page=2 200",
        "POST /api/items 201",
        "GET /api/items 200",
    ]
    assert base_replay.unrecorded == () and base_replay.exceptions == ()


def test_timers_run_only_as_far_as_the_recorded_gaps(base_replay: ReplayResult) -> None:
    # The toast shows 300 ms after an add (and hides 2.5 s later): shown 700 ms after the
    # click, not before it.
    assert '<p hidden id="toast">' in base_replay.shots[0].dom
    assert '<p id="toast">' in base_replay.shots[1].dom


def test_a_call_the_recording_never_saw_gets_a_404_and_shows_on_the_timeline(
    builds: dict[str, str], base_replay: ReplayResult
) -> None:
    head = replay(shopping_session(), builds["network"])
    assert head.unrecorded[0] == "GET /api/stats"
    assert "stats are unavailable" in head.console_errors
    rows = timeline_diff(base_replay.timeline, head.timeline, include_same=False)
    added = [(r["event"], r["description"]) for r in rows if r["diff"] == "added"]
    assert ("network", "GET /api/stats 404 (not in the recording)") in added
    assert ("console", "error: stats are unavailable") in added


def test_a_changed_build_is_explained_by_its_dom_diff_and_the_code_that_ran(
    builds: dict[str, str], base_replay: ReplayResult
) -> None:
    head = replay(shopping_session(), builds["regressed"])
    before, after = base_replay.shots[0], head.shots[0]
    assert before.png != after.png
    text = dom_diff(before.dom, after.dom)
    assert text.startswith("[diff 1]\n@@")
    assert '-"Add item"' in text and '+"Add to list"' in text
    assert "[diff 2]" not in text
    assert dom_diff(before.dom, before.dom) == ""
    # The same code ran on both builds: no coverage difference.
    assert cov.diff(base_replay.coverage, head.coverage) == []


def test_coverage_is_taken_per_screenshot_by_file_and_function(
    base_replay: ReplayResult,
) -> None:
    after_add = {f.path: f for f in base_replay.shots[1].coverage}["assets/app.js"]
    names = {f.name for f in after_add.functions}
    assert {"addItem", "showToast", "renderItems"} <= names
    assert "start" not in names  # it ran before the first screenshot, not since
    whole = {f.path: f for f in base_replay.coverage}["assets/app.js"]
    assert 0 < whole.covered_lines <= whole.executable_lines
    assert "start" in {f.name for f in whole.functions}


def test_a_click_whose_selectors_all_fail_falls_back_to_the_recorded_box(
    builds: dict[str, str],
) -> None:
    obj = shopping_json()
    obj["events"][1]["selectors"] = ["#gone", "text=Nothing like this"]
    result = replay(Recording.from_json(obj), builds["base"])
    errors = [e.description for e in result.timeline if e.event == "error"]
    assert errors == ["event 1: no element matched; clicked at 295,90"]


def test_requests_outside_the_deployment_are_refused(
    builds: dict[str, str], tmp_path: Path
) -> None:
    root = write_app(tmp_path / "outside")
    index = root / "index.html"
    index.write_text(
        index.read_text().replace(
            "</main>", '<img src="http://127.0.0.2:9/pixel.png" alt=""></main>'
        )
    )
    with serving(root) as url:
        result = replay(shopping_session(), url)
    refused = [e.description for e in result.timeline if "refused" in e.description]
    assert refused[0] == "GET http://127.0.0.2:9/pixel.png refused (outside the deployment)"


def test_dom_diff_hunks_are_numbered_with_context() -> None:
    base = "\n".join(f'<p>\n  "line {n}"' for n in range(20))
    head = base.replace('"line 2"', '"line two"').replace('"line 17"', '"line seventeen"')
    text = dom_diff(base, head, context=1)
    assert text.split("\n")[0] == "[diff 1]"
    assert "[diff 2]" in text and "[diff 3]" not in text
    assert '-"line 2"\n+"line two"' in text
    whole = dom_diff(base, head, context=None)
    assert whole.count("[diff ") == 1 and whole.count("\n ") == 38
