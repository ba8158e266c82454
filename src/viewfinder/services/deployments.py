"""Deployments: the builds recorded sessions are replayed on.

A static build is uploaded as a zip: ``request_asset_upload`` gives an upload id and a signed
URL to PUT the zip to (on Viewfinder itself, or a presigned URL of the bucket when blobs are in
S3), ``register_asset_build`` checks the zip (zip-slip, zip bombs, sizes: replay/bundle.py) and
makes it a deployment of a commit. A deployment may also be the URL of a preview already
running (the capture address guard decides whether it may be reached) or a container image, run
by the container runtime the server is configured with. ``open_deployment`` serves any of them
for the time of a replay and yields the base URL to open.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, Literal

import httpx
from pydantic import Field
from sqlalchemy import delete, select

from viewfinder.capture.policy import Policy
from viewfinder.errors import AddressRefused, Conflict, InvalidInput, NotFound, Unavailable
from viewfinder.ids import new_id, well_formed
from viewfinder.jobs import registry
from viewfinder.replay.bundle import BundleLimits, check_zip, unpack
from viewfinder.replay.static import Rewrite, StaticServer, check_rewrites
from viewfinder.services import permissions, storage
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_sha
from viewfinder.store.models import utcnow
from viewfinder.store.recorded import Deployment, DeploymentUpload

UPLOAD_PURPOSE = "deployment-upload"
# An upload asked for and never registered is forgotten this long after its URL expired (its
# zip, no longer referenced, is then swept with other unreferenced blobs).
UPLOAD_KEPT = timedelta(hours=1)
CONTAINER_START_SECONDS = 60.0


class UploadTicket(Record):
    upload_id: str
    upload_url: str = Field(description="PUT the zip of the static build here (no key needed).")
    method: Literal["PUT"] = "PUT"
    expires_at: datetime
    max_bytes: int


class ContainerTicket(Record):
    upload_id: str
    image: str = Field(description="Tag the image with this name in the server's runtime.")
    runtime: str
    instructions: str
    expires_at: datetime


class UploadRecord(Record):
    upload_id: str
    state: Literal["pending", "uploaded", "registered"]
    bytes: int | None = None
    files: int | None = None


class DeploymentRecord(Record):
    id: str
    kind: Literal["static", "url", "container"]
    commit_sha: str
    url: str | None = Field(None, description="The preview's URL (kind url).")
    files: int | None = None
    unpacked_bytes: int | None = None
    rewrites: list[dict[str, str]] = Field(default_factory=list)
    container: dict[str, Any] | None = None
    created_at: datetime


def _limits(env: Env) -> BundleLimits:
    s = env.settings
    return BundleLimits(
        s.deploy_max_zip_bytes, s.deploy_max_unpacked_bytes, s.deploy_max_files, s.deploy_max_ratio
    )


def _record(d: Deployment) -> DeploymentRecord:
    return DeploymentRecord(
        id=d.id,
        kind=d.kind,
        commit_sha=d.commit_sha,
        url=d.url,
        files=d.files,
        unpacked_bytes=d.unpacked_bytes,
        rewrites=list(d.rewrites or []),
        container=d.container,
        created_at=d.created_at,
    )


def _new_upload(env: Env, actor: Actor, kind: str) -> DeploymentUpload:
    with env.db.write() as s:
        upload = DeploymentUpload(
            id=new_id("upl"),
            project_id=actor.project_id,
            kind=kind,
            state="pending",
            created_by=actor.key_id,
            expires_at=utcnow() + timedelta(seconds=env.settings.deploy_upload_ttl_seconds),
        )
        s.add(upload)
        s.flush()
        s.expunge(upload)
        return upload


def request_asset_upload(env: Env, actor: Actor) -> UploadTicket:
    """An upload id and the signed URL to PUT a zipped static build to. Raises Forbidden."""
    permissions.require(actor, "request_asset_upload")
    upload = _new_upload(env, actor, "asset")
    ttl = env.settings.deploy_upload_ttl_seconds
    if hasattr(env.blobs, "sign_put"):
        url = env.blobs.sign_put(f"{upload.id}.zip", ttl)
    else:
        token = env.signer.sign(UPLOAD_PURPOSE, upload.id, ttl=ttl)
        url = f"{env.settings.public_url}/api/v1/deployments/uploads/{token}"
    return UploadTicket(
        upload_id=upload.id,
        upload_url=url,
        expires_at=upload.expires_at,
        max_bytes=env.settings.deploy_max_zip_bytes,
    )


def _upload(s: Any, project_id: str | None, upload_id: str, *, lock: bool = False) -> Any:
    query = select(DeploymentUpload).where(DeploymentUpload.id == upload_id)
    if project_id is not None:
        query = query.where(DeploymentUpload.project_id == project_id)
    row = s.scalar(query.with_for_update() if lock else query) if well_formed(upload_id) else None
    if row is None:
        raise NotFound(
            f"no upload {upload_id!r} in this project: ask for one with request_asset_upload",
            upload_id=upload_id,
        )
    return row


def receive_upload(env: Env, token: str, data: bytes) -> UploadRecord:
    """Keep the zip PUT to a signed upload URL. The zip is checked first and nothing is kept
    when it is refused. Raises NotFound (a link that does not verify or has expired),
    InvalidInput and TooLarge (the zip), Conflict (already registered), QuotaExceeded."""
    try:
        upload_id = str(env.signer.unsign(UPLOAD_PURPOSE, token, what="upload link"))
    except InvalidInput as exc:
        raise NotFound(f"no such upload: {exc.message}") from None
    with env.db.read() as s:
        upload = _upload(s, None, upload_id)
        project_id, state = upload.project_id, upload.state
    if state == "registered":
        raise Conflict(
            f"upload {upload_id} is registered already: ask for a new upload for a new build",
            upload_id=upload_id,
        )
    bundle = check_zip(data, _limits(env))
    file = storage.Bytes(data, _sha256(data), "application/zip")
    claimed = storage.claim(env, project_id, [file])
    try:
        with env.db.write() as s:
            upload = _upload(s, None, upload_id, lock=True)
            if upload.state == "registered":
                raise Conflict(f"upload {upload_id} is registered already", upload_id=upload_id)
            upload.sha256, upload.state = file.sha256, "uploaded"
    except BaseException:
        storage.forget(env, claimed)
        raise
    return UploadRecord(upload_id=upload_id, state="uploaded", bytes=len(data), files=bundle.files)


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def register_asset_build(
    env: Env,
    actor: Actor,
    upload_id: str,
    commit_sha: str,
    rewrites: list[Any] | None = None,
) -> DeploymentRecord:
    """Make an uploaded zip a deployment of ``commit_sha``. Registering the same upload again
    gives the same deployment. Raises Forbidden, NotFound, Conflict (nothing uploaded yet, or
    a container upload), InvalidInput and TooLarge (the zip, the rules)."""
    permissions.require(actor, "register_asset_build")
    sha = check_sha(commit_sha)
    rules = check_rewrites(rewrites or [])
    with env.db.read() as s:
        upload = _upload(s, actor.project_id, upload_id)
        if upload.kind != "asset":
            raise Conflict(
                f"upload {upload_id} is for a container image: register it with "
                "register_container_build",
                upload_id=upload_id,
            )
        if upload.state == "registered" and upload.deployment_id:
            return _record(s.get_one(Deployment, upload.deployment_id))
        stored = upload.sha256
    if stored is None and hasattr(env.blobs, "take"):
        stored = _take_staged(env, actor, upload_id)
    if stored is None:
        raise Conflict(
            f"nothing was uploaded for {upload_id} yet: PUT the zip to the upload URL first",
            upload_id=upload_id,
        )
    bundle = check_zip(env.blobs.get(stored), _limits(env))
    with env.db.write() as s:
        upload = _upload(s, actor.project_id, upload_id, lock=True)
        if upload.state == "registered" and upload.deployment_id:
            return _record(s.get_one(Deployment, upload.deployment_id))
        deployment = Deployment(
            id=new_id("dep"),
            project_id=actor.project_id,
            kind="static",
            commit_sha=sha,
            sha256=stored,
            rewrites=[{"source": r.source, "destination": r.destination} for r in rules],
            files=bundle.files,
            unpacked_bytes=bundle.unpacked_bytes,
            created_by=actor.key_id,
        )
        s.add(deployment)
        upload.state, upload.deployment_id, upload.sha256 = "registered", deployment.id, stored
        s.flush()
        return _record(deployment)


def _take_staged(env: Env, actor: Actor, upload_id: str) -> str | None:
    """A zip PUT straight into the bucket: checked, then kept by its sha256."""
    data = env.blobs.take(f"{upload_id}.zip")  # type: ignore[attr-defined]
    if data is None:
        return None
    check_zip(data, _limits(env))
    file = storage.Bytes(data, _sha256(data), "application/zip")
    claimed = storage.claim(env, actor.project_id, [file])
    try:
        with env.db.write() as s:
            upload = _upload(s, actor.project_id, upload_id, lock=True)
            upload.sha256, upload.state = file.sha256, "uploaded"
    except BaseException:
        storage.forget(env, claimed)
        raise
    return file.sha256


def register_preview(env: Env, actor: Actor, url: str, commit_sha: str) -> DeploymentRecord:
    """A preview already running at ``url`` as a deployment of ``commit_sha``. The URL must
    pass the capture address guard (public addresses, or hosts in VIEWFINDER_CAPTURE_ALLOW).
    Raises Forbidden, InvalidInput, AddressRefused, CaptureFailed (a host that does not
    resolve)."""
    permissions.require(actor, "register_preview")
    sha = check_sha(commit_sha)
    if not isinstance(url, str) or len(url) > 2000:
        raise InvalidInput("url must be the http(s) address of the running preview")
    target = Policy.from_settings(env.settings).guard.check_url(url, what="the preview URL")
    with env.db.write() as s:
        deployment = Deployment(
            id=new_id("dep"),
            project_id=actor.project_id,
            kind="url",
            commit_sha=sha,
            url=target.url,
            rewrites=[],
            created_by=actor.key_id,
        )
        s.add(deployment)
        s.flush()
        return _record(deployment)


def _runtime(env: Env) -> str:
    """The container runtime's command, checked to answer. Raises Conflict (none configured),
    Unavailable (it does not work)."""
    runtime = env.settings.container_runtime
    if not runtime:
        # 409, not 503: waiting will not make a runtime appear; the server is set up without.
        raise Conflict(
            "this server runs no containers: no container runtime is configured. Set "
            "VIEWFINDER_CONTAINER_RUNTIME=docker on a machine where `docker info` works, or "
            "deploy a static build (viewfinder deploy DIR) or a running preview's URL instead"
        )
    found = shutil.which(runtime)
    if found is None:
        raise Unavailable(
            f"the container runtime {runtime!r} (VIEWFINDER_CONTAINER_RUNTIME) is not installed "
            "on this server: install it or unset the setting"
        )
    try:
        done = subprocess.run(
            [found, "info"], capture_output=True, text=True, timeout=20, check=False
        )
    except subprocess.TimeoutExpired:
        raise Unavailable(
            f"the container runtime {runtime!r} did not answer `info` in 20 s"
        ) from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise Unavailable(
            f"the container runtime {runtime!r} does not work: "
            f"{said[-1] if said else 'exit ' + str(done.returncode)}. Start its daemon (or "
            "fix VIEWFINDER_CONTAINER_RUNTIME), then try again"
        )
    return found


def _image_name(upload_id: str) -> str:
    return f"viewfinder-upload/{upload_id.lower()}:latest"


def request_container_upload(env: Env, actor: Actor) -> ContainerTicket:
    """Where to put a container image for a deployment: a tag in the server's runtime.
    Raises Forbidden, Conflict (no runtime configured), Unavailable (it does not work)."""
    permissions.require(actor, "request_container_upload")
    runtime = _runtime(env)
    upload = _new_upload(env, actor, "container")
    image = _image_name(upload.id)
    return ContainerTicket(
        upload_id=upload.id,
        image=image,
        runtime=runtime,
        instructions=f"On the server: `docker load < image.tar` then `docker tag IMAGE {image}` "
        "(or pull and tag it); then register_container_build with this upload id.",
        expires_at=upload.expires_at,
    )


def register_container_build(
    env: Env,
    actor: Actor,
    upload_id: str,
    commit_sha: str,
    *,
    container_port: int = 3000,
    container_env: dict[str, str] | None = None,
    health_check: str = "/",
) -> DeploymentRecord:
    """The image tagged for ``upload_id`` as a deployment. Raises Forbidden, Conflict (no
    runtime configured, no such image in it), Unavailable (it does not work), NotFound,
    InvalidInput."""
    permissions.require(actor, "register_container_build")
    sha = check_sha(commit_sha)
    if not isinstance(container_port, int) or not 1 <= container_port <= 65535:
        raise InvalidInput("containerPort must be a port number, 1 to 65535")
    variables = container_env or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in variables.items()):
        raise InvalidInput("containerEnv must map names to string values")
    if (
        not isinstance(health_check, str)
        or not health_check.startswith("/")
        or len(health_check) > 500
    ):
        raise InvalidInput("containerHealthCheckEndpoint must be a path starting with /")
    runtime = _runtime(env)
    with env.db.read() as s:
        upload = _upload(s, actor.project_id, upload_id)
        if upload.kind != "container":
            raise Conflict(f"upload {upload_id} is for a static build: use register_asset_build")
    image = _image_name(upload_id)
    found = subprocess.run(
        [runtime, "image", "inspect", image], capture_output=True, timeout=20, check=False
    )
    if found.returncode != 0:
        raise Conflict(f"no image {image} in the server's runtime: tag the image first")
    with env.db.write() as s:
        upload = _upload(s, actor.project_id, upload_id, lock=True)
        deployment = Deployment(
            id=new_id("dep"),
            project_id=actor.project_id,
            kind="container",
            commit_sha=sha,
            rewrites=[],
            container={
                "image": image,
                "port": container_port,
                "env": variables,
                "healthCheck": health_check,
            },
            created_by=actor.key_id,
        )
        s.add(deployment)
        upload.state, upload.deployment_id = "registered", deployment.id
        s.flush()
        return _record(deployment)


@short_read
def get_deployment(env: Env, actor: Actor, deployment_id: str) -> DeploymentRecord:
    """Raises NotFound."""
    permissions.require(actor, "get_deployment")
    with env.db.read() as s:
        row = s.get(Deployment, deployment_id) if well_formed(deployment_id) else None
        if row is None or row.project_id != actor.project_id:
            raise NotFound(f"no deployment {deployment_id!r}", deployment_id=deployment_id)
        return _record(row)


@short_read
def list_deployments(
    env: Env, actor: Actor, *, commit_sha: str | None = None, limit: int = 50
) -> list[DeploymentRecord]:
    """The project's deployments (of one commit), newest first."""
    permissions.require(actor, "list_deployments")
    if not isinstance(limit, int) or not 1 <= limit <= 500:
        raise InvalidInput("limit must be 1 to 500")
    query = select(Deployment).where(Deployment.project_id == actor.project_id)
    if commit_sha is not None:
        query = query.where(Deployment.commit_sha == check_sha(commit_sha))
    with env.db.read() as s:
        rows = s.scalars(query.order_by(Deployment.id.desc()).limit(limit))
        return [_record(d) for d in rows]


