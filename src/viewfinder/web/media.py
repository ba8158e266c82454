"""Images for the dashboard, same-origin and only for the signed-in person's project: pixel
pages of a diff's images, a story's image, a stored image, and small thumbnails.

Every request goes through a scoped service call first (another project's id reads as not
found); only then may a cached thumbnail answer. Thumbnails are made once per image and kept
in memory, so a build page of 500 stories costs one small WebP per story actually scrolled to.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from viewfinder.imaging import thumbs
from viewfinder.plumbing.offloop import call
from viewfinder.services import builds, images, renders
from viewfinder.services.env import Actor, Env
from viewfinder.web.sessions import env_of, viewer

router = APIRouter(prefix="/ui", include_in_schema=False)

THUMB_WIDTH = 320
THUMB_HEIGHT = 200
CACHE_BYTES = 64 * 1024 * 1024
# What a diff or image id names never changes, so browsers may keep it.
IMMUTABLE = {
    "Cache-Control": "private, max-age=86400, immutable",
    "X-Content-Type-Options": "nosniff",
}


class ThumbCache:
    """Thumbnails by a key naming immutable content, least recently used out first."""

    def __init__(self, budget: int) -> None:
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._budget = budget
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, data: bytes) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = data
            self._size += len(data)
            while self._size > self._budget and self._items:
                _, old = self._items.popitem(last=False)
                self._size -= len(old)


_cache = ThumbCache(CACHE_BYTES)


def thumbnail(data: bytes) -> bytes:
    return thumbs.thumbnail(data, THUMB_WIDTH, THUMB_HEIGHT)


def _story_thumb(env: Env, actor: Actor, story_id: str) -> bytes:
    story = builds.get_story(env, actor, story_id)  # the scope check, before any cache
    key = f"story:{story.id}:{story.state}"
    cached = _cache.get(key)
    if cached is not None:
        return cached
    if story.state == "changed" and story.diff_id and story.urls.diff:
        source = renders.render_diff(env, actor, story.diff_id, "diff")[0].png
    else:
        source = renders.story_image(env, actor, story.id).png
    made = thumbnail(source)
    _cache.put(key, made)
    return made


def _image_thumb(env: Env, actor: Actor, image_id: str) -> bytes:
    record = images.get_image(env, actor, image_id)
    key = f"sha:{record.sha256}"
    cached = _cache.get(key)
    if cached is None:
        cached = thumbnail(env.blobs.get(record.sha256))
        _cache.put(key, cached)
    return cached


def _image(env: Env, actor: Actor, image_id: str) -> tuple[bytes, str]:
    record = images.get_image(env, actor, image_id)
    return env.blobs.get(record.sha256), record.media_type


@router.get("/thumbs/stories/{story_id}")
async def story_thumb(request: Request, story_id: str) -> Response:
    person = await viewer(request)
    data = await call(_story_thumb, env_of(request), person.actor, story_id)
    # Pages link a story's thumbnail with its state in the query, so a story that finished
    # comparing gets a new URL: what one URL answers never changes.
    return Response(data, media_type="image/webp", headers=IMMUTABLE)


@router.get("/thumbs/images/{image_id}")
async def image_thumb(request: Request, image_id: str) -> Response:
    person = await viewer(request)
    data = await call(_image_thumb, env_of(request), person.actor, image_id)
    return Response(data, media_type="image/webp", headers=IMMUTABLE)


@router.get("/img/images/{image_id}")
async def image_file(request: Request, image_id: str) -> Response:
    person = await viewer(request)
    data, media = await call(_image, env_of(request), person.actor, image_id)
    return Response(data, media_type=media, headers=IMMUTABLE)


@router.get("/img/diffs/{diff_id}/{which}")
async def diff_image(
    request: Request,
    diff_id: str,
    which: Literal["diff", "before", "after"],
    offset: Annotated[int | None, Query(ge=0)] = None,
    height: Annotated[int | None, Query(ge=1, le=4096)] = None,
) -> Response:
    person = await viewer(request)
    rendered = await call(
        renders.render_diff,
        env_of(request),
        person.actor,
        diff_id,
        which,
        offset=offset,
        height=height,
    )
    return Response(rendered[0].png, media_type="image/png", headers=IMMUTABLE)


@router.get("/img/stories/{story_id}")
async def story_file(request: Request, story_id: str) -> Response:
    person = await viewer(request)
    rendered = await call(renders.story_image, env_of(request), person.actor, story_id)
    return Response(rendered.png, media_type="image/png", headers=IMMUTABLE)
