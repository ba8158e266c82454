"""Blobs in an S3-compatible store: a real S3 API server (moto's) on loopback, the same flows."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.conftest import drain, shot
from tests.server import free_port
from tests.tcp_link import link_to
from viewfinder.app import create_app
from viewfinder.errors import NotFound
from viewfinder.services import diffs, projects, pushes, renders
from viewfinder.services.env import Env
from viewfinder.settings import Settings
from viewfinder.store.blobs import S3BlobStore


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("s3") / "moto.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("moto_server")),
                "-H",
                "127.0.0.1",
                "-p",
                str(port),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"the S3 server did not start:\n{log.read_text()}") from None
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(10)


def s3_settings(endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(name, value)
    bucket = f"vf-{tmp_path.name.lower().replace('_', '-')[:40]}"
    assert httpx.put(f"{endpoint}/{bucket}").status_code == 200  # create the bucket
    return Settings(
        data_dir=tmp_path / "data",
        secret="s",
        workers=0,
        blob_url=f"s3://{bucket}/blobs",
        s3_endpoint=endpoint,
    )


@pytest.fixture
def s3_env(s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    env = Env.open(s3_settings(s3_endpoint, tmp_path, monkeypatch))
    yield env
    env.close()


def test_screenshots_and_diffs_live_in_the_bucket(s3_env: Env) -> None:
    assert isinstance(s3_env.blobs, S3BlobStore)
    boot = projects.bootstrap(s3_env)
    assert boot is not None
    ci = projects.authenticate(s3_env, boot.keys["ci"].key)
    pushes.push(s3_env, ci, shot(), name="home", context_key="x", compare=True)
    result = pushes.push(
        s3_env,
        ci,
        shot(box=(0, 0, 6, 6)),
        name="home",
        context_key="x",
        compare=True,
        wait_seconds=0,
    )
    drain(s3_env)
    assert result.diff is not None
    diff = diffs.get_diff(s3_env, ci, result.diff.id)
    assert diff.outcome == "changed"
    (image,) = renders.render_diff(s3_env, ci, diff.id, "diff")
    assert image.png.startswith(b"\x89PNG")
    assert not (s3_env.settings.data_dir / "blobs").exists()


def test_a_missing_blob_reads_as_not_found(s3_env: Env) -> None:
    with pytest.raises(NotFound, match="missing from the bucket"):
        s3_env.blobs.get("0" * 64)
    sha = s3_env.blobs.put(b"bytes")
    assert s3_env.blobs.exists(sha) and s3_env.blobs.get(sha) == b"bytes"
    assert not s3_env.blobs.exists("1" * 64)
    s3_env.blobs.delete(sha)
    s3_env.blobs.delete(sha)  # deleting twice is harmless
    assert not s3_env.blobs.exists(sha)


def test_a_bucket_out_of_reach_answers_unavailable_until_it_is_back(
    s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = int(s3_endpoint.rsplit(":", 1)[1])
    with link_to(("127.0.0.1", port)) as link:
        settings = s3_settings(f"http://127.0.0.1:{link.port}", tmp_path, monkeypatch)
        env = Env.open(settings)
        try:
            boot = projects.bootstrap(env)
            assert boot is not None
            headers = {"Authorization": f"Bearer {boot.keys['ci'].key}"}
            with TestClient(create_app(env=env, workers=0)) as client:
                build = client.post("/api/v1/builds", json={"commit_sha": "abcd"}, headers=headers)
                story = f"/api/v1/builds/{build.json()['id']}/stories"

                def upload(name: str) -> httpx.Response:
                    return client.put(
                        story,
                        params={"name": name},
                        content=shot(),
                        headers={**headers, "Content-Type": "image/png"},
                    )

                link.cut()
                refused = upload("home")
                assert refused.status_code == 503, refused.text
                assert refused.headers["retry-after"] == "5"
                assert refused.json()["error"]["code"] == "unavailable"
                assert "blob store cannot be reached" in refused.json()["error"]["message"]
                link.restore()
                assert upload("home").status_code == 201
        finally:
            env.close()
