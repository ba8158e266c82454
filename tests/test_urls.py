"""Signed, expiring links to stored files."""

from __future__ import annotations

import dataclasses
import time

import pytest

from tests.conftest import Keys, shot
from viewfinder.errors import NotFound
from viewfinder.services import (
    images,
    pushes,
    urls,
)
from viewfinder.services.env import Env
from viewfinder.services.signing import Signer


def test_signed_links_serve_their_image_until_they_expire(env: Env, keys: Keys) -> None:
    result = pushes.push(env, keys.ci, shot(), name="a", context_key="x", compare=True)
    assert result.diff is not None and result.diff.urls.candidate
    token = result.diff.urls.candidate.rsplit("/", 1)[1]
    assert urls.open_file(env, token) == shot()
    with pytest.raises(NotFound, match="no such image: invalid image link"):
        urls.open_file(env, token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1])
    now = [time.time()]
    timed = dataclasses.replace(env, signer=Signer("test", clock=lambda: now[0]))
    short = urls.file_url(timed, images.get_image(env, keys.ci, result.image_id).sha256, ttl=60)
    assert urls.open_file(timed, short.rsplit("/", 1)[1]) == shot()
    now[0] += 61
    with pytest.raises(NotFound, match="has expired"):
        urls.open_file(timed, short.rsplit("/", 1)[1])
