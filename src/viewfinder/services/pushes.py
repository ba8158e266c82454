"""Pushing one screenshot into a delivery context, optionally compared with its baseline (the
Miseru flow). Pushing a name + viewport again expires the older image in that context."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import Field
from sqlalchemy import select

from viewfinder.errors import InvalidInput
from viewfinder.imaging import Mask
from viewfinder.imaging.compare import check_scale, check_unit
from viewfinder.imaging.masks import MaskLike, parse_masks
from viewfinder.services import comparisons, contexts, diffs, images, permissions, storage
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.text import check_sha, check_text
from viewfinder.services.waiting import Wait
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
comparisons.register_owner("push", lambda _s, _row: None, conclude=diffs.inherit_decision)


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
    scale: float | None = None,
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
    permissions.require(actor, "push")
    name = images.check_name(name)
    variant = images.check_viewport(viewport)
    scale = check_scale(scale)
    ratio = check_unit("max_diff_ratio", max_diff_ratio)
    mask_list = parse_masks(masks)
    if mask_list or ratio > 0:
        actor.require("approve", "push with masks or a max_diff_ratio above 0")
    tag_list = sorted(
        {check_text("a tag", t, maximum=100, multiline=False).strip() for t in tags} - {""}
    )
    if len(tag_list) > 50:
        raise InvalidInput(f"at most 50 tags (got {len(tag_list)})")
    if commit_sha is not None:
        commit_sha = check_sha(commit_sha)
    ctype, key, ctx_repo, ctx_pr = contexts.parse_selector(
        context_key=context_key, context_type=context_type, pr_number=pr_number, repo=repo
    )
    file = images.check_any_image(env, data, max_bytes=env.settings.push_max_bytes)
    if compare and file.media_type != "image/png":
        raise InvalidInput(
            f"compare works on PNG images only; this is {file.media_type}. Push a PNG, or push "
            "without compare"
        )
    wanted = _Push(
        file=file,
        context=(ctype, key, ctx_repo, ctx_pr, context_label),
        meta=images.NewImage(
            name=name,
            variant=variant,
            source="push",
            commit_sha=commit_sha,
            tags=tuple(tag_list),
            scale=scale,
        ),
        compare=compare,
        masks=mask_list,
        max_diff_ratio=ratio,
    )
    claimed = storage.claim(env, actor.project_id, [file])
    try:
        stored = _store(env, actor, wanted)
    except BaseException:
        storage.forget(env, claimed)
        raise
    result = PushResult(
        image_id=stored.image_id,
        view_url=stored.view_url,
        markdown=stored.markdown,
        diff_requested=stored.diff_id is not None,
        diff=diffs.get_diff(env, actor, stored.diff_id) if stored.diff_id else None,
        replaced_image_id=stored.replaced,
    )
    return settling(env, actor, result, timeout=wait_seconds).block() if wait_seconds else result


def settling(env: Env, actor: Actor, pushed: PushResult, *, timeout: float) -> Wait[PushResult]:
    """A wait for the push's comparison to be computed (nothing to wait for without one)."""
    diff = pushed.diff
    if diff is None:
        return Wait(lambda: pushed, lambda _: True, 0)
    return Wait(
        lambda: pushed.model_copy(update={"diff": diffs.get_diff(env, actor, diff.id)}),
        lambda p: p.diff is None or comparisons.computed(p.diff),
        timeout,
    )


@dataclass(frozen=True)
class _Push:
    """A push that passed its checks."""

    file: images.CheckedFile
    context: tuple[str, str, str | None, int | None, str | None]  # type, key, repo, PR, label
    meta: images.NewImage
    compare: bool
    masks: tuple[Mask, ...]
    max_diff_ratio: float


@dataclass(frozen=True)
class _Stored:
    image_id: str
    view_url: str
    markdown: str
    diff_id: str | None
    replaced: str | None


def _store(env: Env, actor: Actor, push: _Push) -> _Stored:
    """The pushed image's rows (and its comparison), in one transaction."""
    ctype, key, repo, pr_number, label = push.context
    with env.db.write() as s:
        context = contexts.get_or_create(
            s, actor.project_id, ctype, key, repo=repo, pr_number=pr_number, label=label
        )
        if context.status == "closed":
            raise InvalidInput(f"context {ctype}:{key} is closed; push into an open one")
        older = list(
            s.scalars(
                select(Image).where(
                    Image.context_id == context.id,
                    Image.name == push.meta.name,
                    Image.variant == push.meta.variant,
                    Image.expired_at.is_(None),
                )
            )
        )
        for old in older:
            images.expire_row(old, "replaced")
        meta = dataclasses.replace(push.meta, context_id=context.id)
        (image,) = images.insert_images(s, actor, [(push.file, meta)])
        diff_id = None
        if push.compare:
            diff_id = diffs.request(
                s,
                actor,
                image,
                context=context,
                owner_kind="push",
                owner_id=image.id,
                masks=push.masks,
                max_diff_ratio=push.max_diff_ratio,
            ).id
        return _Stored(
            image.id,
            images.view_url(env, image),
            images.markdown(env, image),
            diff_id,
            older[0].id if older else None,
        )
