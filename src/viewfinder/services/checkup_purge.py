"""Removing design checkups whose links expired long ago, so the sweep of unreferenced blobs
(services/storage.py) can collect their screenshots, after-images, pass diffs and DOM snapshots.

Those blobs are referenced by rows (store/references.py: images, comparisons, checkup shots),
and an image's row names its blob by a foreign key, so the bytes can only go once the rows
that name them do. A checkup is removed whole, every pass of it at once: a later pass shows
the marks, after-images and screenshots of the passes before it, so nothing goes while any
pass's link still works. An expired link still answers get_review with status ``expired``
for KEPT_AFTER_EXPIRY (the reference's ``next_action: expired`` must be seen to be followed);
after that the checkup, its marks and its images are deleted and the sweep takes the bytes.
The credits it spent stay counted."""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from viewfinder.jobs import registry
from viewfinder.services import checkup_shots
from viewfinder.services.env import Env
from viewfinder.store.models import (
    Checkup,
    CheckupPin,
    CheckupShot,
    Comparison,
    Image,
    Thread,
    WebhookDelivery,
    utcnow,
)

log = logging.getLogger("viewfinder.checkups")
KEPT_AFTER_EXPIRY = timedelta(days=30)
PURGE_EVERY = 3600.0
PURGE_BATCH = 50  # checkups (whole chains) removed a run


def _purge_chain(s: Session, root_id: str) -> int:
    ids = list(s.scalars(select(Checkup.id).where(Checkup.root_id == root_id)))
    rows = s.execute(
        select(CheckupShot.id, CheckupShot.image_id).where(CheckupShot.checkup_id.in_(ids))
    ).all()
    shots = [image_id for _, image_id in rows]
    after = [
        i
        for i in s.scalars(select(CheckupPin.after_image_id).where(CheckupPin.checkup_id.in_(ids)))
        if i
    ]
    images = list(
        s.scalars(select(Image.id).where(Image.id.in_(shots + after), Image.source == "checkup"))
    )
    # Marks, hints and their replies: the pins' threads, and anything else said on the shots.
    threads = list(s.scalars(select(CheckupPin.thread_id).where(CheckupPin.checkup_id.in_(ids))))
    threads += s.scalars(
        select(Thread.id).where(
            Thread.subject_type == "image",
            Thread.subject_id.in_(images),
            Thread.parent_id.is_(None),
        )
    )
    s.execute(delete(CheckupPin).where(CheckupPin.checkup_id.in_(ids)))
    s.execute(delete(Thread).where(Thread.parent_id.in_(threads)))
    s.execute(delete(Thread).where(Thread.id.in_(threads)))
    s.execute(delete(WebhookDelivery).where(WebhookDelivery.checkup_id.in_(ids)))
    s.execute(delete(CheckupShot).where(CheckupShot.checkup_id.in_(ids)))
    s.execute(
        delete(Comparison).where(
            Comparison.owner_kind == checkup_shots.OWNER,
            Comparison.owner_id.in_([shot_id for shot_id, _ in rows]),
        )
    )
    s.execute(delete(Image).where(Image.id.in_(images)))
    # Later passes name earlier ones: unlink them, then remove them all.
    s.execute(update(Checkup).where(Checkup.id.in_(ids)).values(parent_id=None))
    s.execute(delete(Checkup).where(Checkup.id.in_(ids)))
    return len(ids)


def purge_expired(
    env: Env, *, kept: timedelta = KEPT_AFTER_EXPIRY, limit: int = PURGE_BATCH
) -> int:
    """Delete the checkups (whole chains of passes) whose every link expired over ``kept``
    ago, so their blobs become unreferenced. Returns how many passes went."""
    before = utcnow() - kept
    with env.db.read() as s:
        roots = list(
            s.scalars(
                select(Checkup.root_id)
                .group_by(Checkup.root_id)
                .having(func.max(Checkup.expires_at) < before)
                .order_by(Checkup.root_id)
                .limit(limit)
            )
        )
    removed = 0
    for root in roots:
        with env.db.write() as s:
            # Checked again in the write: a pass opened since keeps the chain.
            latest = s.scalar(select(func.max(Checkup.expires_at)).where(Checkup.root_id == root))
            if latest is not None and latest < before:
                removed += _purge_chain(s, root)
    if removed:
        log.info("removed %d expired checkup pass(es); the sweep takes their images", removed)
    return removed


registry.register_periodic(registry.Periodic("purge-checkups", PURGE_EVERY, purge_expired))
