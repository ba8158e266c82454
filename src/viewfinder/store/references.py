"""Who references a blob. A blob's bytes are kept while a row names its sha256 in one of the
columns below; a blob no row names, and that nothing has touched for a while (an upload in
flight touches its blobs before it writes them), is swept: its bytes, then its row.

Every table that keeps blobs adds its column here, or its bytes would be swept."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Select, exists, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from viewfinder.store.models import Blob, CheckupShot, Comparison, Image
from viewfinder.store.recorded import Deployment, DeploymentUpload

REFERENCES: list[InstrumentedAttribute[str] | InstrumentedAttribute[str | None]] = [
    Image.sha256,
    Comparison.diff_sha256,
    Deployment.sha256,
    DeploymentUpload.sha256,
    CheckupShot.boxes_sha256,
    CheckupShot.dom_sha256,
]


def _unreferenced() -> list[object]:
    return [~exists().where(column == Blob.sha256) for column in REFERENCES]


def unreferenced(before: datetime, limit: int) -> Select[str]:
    """Blobs no row references that were last touched before ``before``, oldest first."""
    return (
        select(Blob.sha256)
        .where(Blob.touched_at < before, *_unreferenced())  # type: ignore[arg-type]
        .order_by(Blob.touched_at)
        .limit(limit)
    )


def still_unreferenced(s: Session, sha256: str, before: datetime) -> bool:
    """Whether the blob may still be swept, checked under a lock on its row."""
    query = select(Blob.sha256).where(Blob.sha256 == sha256, Blob.touched_at < before)
    query = query.where(*_unreferenced())  # type: ignore[arg-type]
    return s.scalar(query.with_for_update(skip_locked=True)) is not None
