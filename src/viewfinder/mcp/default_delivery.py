"""The default profile's delivery tools: pushing a screenshot, expiring images, closing contexts,
baselines and pull requests."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from viewfinder.imaging.analysis.reach import MAX_SCALE, MIN_SCALE
from viewfinder.mcp.common import read_image
from viewfinder.mcp.default_fields import ContextSelector, Cursor, Limit, Markdown, Repo
from viewfinder.mcp.tooling import Call, ToolSpec
from viewfinder.services import (
    baselines,
    contexts,
    images,
    prs,
    pushes,
)
from viewfinder.services.baselines import BaselineRecord
from viewfinder.services.contexts import CloseResult
from viewfinder.services.images import SCALE_HELP, ImageRecord
from viewfinder.services.prs import Changeset
from viewfinder.services.pushes import PushResult
from viewfinder.services.records import Page


class Push(ContextSelector):
    image: str = Field(
        description="The screenshot: a data:image/png;base64,... URL or base64 (PNG, JPEG or "
        "WebP under 5 MB; compare needs PNG). Over stdio also an absolute file path."
    )
    name: str = Field(description="Logical name, e.g. home or checkout@mobile.")
    context_label: str | None = Field(None, description="A human-friendly context name.")
    viewport: str | None = Field(None, description="WIDTHxHEIGHT, e.g. 1280x800.")
    scale: float | None = Field(None, ge=MIN_SCALE, le=MAX_SCALE, description=SCALE_HELP)
    commit_sha: str | None = None
    tags: list[str] = Field(default_factory=list)
    compare: bool = Field(False, description="Compare with the baseline and wait up to 30 s.")
    max_diff_ratio: float = Field(
        0.0, ge=0, le=1, description="Changed share still called unchanged (approve role)."
    )
    masks: list[dict[str, int]] = Field(
        default_factory=list,
        description="Rectangles {x, y, width, height} in image pixels left out (approve role).",
    )


def _push(call: Call, args: Push) -> PushResult:
    data = read_image(call, args.image)
    return pushes.push(
        call.env,
        call.actor,
        data,
        name=args.name,
        context_key=args.context_key,
        context_type=args.context_type,
        context_label=args.context_label,
        pr_number=args.pr_number,
        repo=args.repo,
        commit_sha=args.commit_sha,
        viewport=args.viewport,
        scale=args.scale,
        tags=args.tags,
        compare=args.compare,
        max_diff_ratio=args.max_diff_ratio,
        masks=args.masks,
    )


class ImageArg(BaseModel):
    image_id: str = Field(description="The image's id (img_...).")


class Close(ContextSelector):
    reason: Literal["merged", "closed", "manual"] = Field(
        "manual", description="merged promotes the PR's baselines to shared; others discard them."
    )


class ListBaselines(BaseModel):
    cursor: str | None = Cursor
    limit: int | None = Field(None, ge=1, le=200, description="200 by default.")
    name: str | None = Field(None, description="Only this name.")
    history: bool = Field(False, description="Include replaced and deleted ones.")


class BaselineArg(BaseModel):
    baseline_id: str = Field(description="The baseline's id (bas_...).")


class PrArg(BaseModel):
    pr_number: int = Field(description="The pull request's number.")
    repo: str | None = Repo
    limit: int | None = Limit


TOOLS: list[ToolSpec] = [
    ToolSpec(
        "push_screenshot",
        "Push one screenshot into a context (a PR or a label) and get Markdown to paste; with "
        "compare, compare it with its baseline (the PR's, else shared; the first one registers).",
        Push,
        PushResult,
        _push,
        file_args=("image",),
        operation="push",
    ),
    ToolSpec(
        "expire_image",
        "Stop delivering a pushed image.",
        ImageArg,
        ImageRecord,
        lambda c, a: images.expire_image(c.env, c.actor, a.image_id),
        destructive=True,
        idempotent=True,
        operation="expire_image",
    ),
    ToolSpec(
        "close_context",
        "Close a context: merged promotes a PR's baselines to shared, closed/manual discards "
        "them; images expire by the context's policy. Idempotent.",
        Close,
        CloseResult,
        lambda c, a: contexts.close_context(
            c.env,
            c.actor,
            context_key=a.context_key,
            context_type=a.context_type,
            pr_number=a.pr_number,
            repo=a.repo,
            reason=a.reason,
        ),
        destructive=True,
        idempotent=True,
        operation="close_context",
    ),
    ToolSpec(
        "list_baselines",
        "Current baselines (shared ones and PRs' own), by name, 200 a page.",
        ListBaselines,
        Page[BaselineRecord],
        lambda c, a: baselines.list_baselines(
            c.env, c.actor, cursor=a.cursor, limit=a.limit, name=a.name, history=a.history
        ),
        read_only=True,
        operation="list_baselines",
    ),
    ToolSpec(
        "delete_baseline",
        "End a baseline: the next compare of its name registers a new one. Needs the approve role.",
        BaselineArg,
        BaselineRecord,
        lambda c, a: baselines.delete_baseline(c.env, c.actor, a.baseline_id),
        destructive=True,
        operation="delete_baseline",
    ),
    ToolSpec(
        "get_pr_changeset",
        "Everything a PR changed across its builds: changed, new, removed and failed stories.",
        PrArg,
        Changeset,
        lambda c, a: prs.get_pr_changeset(
            c.env, c.actor, pr_number=a.pr_number, repo=a.repo, limit=a.limit
        ),
        read_only=True,
        operation="get_pr_changeset",
    ),
    ToolSpec(
        "pr_comment",
        "One Markdown comment body for all screenshots of a PR.",
        PrArg,
        Markdown,
        lambda c, a: Markdown(
            markdown=prs.pr_comment(c.env, c.actor, pr_number=a.pr_number, repo=a.repo)
        ),
        read_only=True,
        operation="pr_comment",
    ),
]
