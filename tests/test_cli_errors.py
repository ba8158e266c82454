"""Bad usage through the CLI: every refusal exits 2 with `error: ...` on stderr and stores
nothing; and a key made on the data directory works while the server runs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.server import BACKENDS, VIEWFINDER, Server, clean_environ, free_port, running_server
from viewfinder.imaging import png


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with running_server(request.param, tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("files")
    paths = {"png": root / "shot.png", "jpeg": root / "shot.jpg", "empty": root / "empty"}
    paths["png"].write_bytes(png.encode(np.zeros((8, 8, 3), np.uint8)))
    Image.new("RGB", (8, 8), "red").save(paths["jpeg"])
    paths["empty"].mkdir()
    return paths


def refused(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    for fragment in fragments:
        assert fragment in done.stderr


def local(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`viewfinder ARGS` with no server settings at all."""
    return subprocess.run(
        [VIEWFINDER, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_environ() | env,
        check=False,
    )


def test_refusals_the_cli_makes_before_calling_the_server(files: dict[str, Path]) -> None:
    key = {"VIEWFINDER_KEY": "vf_proj_unused"}
    refused(local("build", "bld_x", "--commit", "abcd1234", **key), "exactly one of BUILD_ID")
    refused(local("build", **key), "exactly one of BUILD_ID")
    refused(local("upload", files["empty"], "--commit", "abcd", **key), "no PNG files under")
    refused(
        local("upload", files["empty"], "--commit", "abcd", "--storybook", "--scale", "3", **key),
        "stories --storybook captures are taken at scale 1",
    )
    refused(
        local("push", files["png"], "--name", "x", **key), "exactly one of --pr N and --context"
    )
    refused(local("usage"), "no API key: set VIEWFINDER_KEY")
    nobody = f"http://127.0.0.1:{free_port()}"
    # Checked before the server is called (none listens here): no build is opened.
    bad_scale = "error: [invalid_input] scale must be the device scale"
    upload = ("upload", files["png"].parent, "--commit", "abcd", "--scale", "12")
    refused(local(*upload, "--url", nobody, **key), bad_scale)
    push = ("push", files["png"], "--name", "x", "--context", "y", "--scale", "0.1")
    refused(local(*push, "--url", nobody, **key), bad_scale)
    refused(
        local("usage", "--url", nobody, **key),
        f"error: cannot reach Viewfinder at {nobody}: is `viewfinder serve` running? "
        "Set VIEWFINDER_URL.",
    )


def test_server_refusals_exit_2_and_a_local_key_works(
    server: Server, files: dict[str, Path]
) -> None:
    images = server.json("usage", key="ci")["images"]
    context = ("--context", "errors")
    refused(
        server.run("push", files["jpeg"], "--name", "j", *context, "--compare", key="ci"),
        "error: [invalid_input] compare works on PNG images only",
    )
    refused(
        server.run("push", files["png"], "--name", "n" * 201, *context, key="ci"),
        "error: [invalid_input] name is 1 to 200 characters; this one has 201",
    )
    refused(
        server.run("push", files["png"], "--name", "v", "--viewport", "wide", *context, key="ci"),
        "[invalid_input] viewport 'wide' is not WIDTHxHEIGHT",
    )
    refused(
        server.run("push", files["png"], "--name", "m", "--mask", "1,2,3", *context, key="admin"),
        "error: [invalid_mask] mask 1",
    )
    refused(server.run("usage", key="vf_proj_not-a-real-key"), "error: [unauthenticated]")
    # A file with no end is sent as it is read; the server stops at its limit and says so.
    refused(
        server.run("push", "/dev/zero", "--name", "z", *context, key="ci"),
        "error: [image_too_large] the upload is over",
    )
    refused(
        server.run("push", "/dev/zero", "--name", "z", *context, key="vf_proj_not-a-real-key"),
        "error: [unauthenticated]",
    )
    assert server.json("usage", key="ci")["images"] == images

    # A key made on the data directory works at once, with the roles asked for.
    made = ("--data-dir", server.data_dir, "--role", "review", "--label", "reviewer")
    key = server.json("keys", "create", *made, key=None)
    assert key["roles"] == ["review"] and key["label"] == "reviewer"
    assert server.json("usage", key=key["key"])["project_id"] == key["project_id"]
    refused(server.run("keys", "list", key=key["key"]), "[forbidden]", "'admin' role")