def latest_for_commit(env: Env, actor: Actor, commit_sha: str) -> DeploymentRecord:
    """The newest deployment of a commit. Raises NotFound."""
    found = list_deployments(env, actor, commit_sha=commit_sha, limit=1)
    if not found:
        raise NotFound(
            f"no deployment of commit {commit_sha}: upload its build first (viewfinder deploy)",
            commit_sha=commit_sha,
        )
    return found[0]


@contextlib.contextmanager
def open_deployment(env: Env, deployment_id: str) -> Iterator[str]:
    """Serve a deployment while the block runs and yield its base URL (no trailing slash): a
    static build from 127.0.0.1 (unpacked once into the data directory), a preview's own URL,
    a container started for the block. For the replay engine, which runs without a caller's
    key: the deployment is looked up by id alone. A preview's address is checked again first.
    Raises NotFound, Unavailable, AddressRefused, CaptureFailed."""
    with env.db.read() as s:
        row = s.get(Deployment, deployment_id) if well_formed(deployment_id) else None
        if row is None:
            raise NotFound(f"no deployment {deployment_id!r}", deployment_id=deployment_id)
        kind, sha256, url, rewrites, container = (
            row.kind,
            row.sha256,
            row.url,
            list(row.rewrites or []),
            row.container,
        )
    if kind == "url":
        assert url is not None
        _check_again(env, url)
        yield url.rstrip("/")
    elif kind == "static":
        assert sha256 is not None
        root = env.settings.data_dir / "deployments" / sha256
        if not root.is_dir():
            unpack(env.blobs.get(sha256), root, _limits(env))
        rules = [Rewrite(r["source"], r["destination"]) for r in rewrites]
        with StaticServer(root, rules) as server:
            yield server.url
    else:
        assert container is not None
        with _running_container(env, container) as base:
            yield base


