"""The Miseru profile's arguments and records, in Miseru's names (snake_case, image_id,
diff_id, context_key ...)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.services.comparisons import AnalysisRecord
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.records import Urls

# ---- records ----------------------------------------------------------------------------------


class MiseruDiff(BaseModel):
    """A pushed image's newest comparison, as GET /v1/images/:id/diff answers it."""

    model_config = ConfigDict(extra="allow")

    image_id: str
    state: str = Field(
        description="none (never compared), requested (computing), done or failed; more may come."
    )
    requested_at: datetime | None = None
    completed_at: datetime | None = None
    baseline_id: str | None = None
    baseline_scope: str | None = Field(None, description="context (the PR's own) or shared.")
    diff_id: str | None = None
    diff_ratio: float | None = None
    max_diff_ratio: float | None = None
    changed: bool | None = None
    status: str | None = Field(
        None, description="registered, changed, unchanged or failed; null while computing."
    )
    stale: bool | None = Field(None, description="The baseline changed after this comparison.")
    failure_reason: str | None = None
    analysis: AnalysisRecord | None = Field(
        None, description="What changed: kind, verdict, summary, reasoning and each change."
    )
    approved: bool | None = None
    name: str | None = None
    viewport: str | None = None
    urls: Urls | None = Field(None, description="Signed, expiring links to the images.")
    next_step: str | None = None

    @classmethod
    def of(cls, d: DiffRecord) -> MiseruDiff:
        return cls(
            image_id=d.image_id,
            state=d.state,
            requested_at=d.requested_at,
            completed_at=d.completed_at,
            baseline_id=d.baseline_id,
            baseline_scope=d.baseline_scope,
            diff_id=d.id,
            diff_ratio=d.diff_ratio,
            max_diff_ratio=d.max_diff_ratio,
            changed=d.changed,
            status=d.outcome,
            stale=d.stale,
            failure_reason=d.failure_reason,
            analysis=d.analysis,
            approved=d.approved_at is not None,
            name=d.name,
            viewport=d.variant or None,
            urls=d.urls,
            next_step=d.next_step,
        )


class Pushed(BaseModel):
    image_id: str
    view_url: str
    markdown: str
    diff_requested: bool
    diff: MiseruDiff | None = Field(
        description="With compare: the comparison after waiting up to 30 s (as miseru_diff)."
    )
    replaced_image_id: str | None = Field(
        description="The older image of this name and viewport in the context, now expired."
    )


class Expired(BaseModel):
    image_id: str
    name: str
    expired: bool
    expired_at: datetime | None


class PrComment(BaseModel):
    pr_number: int
    repo: str
    markdown: str


class Approved(BaseModel):
    diff_id: str
    baseline_id: str
    baseline_scope: str
    context_id: str | None
    already_approved: bool
    message: str


# ---- arguments -----------------------------------------------------------------------------------

PrNumber = Field(
    None, description="Shorthand for context_type github_pr, context_key <owner/repo>#<n>."
)
Repo = Field(
    None,
    description="owner/repo of the GitHub repository, with pr_number. Over stdio, when left "
    "out: VIEWFINDER_REPO, MISERU_REPO, GITHUB_REPOSITORY, then the git remote origin.",
)
ContextKey = Field(
    None,
    description="The context: owner/repo#<PR> for github_pr, any label for manual. Exactly one "
    "of context_key and pr_number.",
)


class Push(BaseModel):
    file: str = Field(
        description="The image: an absolute path of a png/jpg/webp under 5 MB (over stdio); "
        "over HTTP the image itself as a data:image/png;base64,... URL or base64."
    )
    name: str = Field(
        description="Logical name, e.g. home, login, checkout@mobile. The same name and "
        "viewport in a context replaces (expires) the older image."
    )
    context_key: str | None = ContextKey
    context_type: Literal["github_pr", "manual"] | None = Field(
        None, description="github_pr or manual (default manual)."
    )
    context_label: str | None = Field(None, description="A name for people.")
    pr_number: int | None = PrNumber
    repo: str | None = Repo
    commit_sha: str | None = Field(
        None, description="Evidence only. Over stdio, when left out: the git HEAD, if any."
    )
    viewport: str | None = Field(None, description="e.g. 1280x800.")
    tags: list[str] = Field(default_factory=list, description="Tags, made when new.")
    project: str | None = Field(
        None, description="This key's project (its name or id); others are refused."
    )
    compare: bool = Field(
        False,
        description="Compare with the baseline (PNG only: another type with compare fails the "
        "whole push) and wait up to 30 s for the result.",
    )
    max_diff_ratio: float = Field(
        0,
        description="Highest changed share (0..1, e.g. 0.001 = 0.1%) still called unchanged. "
        "Above 0 needs a key with the approve role.",
    )
    masks: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Rectangles {x, y, width, height} in image pixels left out of the "
        "comparison (integers; at most 20). Needs a key with the approve role.",
    )


class ImageArg(BaseModel):
    image_id: str = Field(description="The image id miseru_push returned.")


ImageKind = Literal["baseline", "candidate", "diff"]
RENDER_KIND = {"baseline": "before", "candidate": "after", "diff": "diff"}


class DiffArgs(BaseModel):
    image_id: str = Field(description="The image id miseru_push returned.")
    images: list[ImageKind] = Field(
        default_factory=lambda: list[ImageKind](["diff"]),
        description="Images to return: baseline (as compared), candidate (this image), diff "
        "(changed pixels red, size differences blue, masks gray). Default [diff].",
    )


class CommentArgs(BaseModel):
    pr_number: int = Field(description="The pull request's number.")
    repo: str | None = Repo


class CloseArgs(BaseModel):
    context_key: str | None = ContextKey
    context_type: Literal["github_pr", "manual"] | None = Field(
        None, description="github_pr or manual."
    )
    pr_number: int | None = PrNumber
    repo: str | None = Repo
    reason: Literal["merged", "closed", "manual"] = Field(
        "manual",
        description="merged promotes the PR's baselines to the shared ones; closed and manual "
        "(default) discard them.",
    )


class DiffIdArg(BaseModel):
    diff_id: str = Field(description="The diff id miseru_push or miseru_diff returned.")


class ListBaselinesArgs(BaseModel):
    project: str | None = Field(
        None, description="This key's project (its id or name); others, and none, are refused."
    )
    cursor: str | None = Field(None, description="next_cursor of the previous page.")


class BaselineArg(BaseModel):
    baseline_id: str = Field(description="The id miseru_list_baselines returned.")
