"""`viewfinder upload --storybook`: a real Storybook static build (tests/data/storybook, built
once with Storybook 8) captured story by story in Chromium and uploaded to a real server as one
build; the story that throws is failed with its error, never missing."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.server import Server, running_server
from viewfinder import imaging

STORYBOOK = Path(__file__).parent / "data" / "storybook" / "storybook-static"
BLUE = np.array([0x1D, 0x4E, 0xD8])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    with running_server("sqlite", tmp_path_factory.mktemp("storybook")) as s:
        yield s  # type: ignore[misc]


def stories_of(server: Server, build_id: str) -> dict[str, dict[str, object]]:
    found = {}
    for state in ("new", "failed", "changed", "unchanged"):
        page = httpx.get(
            f"{server.url}/api/v1/builds/{build_id}/stories",
            params={"limit": 100, "state": state},
            headers={"Authorization": f"Bearer {server.keys['ci']}"},
            timeout=30,
        ).json()
        found |= {story["name"]: story for story in page["items"]}
    return found


def test_every_story_is_captured_and_the_one_that_throws_is_failed_with_its_error(
    server: Server,
) -> None:
    done = server.json(
        "upload", STORYBOOK, "--storybook", "--commit", "abcd1234", "--wait", key="ci", code=1
    )
    assert done["verdict"] == "failed"
    assert done["counts"]["new"] == 3 and done["counts"]["failed"] == 1
    stories = stories_of(server, done["build_id"])
    assert set(stories) == {
        "Form/Button/Primary@1280x800",
        "Form/Button/Secondary@1280x800",
        "Layout/Card/Basic@1280x800",
        "Layout/Card/Broken@1280x800",
    }
    broken = stories["Layout/Card/Broken@1280x800"]
    assert broken["state"] == "failed"
    assert broken["failure_reason"] == "the story threw: price is undefined"
    primary = stories["Form/Button/Primary@1280x800"]
    png = httpx.get(str(primary["urls"]["candidate"]), timeout=30).content  # type: ignore[index]
    pixels = imaging.decode(png)
    assert pixels.shape[:2] == (800, 1280)
    assert (np.abs(pixels[..., :3].astype(int) - BLUE).sum(axis=-1) < 8).sum() > 500  # its fill


def test_stories_are_chosen_by_glob_at_each_viewport_and_bad_input_changes_nothing(
    server: Server, tmp_path: Path
) -> None:
    done = server.json(
        "upload",
        STORYBOOK,
        "--storybook",
        "--stories",
        "Form/*",
        "--storybook-viewport",
        "375x667",
        "--storybook-viewport",
        "800x600",
        "--commit",
        "abcd5678",
        "--wait",
        "--exit-zero-on-changes",  # after the other test's build, its stories are removed here
        key="ci",
    )
    assert sorted(stories_of(server, done["build_id"])) == [
        "Form/Button/Primary@375x667",
        "Form/Button/Primary@800x600",
        "Form/Button/Secondary@375x667",
        "Form/Button/Secondary@800x600",
    ]
    before = server.json("builds", key="ci")["items"]

    nothing = server.run(
        "upload", STORYBOOK, "--storybook", "--stories", "Nav/*", "--commit", "abcd"
    )
    assert nothing.returncode == 2
    assert "no story matches --stories 'Nav/*'" in nothing.stderr
    (tmp_path / "shots").mkdir()
    not_storybook = server.run("upload", tmp_path / "shots", "--storybook", "--commit", "abcd")
    assert not_storybook.returncode == 2 and "has no index.json" in not_storybook.stderr
    odd = server.run(
        "upload", STORYBOOK, "--storybook", "--storybook-viewport", "wide", "--commit", "abcd"
    )
    assert odd.returncode == 2 and "is not WIDTHxHEIGHT" in odd.stderr
    assert server.json("builds", key="ci")["items"] == before
