"""Storage: the quota is checked before any byte is written, a failed upload leaves no blob
behind, and blobs no row references are swept once nothing has claimed them for a while."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from tests.conftest import Keys, make_build, shot
from viewfinder.errors import Conflict, QuotaExceeded
from viewfinder.services import builds, images, pushes, storage
from viewfinder.services.env import Env
from viewfinder.store.models import Blob, utcnow


def kept(env: Env, data: bytes) -> tuple[bool, bool]:
    """Whether the bytes have a blob row, and whether the store has them."""
    sha = hashlib.sha256(data).hexdigest()
    with env.db.read() as s:
        row = s.get(Blob, sha) is not None
    return row, env.blobs.exists(sha)


def test_an_upload_the_quota_refuses_writes_nothing(env: Env, keys: Keys) -> None:
    pushes.push(env, keys.ci, shot(), name="a", context_key="x")
    images.set_quota(env, keys.admin, images.usage(env, keys.ci).used_bytes + 10)
    big = shot(box=(0, 0, 30, 30))
    with pytest.raises(QuotaExceeded, match="storage quota reached") as refused:
        pushes.push(env, keys.ci, big, name="b", context_key="x")
    assert refused.value.details["quota_bytes"] > 0
    assert kept(env, big) == (False, False)
    build = builds.create_build(env, keys.ci, commit_sha="abcd")
    with pytest.raises(QuotaExceeded):
        builds.add_story(env, keys.ci, build.id, name="home", variant=None, data=big)
    assert kept(env, big) == (False, False)


def test_an_upload_refused_after_its_bytes_were_written_takes_them_back(
    env: Env, keys: Keys
) -> None:
    build = builds.create_build(env, keys.ci, commit_sha="abcd")
    builds.add_story(env, keys.ci, build.id, name="home", variant=None, data=shot())
    other = shot(box=(1, 1, 4, 4))
    with pytest.raises(Conflict, match="already has a story 'home'"):
        builds.add_story(env, keys.ci, build.id, name="home", variant=None, data=other)
    assert kept(env, other) == (False, False)
    assert kept(env, shot()) == (True, True), "the story's own bytes stay"


def test_bytes_no_row_references_are_swept_after_the_grace_period(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()})
    make_build(env, keys.ci, "bbb2", {"home": shot(box=(2, 2, 9, 9))})
    loose = shot(box=(5, 5, 6, 6))
    claim = storage.claim(env, keys.ci.project_id, [images.check_png(env, loose)])
    assert kept(env, loose) == (True, True)
    assert storage.sweep(env) == 0, "claimed a moment ago: maybe an upload in flight"
    with env.db.write() as s:
        s.execute(update(Blob).values(touched_at=utcnow() - timedelta(hours=2)))
    assert storage.sweep(env) == 1
    assert kept(env, loose) == (False, False)
    with env.db.read() as s:
        left = set(s.scalars(select(Blob.media_type)))
    assert left == {"image/png"}, "screenshots and the diff image stay"
    assert kept(env, shot()) == (True, True)
    storage.forget(env, claim)  # forgetting what was swept already is harmless
    assert storage.sweep(env) == 0


def test_over_quota_uploads_are_refused_and_nothing_is_stored(env: Env, keys: Keys) -> None:
    pushes.push(env, keys.ci, shot(), name="a", context_key="x")
    used = images.usage(env, keys.ci).used_bytes
    images.set_quota(env, keys.admin, used + 10)
    with pytest.raises(QuotaExceeded, match="storage quota reached"):
        pushes.push(env, keys.ci, shot(box=(0, 0, 9, 9)), name="b", context_key="x")
    assert images.usage(env, keys.ci).images == 1
    # The same bytes again cost nothing and are accepted.
    assert pushes.push(env, keys.ci, shot(), name="c", context_key="x").image_id
