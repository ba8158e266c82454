"""Checkup images and the sweep of unreferenced blobs, on the real store (database and blob
directory): a checkup's screenshots, after-images, pass diffs and DOM snapshots are kept while
any pass of it can be read, and once its links expired long enough ago the purge removes the
checkup and the sweep takes its bytes, never those of a live checkup."""

from __future__ import annotations

import base64
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from tests.capture_site import WIDE_EMAIL
from tests.conftest import Keys, drain, shot
from viewfinder.errors import NotFound
from viewfinder.services import checkup_marks, checkup_purge, checkups, storage
from viewfinder.services.checkups import NewReview
from viewfinder.services.env import Env
from viewfinder.store.models import Checkup, CheckupPin, CheckupShot, Comparison, Image, utcnow

LIVE = shot(box=(10, 10, 50, 30), size=(200, 100))
OLD = shot(box=(20, 20, 60, 40), size=(200, 100))
OLD_FIXED = shot(box=(20, 20, 60, 40), size=(200, 100), fill=(120, 120, 120))
AFTER = shot(box=(0, 0, 30, 30), size=(60, 60), fill=(0, 120, 0))
RECENT = shot(box=(30, 30, 90, 60), size=(200, 100))


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def images(env: Env, keys: Keys, png: bytes, **fields: object) -> str:
    new = NewReview(title="Checkout", images=[data_url(png)], **fields)  # type: ignore[arg-type]
    return checkups.create_review(env, keys.agent, new).id


def blobs_of(env: Env, *review_ids: str) -> dict[str, set[str]]:
    """Every blob the reviews keep, by what it is."""
    with env.db.read() as s:
        rows = list(s.scalars(select(CheckupShot).where(CheckupShot.checkup_id.in_(review_ids))))
        after = [
            p.after_image_id
            for p in s.scalars(select(CheckupPin).where(CheckupPin.checkup_id.in_(review_ids)))
            if p.after_image_id
        ]
        shas = {
            i.id: i.sha256
            for i in s.scalars(
                select(Image).where(Image.id.in_([r.image_id for r in rows] + after))
            )
        }
        diffs = {
            c.diff_sha256
            for c in s.scalars(
                select(Comparison).where(
                    Comparison.id.in_([r.comparison_id for r in rows if r.comparison_id])
                )
            )
            if c.diff_sha256
        }
    return {
        "screenshots": {shas[r.image_id] for r in rows},
        "after images": {shas[i] for i in after},
        "pass diffs": diffs,
        "dom snapshots": {sha for r in rows for sha in (r.dom_sha256, r.boxes_sha256) if sha},
    }


def expire(env: Env, review_ids: list[str], ago: timedelta) -> None:
    with env.db.write() as s:
        s.execute(
            update(Checkup).where(Checkup.id.in_(review_ids)).values(expires_at=utcnow() - ago)
        )


def test_expired_checkups_are_removed_and_their_blobs_swept_live_ones_kept(
    env: Env, keys: Keys
) -> None:
    live = images(env, keys, LIVE)
    # An old loop of two passes: a mark resolved with an after-image, then the next pass,
    # whose screenshot is compared with the first one's.
    first = images(env, keys, OLD)
    token = checkups.get_review(env, keys.agent, first).review_url.rsplit("/r/", 1)[1]
    mark = checkup_marks.add_mark(env, token, screenshot_index=0, body="Too dark")
    checkup_marks.decide(env, token, "changes_requested")
    checkup_marks.resolve_marks(
        env, keys.agent, first, [{"id": mark.id, "after_image": data_url(AFTER)}]
    )
    second = images(env, keys, OLD_FIXED, parent_id=first)
    email = checkups.create_review(
        env, keys.agent, NewReview(title="Newsletter", html=WIDE_EMAIL)
    ).id
    recent = images(env, keys, RECENT)
    drain(env)

    old = blobs_of(env, first, second, email)
    kept = blobs_of(env, live, recent)
    assert all(old.values()), old  # each kind is there to be swept
    old_shas = set().union(*old.values())
    kept_shas = set().union(*kept.values())
    assert not old_shas & kept_shas

    # Expired, but within the time an expired review is still read: nothing goes.
    expire(env, [first, second, email], timedelta(days=2))
    expire(env, [recent], timedelta(days=2))
    assert checkup_purge.purge_expired(env) == 0
    storage.sweep(env, grace=timedelta(0))
    assert all(env.blobs.exists(sha) for sha in old_shas | kept_shas)
    assert checkups.get_review(env, keys.agent, first).status == "expired"

    # A chain stays whole while one of its passes can still be read.
    expire(env, [first, email], checkup_purge.KEPT_AFTER_EXPIRY + timedelta(days=1))
    assert checkup_purge.purge_expired(env) == 1  # the email; the loop's pass 2 holds pass 1
    expire(env, [second], checkup_purge.KEPT_AFTER_EXPIRY + timedelta(days=1))
    assert checkup_purge.purge_expired(env) == 2

    swept = storage.sweep(env, grace=timedelta(0))
    assert swept >= len(old_shas)
    for what, shas in old.items():
        assert not any(env.blobs.exists(sha) for sha in shas), what
    for what, shas in kept.items():
        assert all(env.blobs.exists(sha) for sha in shas), what
    for gone in (first, second, email):
        with pytest.raises(NotFound):
            checkups.get_review(env, keys.agent, gone)
    assert checkups.get_review(env, keys.agent, recent).status == "expired"
    alive = checkups.get_review(env, keys.agent, live)
    assert alive.status == "pending" and len(alive.screenshots) == 1
    assert checkup_purge.purge_expired(env) == 0


def test_the_sweep_alone_never_takes_a_checkups_blobs(env: Env, keys: Keys) -> None:
    review = checkups.create_review(env, keys.agent, NewReview(title="Mail", html=WIDE_EMAIL)).id
    drain(env)
    kept = blobs_of(env, review)
    assert kept["screenshots"] and kept["dom snapshots"]
    storage.sweep(env, grace=timedelta(0))
    assert all(env.blobs.exists(sha) for shas in kept.values() for sha in shas)


def test_the_workers_run_the_purge() -> None:
    # In a fresh interpreter: here the purge is imported already, so it is registered anyway.
    program = (
        "from viewfinder.jobs import registry\n"
        "from viewfinder.services import background\n"
        "background.register()\n"
        "print(registry.PERIODIC['purge-checkups'].run.__qualname__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "purge_expired"
