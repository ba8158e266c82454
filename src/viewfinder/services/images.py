"""Uploaded images: checks on names and files, storage (blob first, then rows), delivery URLs,
expiry and the per-project storage quota."""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from PIL import Image as PILImage
from PIL import UnidentifiedImageError
from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from viewfinder.errors import InvalidImage, InvalidInput, NotFound
from viewfinder.ids import new_id, well_formed
from viewfinder.imaging import Limits, read_header, validate
from viewfinder.imaging.png import SIGNATURE
from viewfinder.services import permissions, scoping, storage, urls
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    Record,
)
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_text, markdown_text
from viewfinder.store.models import Baseline, Blob, Image, Project, utcnow


class ImageRecord(Record):
    id: str
    name: str
    variant: str
    width: int | None
    height: int | None
    scale: float | None = Field(
        description="The device scale it was taken at (device px per CSS px), when given."
    )
    size: int
    media_type: str
    sha256: str
    build_id: str | None
    context_id: str | None
    commit_sha: str | None
    tags: list[str]
    created_at: datetime
    expired: bool
    expired_at: datetime | None
    view_url: str | None
    markdown: str | None


class UsageRecord(Record):
    project_id: str
    used_bytes: int
    quota_bytes: int | None
    images: int
    baselines: int


NAME_MAX = 200
SCALE_HELP = (
    "The device scale the screenshot was taken at (device px per CSS px: 3 on most phones); "
    "above 2 the change analysis allows for glyphs drawn further off. Unknown, 1 or 2."
)
VIEWPORT_PATTERN = r"^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$"
_VIEWPORT = re.compile(VIEWPORT_PATTERN)
_MEDIA = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}


def check_name(name: str) -> str:
    """A story or screenshot name: 1 to 200 characters, no control characters."""
    if isinstance(name, str) and not name.strip():
        raise InvalidInput("name is empty: give each screenshot a name such as `home` or `login`")
    return check_text("name", name, maximum=NAME_MAX, multiline=False).strip()


def check_viewport(viewport: str | None) -> str:
    """A viewport `WIDTHxHEIGHT` (e.g. 1280x800), or "" when none is given."""
    if viewport is None or viewport == "":
        return ""
    if not _VIEWPORT.match(viewport):
        raise InvalidInput(
            f"viewport {viewport!r} is not WIDTHxHEIGHT in pixels (for example 1280x800)"
        )
    return viewport


@dataclass(frozen=True)
class CheckedFile(storage.Bytes):
    """An image that passed its checks, with its size in pixels."""

    width: int
    height: int


def check_png(
    env: Env, data: bytes, *, what: str = "the screenshot", known: frozenset[str] = frozenset()
) -> CheckedFile:
    """A PNG within the limits, checked whole (every chunk, every row of its image data) so
    that nothing corrupt is ever stored; bytes in ``known`` (stored before, so checked then)
    only have their header read. Raises InvalidImage or ImageTooLarge."""
    limits = Limits(env.settings.max_image_bytes, env.settings.max_image_pixels)
    sha = hashlib.sha256(data).hexdigest()
    check = read_header if sha in known else validate
    header = check(data, limits, name=what)
    return CheckedFile(data, sha, "image/png", header.width, header.height)


def known_blobs(env: Env, datas: Iterable[bytes]) -> frozenset[str]:
    """The digests among these files' that are stored already (and were checked then)."""
    shas = {hashlib.sha256(d).hexdigest() for d in datas}
    with env.db.read() as s:
        return frozenset(s.scalars(select(Blob.sha256).where(Blob.sha256.in_(shas))))


def check_any_image(env: Env, data: bytes, *, max_bytes: int) -> CheckedFile:
    """A PNG, JPEG or WebP file under max_bytes. Raises InvalidImage."""
    if len(data) > max_bytes:
        raise InvalidImage(
            f"the image is {len(data):,} bytes; at most {max_bytes:,} are accepted here"
        )
    if data.startswith(SIGNATURE):
        return check_png(env, data, what="the image")
    try:
        with PILImage.open(io.BytesIO(data), formats=["JPEG", "WEBP"]) as image:
            media = _MEDIA[image.format or ""]
            width, height = image.size
            if width * height > env.settings.max_image_pixels:
                raise InvalidImage(
                    f"the image is {width}x{height}, over the "
                    f"{env.settings.max_image_pixels:,}-pixel limit"
                )
            image.load()  # decoded whole: a cut or corrupt file is refused now
    except InvalidImage:
        raise
    except UnidentifiedImageError:
        raise InvalidImage("the file is not a PNG, JPEG or WebP image") from None
    except Exception as exc:  # Pillow raises many kinds for damaged files
        raise InvalidImage(f"the image is corrupt or cut short: {exc}") from None
    return CheckedFile(data, hashlib.sha256(data).hexdigest(), media, width, height)


