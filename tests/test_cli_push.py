"""The delivery loop through the CLI against a real server: push screenshots into a PR, compare,
approve, merge (the PR's baseline becomes shared), push into a labelled context, expire."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.server import BACKENDS, Server, running_server
from viewfinder.imaging import decode, png


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with running_server(request.param, tmp_path_factory.mktemp("server")) as running:
        yield running


def screenshot(path: Path, banner: int) -> Path:
    """A 64x48 page whose banner is ``banner`` pixels tall."""
    pixels = np.full((48, 64, 3), 245, np.uint8)
    pixels[:banner] = (30, 60, 160)
    path.write_bytes(png.encode(pixels, level=1))
    return path


def test_push_compare_approve_and_merge_a_pr(server: Server, tmp_path: Path) -> None:
    before = screenshot(tmp_path / "before.png", 8)
    after = screenshot(tmp_path / "after.png", 12)
    pr = ("--pr", "5", "--repo", "acme/web")

    first = server.run("push", before, "--name", "home", *pr, "--compare", key="ci")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("image img_")
    assert "![home](" in first.stdout and "Registered as the baseline" in first.stdout

    changed = server.json("push", after, "--name", "home", *pr, "--compare", key="ci", code=1)
    diff = changed["diff"]
    assert diff["outcome"] == "changed" and diff["baseline_scope"] == "context"
    text = server.run("show-diff", diff["id"], key="ci")
    assert (
        f"diff {diff['id']}: Changed: 8.3333% of pixels differ (256 of 3,072 pixels)" in text.stdout
    )

    comment = server.run("pr-comment", *pr, key="ci")
    assert comment.returncode == 0, comment.stderr
    assert comment.stdout.startswith("## Viewfinder: screenshots of acme/web#5")
    assert "### home (changed: 8.33%)" in comment.stdout

    saved = server.run("image", changed["image_id"], "--out", tmp_path / "files", key="ci")
    assert saved.returncode == 0, saved.stderr
    for name in ("baseline", "candidate", "diff"):
        assert decode((tmp_path / "files" / f"{name}.png").read_bytes()).shape[:2] == (48, 64)
    assert (tmp_path / "files" / "candidate.png").read_bytes() == after.read_bytes()

    approved = server.run("approve", diff["id"], key="admin")
    assert approved.returncode == 0, approved.stderr
    assert "this PR's baseline is updated" in approved.stdout

    closed = server.run("close", *pr, "--reason", "merged", key="admin")
    assert closed.returncode == 0, closed.stderr
    assert "1 baseline(s) promoted" in closed.stdout

    current = server.json("baselines", "--name", "home", key="ci")["items"]
    assert [(b["scope"], b["source"]) for b in current] == [("shared", "promoted")]

    # A labelled context compares with the shared baselines: the merged image is one now.
    design = ("--context", "design-review", "--tag", "q3")
    labelled = server.run("push", after, "--name", "home", *design, "--compare", key="ci")
    assert labelled.returncode == 0, labelled.stderr
    assert "Unchanged: 0.0000% of pixels differ" in labelled.stdout
    image_id = labelled.stdout.split()[1]
    link = labelled.stdout.split("](", 1)[1].split(")", 1)[0]
    assert httpx.get(link).content == after.read_bytes()

    expired = server.run("expire", image_id, key="ci")
    assert expired.returncode == 0 and f"expired {image_id}" in expired.stdout
    assert httpx.get(link).status_code == 404
    record = server.json("image", image_id, key="ci")
    assert record["image"]["expired"] is True and record["image"]["tags"] == ["q3"]
    assert record["diff"]["outcome"] == "unchanged"

    # Without --compare: only the markdown; pushing the name again replaces the older image.
    shot = screenshot(tmp_path / "shot.png", 4)
    notes = ("--name", "settings", "--context", "notes", "--viewport", "64x48")
    done = server.json("push", shot, *notes, "--label", "Notes", key="ci")
    assert done["diff"] is None and done["markdown"].startswith("![settings (64x48)](")
    again = server.run("push", shot, *notes, key="ci")
    assert again.returncode == 0, again.stderr
    assert f"replaces {done['image_id']}" in again.stdout
