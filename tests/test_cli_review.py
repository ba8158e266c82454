"""The CI loop through the CLI against a real server: upload builds, read what changed, discuss
a change, accept it as an agent, approve it as a person, and see the next build match."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.server import BACKENDS, Server, running_server
from viewfinder.imaging import png


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with running_server(request.param, tmp_path_factory.mktemp("server")) as running:
        yield running


def shot(shade: int, box: int | None = None) -> bytes:
    """A 64x48 screenshot of one grey, with a dark box in a place chosen by ``box``."""
    pixels = np.full((48, 64, 3), shade, np.uint8)
    if box is not None:
        pixels[4 + box : 20 + box, 8:40] = (20, 30, 200)
    return png.encode(pixels, level=1)


def write(folder: Path, shots: dict[str, bytes]) -> Path:
    for name, data in shots.items():
        path = folder / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


def test_upload_review_and_approve_a_build(server: Server, tmp_path: Path) -> None:
    first = {"home": shot(250), "login": shot(240), "cart": shot(230), "pages/about": shot(220)}
    build1 = write(tmp_path / "b1", first)
    done = server.run("upload", build1, "--commit", "a1a1a1a1", "--wait", key="ci")
    assert done.returncode == 0, done.stderr
    assert "0 changed, 4 new, 0 removed, 0 failed, 0 unchanged" in done.stdout

    # Two screens change, one is gone, one is added, one stays.
    second = {
        "home": shot(250, box=0),
        "login": shot(240, box=6),
        "pages/about": first["pages/about"],
        "pages/help": shot(200),
    }
    build2 = write(tmp_path / "b2", second)
    uploaded = server.json("upload", build2, "--commit", "b2b2b2b2", "--wait", key="ci", code=1)
    assert uploaded["status"] == "done" and uploaded["verdict"] == "changed"
    expected = {"changed": 2, "removed": 1, "new": 1, "unchanged": 1, "failed": 0, "pending": 0}
    assert uploaded["counts"] == expected

    shown = server.run("build", "--commit", "b2b2b2b2", key="agent")
    assert shown.returncode == 0, shown.stderr
    assert "verdict changed" in shown.stdout
    for line in ("changed (2):", "removed (1):", "new (1):", "pages/help", "cart"):
        assert line in shown.stdout
    detail = server.json("build", "--commit", "b2b2b2b2", key="agent")
    diff_id = next(s["diff_id"] for s in detail["changed"]["items"] if s["name"] == "home")
    assert diff_id in shown.stdout

    question = ("Is the blue box intended?", "--rect", "0.1,0.1,0.5,0.4")
    thread = server.json("comments", "add", diff_id, *question, key="agent")
    assert thread["anchor"] == {"type": "rect", "x": 0.1, "y": 0.1, "w": 0.5, "h": 0.4}
    listed = server.run("comments", "list", diff_id, key="agent")
    assert f"{thread['id']} [open]" in listed.stdout and "blue box" in listed.stdout
    blocked = server.run("accept-build", "--commit", "b2b2b2b2", key="agent")
    assert blocked.returncode == 1, blocked.stderr
    assert "Nothing accepted" in blocked.stdout and "blocked: home" in blocked.stdout
    refused = server.run("review", diff_id, "accept", key="agent")
    assert refused.returncode == 2
    assert "unresolved comment" in refused.stderr and refused.stderr.startswith("error: [conflict]")

    resolved = server.run("comments", "resolve", thread["id"], key="agent")
    assert resolved.returncode == 0, resolved.stderr
    accepted = server.json("review", diff_id, "accept", key="agent")
    assert accepted["diff"]["decision"] == "accepted" and not accepted["baseline_updated"]
    assert "The baseline is unchanged" in accepted["message"]

    forbidden = server.run("approve", diff_id, key="agent")
    assert forbidden.returncode == 2
    assert "[forbidden]" in forbidden.stderr and "'approve' role" in forbidden.stderr
    approved = server.run("approve", diff_id, key="admin")
    assert approved.returncode == 0, approved.stderr
    assert "shared baseline is updated" in approved.stdout
    # The agent accepts the rest; without the approve role that leaves the baselines as they are.
    rest = server.json("accept-build", "--commit", "b2b2b2b2", key="agent")
    assert len(rest["accepted"]) == 1 and rest["blocked"] == []

    # The next build comes from a pull request; the repository is the one GitHub Actions names.
    build3 = write(tmp_path / "b3", second)
    on_pr = ("--commit", "c3c3c3c3", "--pr", "7", "--wait")
    third = server.json("upload", build3, *on_pr, key="ci", code=1, GITHUB_REPOSITORY="acme/shop")
    assert server.json("build", "--pr", "7", key="agent")["repo"] == "acme/shop"
    stories = server.json("stories", third["build_id"], "--state", "unchanged", key="agent")
    assert "home" in {s["name"] for s in stories["items"]}
    # login was accepted by the agent but never approved: its baseline is still the old one.
    assert third["counts"]["changed"] == 1


def test_a_phone_build_uploaded_with_its_scale_passes_text_drawn_again(
    server: Server, tmp_path: Path
) -> None:
    from tests import style_corpus

    base, respaced = style_corpus.phone_pair("shop-dark-3x/glyph_spacing")
    changed = {}
    for told, commits in ((["--scale", "3"], ("c3c3c3c3", "d4d4d4d4")), ([], ("e5e5", "f6f6"))):
        name = "phone/told" if told else "phone/untold"
        for commit, data in zip(commits, (base, respaced), strict=True):
            folder = write(tmp_path / commit, {name: data})
            # An upload reports the stories of the server's last build that it lacks removed,
            # so its exit code says nothing here.
            args = ("upload", folder, "--commit", commit, "--wait", "--json", *told)
            done = server.run(*args, key="ci")
            assert done.returncode in (0, 1), done.stderr
            build = json.loads(done.stdout)
            assert build["status"] == "done"
        changed[name] = build["counts"]["changed"]
    # Told the scale, the text drawn again is rendering noise: unchanged; untold, a change.
    assert changed == {"phone/told": 0, "phone/untold": 1}
    refused = server.run("upload", folder, "--commit", "a0a0", "--scale", "9", key="ci")
    assert refused.returncode == 2 and "scale must be the device scale" in refused.stderr