def _check_again(env: Env, url: str) -> None:
    """A preview's address passed the guard when it was registered; its name may resolve
    elsewhere since (DNS rebinding), or the allow-list may have changed: each replay checks
    it again, as a capture would. Raises AddressRefused, CaptureFailed."""
    try:
        Policy.from_settings(env.settings).guard.check_url(url, what="the preview URL")
    except AddressRefused as exc:
        raise AddressRefused(
            f"the preview URL was checked again before replaying on it and is refused: "
            f"{exc.message}",
            **exc.details,
        ) from None


@contextlib.contextmanager
def _running_container(env: Env, spec: dict[str, Any]) -> Iterator[str]:
    runtime = _runtime(env)
    command = [runtime, "run", "-d", "--rm", "-p", f"127.0.0.1::{spec['port']}"]
    for name, value in spec["env"].items():
        command += ["-e", f"{name}={value}"]
    started = subprocess.run(
        [*command, spec["image"]], capture_output=True, text=True, timeout=60, check=False
    )
    if started.returncode != 0:
        raise Unavailable(f"the container did not start: {started.stderr.strip()[-300:]}")
    container_id = started.stdout.strip()
    try:
        port = subprocess.run(
            [runtime, "port", container_id, str(spec["port"])],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.split("\n")[0]
        base = f"http://{port.strip()}"
        _wait_healthy(base + spec["healthCheck"])
        yield base
    finally:
        subprocess.run(
            [runtime, "rm", "-f", container_id], capture_output=True, timeout=30, check=False
        )


def _wait_healthy(url: str) -> None:
    deadline = time.monotonic() + CONTAINER_START_SECONDS
    while True:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise Unavailable(
                f"the container did not answer {url} within {CONTAINER_START_SECONDS:.0f} s"
            )
        time.sleep(0.25)


def expire_uploads(env: Env) -> int:
    """Forget uploads never registered whose URL expired over UPLOAD_KEPT ago; how many."""
    with env.db.write() as s:
        done = s.execute(
            delete(DeploymentUpload).where(
                DeploymentUpload.state != "registered",
                DeploymentUpload.expires_at < utcnow() - UPLOAD_KEPT,
            )
        )
        return int(done.rowcount or 0)  # type: ignore[attr-defined]


registry.register_periodic(registry.Periodic("expire-uploads", 600.0, expire_uploads))
