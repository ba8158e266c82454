"""Deployments: a static build's zip is uploaded to a signed URL, checked (zip-slip, zip bombs,
sizes), registered for a commit and served from loopback with single-page-app rewrites; a
running preview's URL passes the address guard; container builds need a runtime. Every refusal
says what to do and keeps nothing."""

from __future__ import annotations

import io
import stat
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.agent_session import record_shopping
from tests.conftest import Keys, drain
from tests.server import free_port
from viewfinder.app import create_app
from viewfinder.errors import (
    AddressRefused,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    TooLarge,
    Unavailable,
)
from viewfinder.replay.bundle import BundleLimits, check_zip, unpack
from viewfinder.services import deployments
from viewfinder.services.env import Env
from viewfinder.services.testruns import runs
from viewfinder.settings import Settings
from viewfinder.store.models import Blob
from viewfinder.store.recorded import DeploymentUpload
from viewfinder.store.replay_models import Replay

SHA = "0123abcd" * 5


def make_zip(files: dict[str, bytes | str], *, top: str = "") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in files.items():
            z.writestr(top + name, content)
    return out.getvalue()


APP = {
    "index.html": "<!doctype html><title>app</title><h1>Home</h1>",
    "assets/app.js": "console.log('app')",
    "about.html": "<h1>About</h1>",
    "docs/index.html": "<h1>Docs</h1>",
    "admin/shell.html": "<h1>Admin</h1>",
}


def upload_zip(client: TestClient, key: str, data: bytes) -> tuple[str, httpx.Response]:
    ticket = client.post("/api/v1/deployments/uploads", headers={"Authorization": f"Bearer {key}"})
    assert ticket.status_code == 201, ticket.text
    url = ticket.json()["upload_url"]
    assert url.startswith("http://127.0.0.1:8000/api/v1/deployments/uploads/")
    put = client.put(url.removeprefix("http://127.0.0.1:8000"), content=data)
    return ticket.json()["upload_id"], put


@pytest.fixture
def client(env: Env) -> Iterator[TestClient]:
    with TestClient(create_app(env=env, workers=0)) as c:
        yield c


def test_a_static_build_is_uploaded_registered_and_served_with_spa_rewrites(
    env: Env, keys: Keys, client: TestClient
) -> None:
    upload_id, put = upload_zip(client, keys.secrets["ci"], make_zip(APP, top="dist/"))
    assert put.status_code == 200, put.text
    assert put.json() == {
        "upload_id": upload_id,
        "state": "uploaded",
        "bytes": put.json()["bytes"],
        "files": 5,
    }
    auth = {"Authorization": f"Bearer {keys.secrets['ci']}"}
    rules = [{"source": "/admin/*", "destination": "/admin/shell.html"}]
    made = client.post(
        "/api/v1/deployments",
        json={"upload_id": upload_id, "commit_sha": SHA, "rewrites": rules},
        headers=auth,
    )
    assert made.status_code == 201, made.text
    deployment = made.json()
    assert deployment["kind"] == "static" and deployment["files"] == 5
    again = client.post(
        "/api/v1/deployments", json={"upload_id": upload_id, "commit_sha": SHA}, headers=auth
    )
    assert again.json()["id"] == deployment["id"]  # registering again changes nothing
    listed = client.get("/api/v1/deployments", params={"commit_sha": SHA}, headers=auth).json()
    assert [d["id"] for d in listed] == [deployment["id"]]

    with deployments.open_deployment(env, deployment["id"]) as base:
        assert base.startswith("http://127.0.0.1:")

        def get(path: str) -> httpx.Response:
            return httpx.get(base + path, timeout=10)

        assert "Home" in get("/").text
        assert get("/assets/app.js").headers["content-type"].startswith("text/javascript")
        assert "Home" in get("/items/42").text  # an app route: the SPA's index.html
        assert "About" in get("/about").text  # clean URLs
        assert "Docs" in get("/docs/").text
        assert "Admin" in get("/admin/users/7").text  # the build's own rule
        assert get("/missing.js").status_code == 404
        for escape in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc/hosts"):
            assert "root:" not in get(escape).text and "localhost" not in get(escape).text
    with pytest.raises(httpx.TransportError):
        httpx.get(base + "/", timeout=2)  # stopped with the block


def zip_with_entry(name: str, content: bytes = b"x", *, symlink: bool = False) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("index.html", "<h1>ok</h1>")
        info = zipfile.ZipInfo(name)
        if symlink:
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, content)
    return out.getvalue()


