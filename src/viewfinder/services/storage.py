"""Storage: a project's quota, and the life of blobs. An upload claims its blobs first (the
quota is checked then, so a refused upload writes nothing), then writes their bytes, then the
rows that reference them. Blobs no row references any more are swept by the workers, after a
grace period that keeps any upload in flight safe (store/references.py says who references).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from viewfinder.errors import QuotaExceeded
from viewfinder.jobs import registry
from viewfinder.services.env import Env
from viewfinder.store import references
from viewfinder.store.models import Baseline, Blob, Comparison, Image, Project, utcnow
from viewfinder.store.recorded import Deployment, DeploymentUpload

log = logging.getLogger("viewfinder.storage")
GRACE = timedelta(hours=1)  # an unreferenced blob younger than this may belong to an upload
SWEEP_EVERY = 600.0  # seconds between sweeps
SWEEP_BATCH = 500


@dataclass(frozen=True)
class Bytes:
    """A file to keep: its bytes, digest and media type."""

    data: bytes
    sha256: str
    media_type: str


def usage_bytes(s: Session, project_id: str) -> int:
    """Bytes this project keeps: each distinct blob of its live images, baselines, diffs and
    deployments' zips (uploaded or registered)."""
    live = select(Image.sha256).where(Image.project_id == project_id, Image.expired_at.is_(None))
    kept = (
        select(Image.sha256)
        .join(Baseline, Baseline.image_id == Image.id)
        .where(Baseline.project_id == project_id, Baseline.ended_at.is_(None))
    )
    diffs = select(Comparison.diff_sha256.label("sha256")).where(
        Comparison.project_id == project_id, Comparison.diff_sha256.is_not(None)
    )
    builds = select(Deployment.sha256.label("sha256")).where(
        Deployment.project_id == project_id, Deployment.sha256.is_not(None)
    )
    uploads = select(DeploymentUpload.sha256.label("sha256")).where(
        DeploymentUpload.project_id == project_id, DeploymentUpload.sha256.is_not(None)
    )
    shas = live.union(kept, diffs, builds, uploads).subquery()
    total = s.scalar(
        select(func.coalesce(func.sum(Blob.size), 0)).join(shas, shas.c.sha256 == Blob.sha256)
    )
    return int(total or 0)


def _require_room(s: Session, project_id: str, files: list[Bytes]) -> None:
    project = s.get(Project, project_id)
    if project is None or project.quota_bytes is None:
        return
    shas = {f.sha256 for f in files}
    owned = set(
        s.scalars(
            select(Image.sha256).where(Image.project_id == project_id, Image.sha256.in_(shas))
        )
    )
    # Bytes this project stores already cost nothing more.
    needed = sum(
        len(f.data) for f in {f.sha256: f for f in files if f.sha256 not in owned}.values()
    )
    if not needed:
        return
    used = usage_bytes(s, project_id)
    if used + needed > project.quota_bytes:
        raise QuotaExceeded(
            f"storage quota reached: {used:,} of {project.quota_bytes:,} bytes used, this upload "
            f"needs {needed:,}. Delete baselines that are no longer used, expire old images or "
            "close finished PR contexts, or ask an admin to raise the quota.",
            used_bytes=used,
            quota_bytes=project.quota_bytes,
            needed_bytes=needed,
        )


def _stale(s: Session, files: list[Bytes], now: datetime) -> list[Bytes]:
    """The files whose blob rows are missing or were last claimed over half a grace ago (a
    recent claim keeps a blob from the sweep long enough for the upload that needs it)."""
    distinct = {f.sha256: f for f in files}
    fresh = set(
        s.scalars(
            select(Blob.sha256).where(
                Blob.sha256.in_(list(distinct)), Blob.touched_at >= now - GRACE / 2
            )
        )
    )
    return [f for sha, f in distinct.items() if sha not in fresh]


def _touch(s: Session, env: Env, files: list[Bytes], now: datetime) -> None:
    """Insert the blobs' rows, or mark existing ones as just claimed."""
    dialect = sqlite if env.db.is_sqlite else postgresql
    statement = dialect.insert(Blob)
    statement = statement.on_conflict_do_update(
        index_elements=[Blob.sha256], set_={"touched_at": statement.excluded.touched_at}
    )
    rows = [
        {"sha256": f.sha256, "size": len(f.data), "media_type": f.media_type, "touched_at": now}
        for f in files
    ]
    s.execute(statement, rows)


@dataclass(frozen=True)
class Claim:
    """Blobs an upload claimed (wrote rows for, or touched): forgotten again if the upload
    fails after writing them."""

    shas: frozenset[str]
    at: datetime


def claim(env: Env, project_id: str | None, files: Iterable[Bytes]) -> Claim:
    """Check the project's quota (when one is given) and claim the blobs, then write their
    bytes. Nothing is written when the quota refuses. Raises QuotaExceeded."""
    listed = list(files)
    now = utcnow()
    with env.db.read() as s:
        if project_id is not None:
            _require_room(s, project_id, listed)
        stale = _stale(s, listed, now)
    if stale:
        with env.db.write() as s:
            _touch(s, env, stale, now)
    for file in {f.sha256: f for f in listed}.values():
        env.blobs.put(file.data, file.sha256)
    return Claim(frozenset(f.sha256 for f in stale), now)


def forget(env: Env, claimed: Claim) -> None:
    """After a failed upload: remove what it claimed at once, unless another upload claimed the
    same bytes since or a row references them. Never raises (the upload's error matters)."""
    try:
        for sha in sorted(claimed.shas):
            _sweep_one(env, sha, before=claimed.at + timedelta(microseconds=1))
    except Exception:
        log.exception("could not forget the blobs of a failed upload; the sweep will")


def _sweep_one(env: Env, sha: str, *, before: datetime) -> bool:
    with env.db.write() as s:
        if not references.still_unreferenced(s, sha, before):
            return False
        env.blobs.delete(sha)  # bytes first: a crash here leaves a row the next sweep finds
        s.execute(delete(Blob).where(Blob.sha256 == sha))
        return True


def sweep(env: Env, *, grace: timedelta = GRACE, limit: int = SWEEP_BATCH) -> int:
    """Delete blobs no row references and nothing claimed within ``grace``. Returns how many."""
    before = utcnow() - grace
    with env.db.read() as s:
        candidates = list(s.scalars(references.unreferenced(before, limit)))
    swept = sum(_sweep_one(env, sha, before=before) for sha in candidates)
    if swept:
        log.info("swept %d unreferenced blob(s)", swept)
    return swept


registry.register_periodic(registry.Periodic("sweep-blobs", SWEEP_EVERY, sweep))
