"""Stored images: their delivery links, and expiry."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, shot
from viewfinder.errors import NotFound
from viewfinder.services import images, pushes
from viewfinder.services.env import Env


def test_expiring_an_image_stops_its_delivery(env: Env, keys: Keys) -> None:
    result = pushes.push(env, keys.ci, shot(), name="home", context_key="docs")
    assert images.expire_image(env, keys.ci, result.image_id).expired
    assert images.expire_image(env, keys.ci, result.image_id).expired  # idempotent
    with pytest.raises(NotFound):
        images.delivered_image(env, result.view_url.rsplit("/", 1)[1])