def bomb() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("index.html", "<h1>ok</h1>")
        z.writestr("big.js", b"\0" * (20 * 1024 * 1024))
    return out.getvalue()


REFUSED = [
    (zip_with_entry("../escape.js"), "invalid_input", "outside the build's folder (zip-slip)"),
    (zip_with_entry("/etc/cron.d/x"), "invalid_input", "zip-slip"),
    (zip_with_entry("C:/Windows/x.js"), "invalid_input", "zip-slip"),
    (zip_with_entry("a\\..\\..\\x.js"), "invalid_input", "zip-slip"),
    (zip_with_entry("link", b"/etc/passwd", symlink=True), "invalid_input", "symbolic link"),
    (bomb(), "too_large", "zip bomb"),
    (b"PK\x03\x04 not really a zip", "invalid_input", "not a zip file"),
    (make_zip({"readme.txt": "hi"}), "invalid_input", "no index.html"),
]


@pytest.mark.parametrize(("data", "code", "words"), REFUSED)
def test_a_malicious_or_broken_zip_is_refused_at_upload_and_nothing_is_kept(
    env: Env, keys: Keys, client: TestClient, data: bytes, code: str, words: str
) -> None:
    with env.db.read() as s:
        blobs_before = s.scalar(select(func.count()).select_from(Blob))
    upload_id, put = upload_zip(client, keys.secrets["ci"], data)
    assert put.status_code in (400, 413), put.text
    assert put.json()["error"]["code"] == code
    assert words in put.json()["error"]["message"]
    with env.db.read() as s:
        assert s.scalar(select(func.count()).select_from(Blob)) == blobs_before
        assert s.get_one(DeploymentUpload, upload_id).state == "pending"
    with pytest.raises(Conflict, match="nothing was uploaded"):
        deployments.register_asset_build(env, keys.ci, upload_id, SHA)


def test_the_limits_on_size_files_and_ratio_are_the_settings(tmp_path: Path) -> None:
    data = make_zip({"index.html": "x" * 5000, "a.js": "1", "b.js": "2"})
    with pytest.raises(TooLarge, match="VIEWFINDER_DEPLOY_MAX_ZIP_BYTES"):
        check_zip(data, BundleLimits(max_zip_bytes=100))
    with pytest.raises(TooLarge, match="holds 3 files; at most 2"):
        check_zip(data, BundleLimits(max_files=2))
    with pytest.raises(TooLarge, match="unpacks to 5,002 bytes; at most 5,000"):
        check_zip(data, BundleLimits(max_unpacked_bytes=5000))
    with pytest.raises(TooLarge, match="over 10 to 1"):
        check_zip(bomb(), BundleLimits(max_ratio=10))
    assert check_zip(bomb(), BundleLimits(max_ratio=100_000)).files == 2
    dest = tmp_path / "out"
    assert unpack(data, dest, BundleLimits()).files == 3
    assert sorted(p.name for p in dest.iterdir()) == ["a.js", "b.js", "index.html"]


