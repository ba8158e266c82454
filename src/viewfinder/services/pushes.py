"""Pushing one screenshot into a delivery context, optionally compared with its baseline (the
Miseru flow). Pushing a name + viewport again expires the older image in that context."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field
from sqlalchemy import select

from viewfinder.errors import InvalidInput
from viewfinder.imaging.compare import check_unit
from viewfinder.imaging.masks import MaskLike, parse_masks
from viewfinder.services import comparisons, contexts, diffs, images
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    Record,
)
from viewfinder.store.models import Image


class PushResult(Record):
    image_id: str
    view_url: str
    markdown: str
    diff_requested: bool
    diff: DiffRecord | None
    replaced_image_id: str | None = Field(
        description="The older image of the same name and variant in this context, now expired."
    )


COMPARE_WAIT_SECONDS = 30.0

# A pushed image's comparison settles nothing else: the push reads its result when it asks.
comparisons.register_owner("push", lambda _s, _row: None)


def push(
    env: Env,
    actor: Actor,
    data: bytes,
    *,
    name: str,
    context_key: str | None = None,
    context_type: str | None = None,
    context_label: str | None = None,
    pr_number: int | None = None,
    repo: str | None = None,
    commit_sha: str | None = None,
    viewport: str | None = None,
    tags: Iterable[str] = (),
    compare: bool = False,
    max_diff_ratio: float = 0.0,
    masks: Iterable[MaskLike] = (),
    wait_seconds: float = COMPARE_WAIT_SECONDS,
) -> PushResult:
    """Store the image in its context and return the paste-ready markdown; with ``compare``,
    compare it (PNG only) and wait up to ``wait_seconds`` for the result.

    Masks and a max_diff_ratio above 0 loosen what counts as a change, so they need the approve
    role. Nothing is stored when anything is refused. Raises InvalidInput, InvalidImage,
    ImageTooLarge, Forbidden, QuotaExceeded."""
    actor.require("upload", "push screenshots")
    name = images.check_name(name)
    variant = images.check_viewport(viewport)
    ratio = check_unit("max_diff_ratio", max_diff_ratio)
    mask_list = parse_masks(masks)
    if mask_list or ratio > 0:
        actor.require("approve", "push with masks or a max_diff_ratio above 0")
    tag_list = sorted({t.strip() for t in tags if t.strip()})
    if any(len(t) > 100 for t in tag_list) or len(tag_list) > 50:
        raise InvalidInput("at most 50 tags of up to 100 characters each")
    ctype, key, ctx_repo, ctx_pr = contexts.parse_selector(
        context_key=context_key, context_type=context_type, pr_number=pr_number, repo=repo
    )
    file = images.check_any_image(env, data, max_bytes=env.settings.push_max_bytes)
    if compare and file.media_type != "image/png":
        raise InvalidInput(
            f"compare works on PNG images only; this is {file.media_type}. Push a PNG, or push "
            "without compare"
        )
    images.store_blob(env, file)
    with env.db.write() as s:
        context = contexts.get_or_create(
            s, actor.project_id, ctype, key, repo=ctx_repo, pr_number=ctx_pr, label=context_label
        )
        if context.status == "closed":
            raise InvalidInput(f"context {ctype}:{key} is closed; push into an open one")
        older = list(
            s.scalars(
                select(Image).where(
                    Image.context_id == context.id,
                    Image.name == name,
                    Image.variant == variant,
                    Image.expired_at.is_(None),
                )
            )
        )
        for old in older:
            images.expire_row(old, "replaced")
        meta = images.NewImage(
            name=name,
            variant=variant,
            source="push",
            context_id=context.id,
            commit_sha=commit_sha,
            tags=tuple(tag_list),
        )
        (image,) = images.insert_images(s, actor, [(file, meta)])
        diff_id = None
        if compare:
            diff_id = diffs.request(
                s,
                actor,
                image,
                context=context,
                owner_kind="push",
                owner_id=image.id,
                masks=mask_list,
                max_diff_ratio=ratio,
            ).id
        image_id, view, md = image.id, images.view_url(env, image), images.markdown(env, image)
    diff = diffs.wait_for(env, actor, diff_id, timeout=wait_seconds) if diff_id else None
    return PushResult(
        image_id=image_id,
        view_url=view,
        markdown=md,
        diff_requested=diff_id is not None,
        diff=diff,
        replaced_image_id=older[0].id if older else None,
    )