@dataclass(frozen=True)
class NewImage:
    """What an image row needs besides its file."""

    name: str
    variant: str
    source: str
    build_id: str | None = None
    context_id: str | None = None
    commit_sha: str | None = None
    tags: tuple[str, ...] = ()
    scale: float | None = None  # device px per CSS px, checked (imaging.check_scale)


def insert_images(
    s: Session, actor: Actor, items: list[tuple[CheckedFile, NewImage]]
) -> list[Image]:
    """Image rows in one go, for files whose blobs were claimed (storage.claim)."""
    rows = [
        Image(
            id=new_id("img"),
            project_id=actor.project_id,
            sha256=file.sha256,
            media_type=file.media_type,
            size=len(file.data),
            width=file.width,
            height=file.height,
            scale=meta.scale,
            name=meta.name,
            variant=meta.variant,
            source=meta.source,
            build_id=meta.build_id,
            context_id=meta.context_id,
            commit_sha=meta.commit_sha,
            tags=list(meta.tags),
            created_by=actor.key_id,
        )
        for file, meta in items
    ]
    s.add_all(rows)
    s.flush()
    return rows


def get_image_row(s: Session, actor: Actor, image_id: str) -> Image:
    return scoping.owned(s, Image, image_id, actor, "image")


def view_url(env: Env, image: Image) -> str:
    """The delivery URL to paste into a PR: it works until the image expires."""
    token = env.signer.sign("view", image.id)
    return f"{env.settings.public_url}/v/{token}"


def markdown(env: Env, image: Image) -> str:
    label = image.name + (f" ({image.variant})" if image.variant else "")
    return f"![{markdown_text(label)}]({view_url(env, image)})"


def image_record(env: Env, image: Image) -> ImageRecord:
    live = image.expired_at is None
    return ImageRecord(
        id=image.id,
        name=image.name,
        variant=image.variant,
        width=image.width,
        height=image.height,
        scale=image.scale,
        size=image.size,
        media_type=image.media_type,
        sha256=image.sha256,
        build_id=image.build_id,
        context_id=image.context_id,
        commit_sha=image.commit_sha,
        tags=list(image.tags),
        created_at=image.created_at,
        expired=not live,
        expired_at=image.expired_at,
        view_url=view_url(env, image) if live else None,
        markdown=markdown(env, image) if live else None,
    )


def expire_row(image: Image, reason: str) -> bool:
    if image.expired_at is not None:
        return False
    image.expired_at = utcnow()
    image.expired_reason = reason
    return True


def expire_image(env: Env, actor: Actor, image_id: str) -> ImageRecord:
    """Stop delivering an image (idempotent). Its bytes stay while a baseline uses them.
    Needs the upload role (which pushes images). Raises Forbidden, NotFound."""
    permissions.require(actor, "expire_image")
    with env.db.write() as s:
        image = get_image_row(s, actor, image_id)
        expire_row(image, "expired")
        return image_record(env, image)


@short_read
def get_image(env: Env, actor: Actor, image_id: str) -> ImageRecord:
    with env.db.read() as s:
        return image_record(env, get_image_row(s, actor, image_id))


def delivered_image(env: Env, token: str) -> tuple[bytes, str]:
    """The bytes behind a view URL. Raises NotFound once the image has expired."""
    image_id = urls.link_target(env, "view", token)
    with env.db.read() as s:
        image = s.get(Image, image_id) if well_formed(image_id) else None
        if image is None or image.expired_at is not None:
            raise NotFound("this image has expired or was removed")
        sha, media = image.sha256, image.media_type
    return env.blobs.get(sha), media


def usage(env: Env, actor: Actor) -> UsageRecord:
    with env.db.read() as s:
        project = s.get(Project, actor.project_id)
        images = s.scalar(
            select(func.count()).where(
                Image.project_id == actor.project_id, Image.expired_at.is_(None)
            )
        )
        baselines = s.scalar(
            select(func.count()).where(
                Baseline.project_id == actor.project_id, Baseline.ended_at.is_(None)
            )
        )
        return UsageRecord(
            project_id=actor.project_id,
            used_bytes=storage.usage_bytes(s, actor.project_id),
            quota_bytes=project.quota_bytes if project else None,
            images=int(images or 0),
            baselines=int(baselines or 0),
        )


def set_quota(env: Env, actor: Actor, quota_bytes: int | None) -> UsageRecord:
    permissions.require(actor, "set_quota")
    if quota_bytes is not None and not 0 <= quota_bytes < 2**62:
        raise InvalidInput("a quota is from 0 to 2^62 bytes, or none for no limit")
    with env.db.write() as s:
        project = s.get(Project, actor.project_id)
        assert project is not None
        project.quota_bytes = quota_bytes
    return usage(env, actor)