def test_a_zip_whose_header_lies_about_a_size_is_refused_while_unpacking(tmp_path: Path) -> None:
    honest = make_zip({"index.html": "<h1>" + "x" * 4000 + "</h1>"})
    # The central directory says the file is 10 bytes; it inflates to 4009.
    lying = bytearray(honest)
    central = lying.rfind(b"PK\x01\x02")
    lying[central + 24 : central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(InvalidInput, match="is corrupt"):
        unpack(bytes(lying), tmp_path / "out", BundleLimits())
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no half-unpacked folder


def test_upload_links_that_do_not_verify_and_uploads_of_another_project_are_not_found(
    env: Env, keys: Keys, other: Keys, client: TestClient
) -> None:
    answer = client.put("/api/v1/deployments/uploads/made.up", content=make_zip(APP))
    assert answer.status_code == 404 and "no such upload" in answer.json()["error"]["message"]
    ticket = deployments.request_asset_upload(env, keys.ci)
    with pytest.raises(NotFound, match="no upload"):
        deployments.register_asset_build(env, other.ci, ticket.upload_id, SHA)
    with pytest.raises(InvalidInput, match="not a commit id"):
        deployments.register_asset_build(env, keys.ci, ticket.upload_id, "main")
    with pytest.raises(InvalidInput, match=r"rewrites\[0\].source must be a path"):
        deployments.register_asset_build(
            env, keys.ci, ticket.upload_id, SHA, [{"source": "x", "destination": "/a"}]
        )
    with pytest.raises(Forbidden, match="'upload' role"):
        deployments.request_asset_upload(env, other.agent)  # a review-only key
    empty = client.put(ticket.upload_url.removeprefix("http://127.0.0.1:8000"), content=b"")
    assert empty.status_code == 400 and "body is empty" in empty.json()["error"]["message"]


def test_an_expired_upload_link_is_refused(tmp_path: Path, keys: Keys, env: Env) -> None:
    ticket = deployments.request_asset_upload(env, keys.ci)
    token = ticket.upload_url.rsplit("/", 1)[1]
    late = type(env.signer)("x", clock=lambda: time.time() + 7200)
    late._key = env.signer._key  # the same secret, two hours later
    env.signer, saved = late, env.signer
    try:
        with pytest.raises(NotFound, match="has expired"):
            deployments.receive_upload(env, token, make_zip(APP))
    finally:
        env.signer = saved


def test_a_running_preview_is_a_deployment_when_the_address_guard_allows_it(
    env: Env, keys: Keys, client: TestClient
) -> None:
    auth = {"Authorization": f"Bearer {keys.secrets['ci']}"}
    refused = client.post(
        "/api/v1/deployments/previews",
        json={"url": "http://127.0.0.1:5173/", "commit_sha": SHA},
        headers=auth,
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "address_refused"
    assert "VIEWFINDER_CAPTURE_ALLOW" in refused.json()["error"]["message"]
    with pytest.raises(AddressRefused, match="must be an http:// or https:// address"):
        deployments.register_preview(env, keys.ci, "file:///etc/passwd", SHA)
    allowing = Env(
        settings=env.settings.model_copy(update={"capture_allow": "127.0.0.1"}),
        db=env.db,
        blobs=env.blobs,
        signer=env.signer,
    )
    made = deployments.register_preview(allowing, keys.ci, "http://127.0.0.1:5173/", SHA)
    assert made.kind == "url" and made.url == "http://127.0.0.1:5173/"
    with deployments.open_deployment(allowing, made.id) as base:
        assert base == "http://127.0.0.1:5173"


def test_a_previews_address_is_checked_again_when_a_replay_opens_it(env: Env, keys: Keys) -> None:
    # localhost passed while the allow-list named it; by the time of the replay it does not
    # (as a name that resolves elsewhere since would not): the replay is refused, saying why.
    port = free_port()
    allowing = Env(
        settings=env.settings.model_copy(update={"capture_allow": f"localhost:{port}"}),
        db=env.db,
        blobs=env.blobs,
        signer=env.signer,
    )
    url = f"http://localhost:{port}/"
    made = deployments.register_preview(allowing, keys.ci, url, SHA)
    session = record_shopping(env, keys)
    started = runs.trigger_test_run(env, keys.ci, deployment_id=made.id, base_sha="f" * 40)
    assert started.sessionIds == [session]
    drain(env)
    assert runs.get_test_run(env, keys.agent, started.testRunId).status == "complete"
    with env.db.read() as s:
        [(state, reason)] = s.execute(
            select(Replay.state, Replay.reason).where(Replay.test_run_id == started.testRunId)
        ).all()
    assert state == "failed"
    assert reason.startswith(
        f"the preview URL was checked again before replaying on it and is refused: {url} is a "
        "loopback address (localhost resolves to "
    )
    assert reason.endswith(f"add it to VIEWFINDER_CAPTURE_ALLOW (e.g. localhost:{port})")
    with pytest.raises(AddressRefused, match="checked again before replaying on it"):
        with deployments.open_deployment(env, made.id):
            pass


def test_container_builds_are_refused_with_the_reason_when_no_runtime_works(
    env: Env, keys: Keys, client: TestClient
) -> None:
    auth = {"Authorization": f"Bearer {keys.secrets['ci']}"}
    answer = client.post("/api/v1/deployments/containers/uploads", headers=auth)
    assert answer.status_code == 409
    assert "no container runtime is configured" in answer.json()["error"]["message"]
    assert "VIEWFINDER_CONTAINER_RUNTIME=docker" in answer.json()["error"]["message"]
    with pytest.raises(Conflict, match="no container runtime"):
        deployments.register_container_build(env, keys.ci, "upl_x", SHA)

    def with_runtime(runtime: str) -> Env:
        settings = env.settings.model_copy(update={"container_runtime": runtime})
        return Env(settings=settings, db=env.db, blobs=env.blobs, signer=env.signer)

    with pytest.raises(Unavailable, match="'no-such-runtime' .* is not installed"):
        deployments.request_container_upload(with_runtime("no-such-runtime"), keys.ci)
    docker = subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False)
    if docker.returncode != 0:
        # This machine has the docker client but no daemon: the refusal names docker's reason.
        with pytest.raises(Unavailable, match="'docker' does not work: .*Start its daemon"):
            deployments.request_container_upload(with_runtime("docker"), keys.ci)
    else:
        ticket = deployments.request_container_upload(with_runtime("docker"), keys.ci)
        assert ticket.image.startswith("viewfinder-upload/upl_")


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("s3") / "moto.log"
    moto = str(Path(sys.executable).with_name("moto_server"))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [moto, "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=subprocess.STDOUT
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


def test_with_blobs_in_s3_the_zip_goes_straight_to_the_bucket_by_a_presigned_url(
    s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from viewfinder.services import projects

    for name, value in (
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(name, value)
    bucket = f"vf-dep-{tmp_path.name.lower().replace('_', '-')[:30]}"
    assert httpx.put(f"{s3_endpoint}/{bucket}").status_code == 200
    settings = Settings(
        data_dir=tmp_path / "data",
        secret="s",
        workers=0,
        blob_url=f"s3://{bucket}/blobs",
        s3_endpoint=s3_endpoint,
    )
    s3 = Env.open(settings)
    try:
        boot = projects.bootstrap(s3)
        assert boot is not None
        ci = projects.authenticate(s3, boot.keys["ci"].key)
        ticket = deployments.request_asset_upload(s3, ci)
        assert ticket.upload_url.startswith(f"{s3_endpoint}/{bucket}/blobs/uploads/")
        assert httpx.put(ticket.upload_url, content=make_zip(APP)).status_code == 200
        made = deployments.register_asset_build(s3, ci, ticket.upload_id, SHA)
        with deployments.open_deployment(s3, made.id) as base:
            assert "Home" in httpx.get(base + "/items", timeout=10).text
        bad = deployments.request_asset_upload(s3, ci)
        assert httpx.put(bad.upload_url, content=zip_with_entry("../x")).status_code == 200
        with pytest.raises(InvalidInput, match="zip-slip"):
            deployments.register_asset_build(s3, ci, bad.upload_id, SHA)
    finally:
        s3.close()


def test_uploaded_builds_count_against_the_projects_storage_quota(
    env: Env, keys: Keys, client: TestClient
) -> None:
    from viewfinder.services import images

    data = make_zip(APP)
    upload_id, put = upload_zip(client, keys.secrets["ci"], data)
    assert put.status_code == 200
    assert images.usage(env, keys.admin).used_bytes == len(data)
    images.set_quota(env, keys.admin, len(data) + 10)
    bigger = make_zip({**APP, "assets/more.js": "x = 1;" * 500})
    second, refused = upload_zip(client, keys.secrets["ci"], bigger)
    assert refused.status_code == 402, refused.text
    assert "storage quota reached" in refused.json()["error"]["message"]
    with env.db.read() as s:
        assert s.get_one(DeploymentUpload, second).sha256 is None
    deployments.register_asset_build(env, keys.ci, upload_id, SHA)
    assert images.usage(env, keys.admin).used_bytes == len(data)  # counted once


def test_uploads_never_registered_are_forgotten_after_their_url_expired(
    env: Env, keys: Keys, client: TestClient
) -> None:
    kept, put = upload_zip(client, keys.secrets["ci"], make_zip(APP))
    deployments.register_asset_build(env, keys.ci, kept, SHA)
    stale, _ = upload_zip(client, keys.secrets["ci"], make_zip(APP, top="site/"))
    fresh = deployments.request_asset_upload(env, keys.ci).upload_id
    with env.db.write() as s:
        for upload_id in (kept, stale):
            s.get_one(DeploymentUpload, upload_id).expires_at -= timedelta(days=1)
    assert deployments.expire_uploads(env) == 1
    with env.db.read() as s:
        assert s.get(DeploymentUpload, stale) is None
        assert s.get(DeploymentUpload, kept) is not None and s.get(DeploymentUpload, fresh)
    with pytest.raises(NotFound, match="no upload"):
        deployments.register_asset_build(env, keys.ci, stale, SHA)
