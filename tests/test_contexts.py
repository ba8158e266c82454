"""Delivery contexts: their images expire on close or after a TTL, as their policy says."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from tests.conftest import Keys, shot
from viewfinder.errors import InvalidInput
from viewfinder.services import contexts, images, pushes
from viewfinder.services.env import Env
from viewfinder.store.models import Image as ImageRow
from viewfinder.store.models import utcnow


def test_a_ttl_policy_expires_old_images_and_on_close_expires_at_close(
    env: Env, keys: Keys
) -> None:
    policy = contexts.set_policy(
        env, keys.ci, context_key="nightly", expire_policy="ttl", ttl_seconds=3600
    )
    assert (policy.expire_policy, policy.ttl_seconds) == ("ttl", 3600)
    old = pushes.push(env, keys.ci, shot(), name="old", context_key="nightly")
    fresh = pushes.push(env, keys.ci, shot(), name="fresh", context_key="nightly")
    with env.db.write() as s:
        s.execute(
            update(ImageRow)
            .where(ImageRow.id == old.image_id)
            .values(created_at=utcnow() - timedelta(hours=2))
        )
    assert contexts.expire_by_ttl(env) == 1
    assert images.get_image(env, keys.ci, old.image_id).expired
    assert not images.get_image(env, keys.ci, fresh.image_id).expired
    with pytest.raises(InvalidInput, match="ttl_seconds is required"):
        contexts.set_policy(env, keys.ci, context_key="x", expire_policy="ttl")
