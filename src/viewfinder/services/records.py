"""The records services return: REST response bodies and MCP output schemas, shaped once."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")

StoryState = Literal["pending", "new", "changed", "unchanged", "removed", "failed"]
Decision = Literal["pending", "accepted", "denied", "ignored"]
Side = Literal["after", "before"]


class Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class Page(Record, Generic[T]):
    items: list[T]
    next_cursor: str | None = Field(
        description="Pass back as `cursor` for the next page; null on the last page."
    )


class ProjectRecord(Record):
    id: str
    name: str
    ignore_noise: bool = Field(
        True, description="Pairs whose every difference is rendering noise are not changed."
    )
    created_at: datetime


class KeyRecord(Record):
    id: str
    project_id: str
    prefix: str = Field(description="The key's first characters, to tell keys apart.")
    label: str
    kind: Literal["agent", "ci", "person"]
    roles: list[str]
    created_at: datetime
    revoked: bool


class NewKey(KeyRecord):
    key: str = Field(description="The secret key. It is shown this once and stored hashed.")


class Urls(Record):
    """Signed, expiring links to the images (null when there is no such image)."""

    baseline: str | None = None
    candidate: str | None = None
    diff: str | None = None


class RegionRecord(Record):
    x: int
    y: int
    width: int
    height: int
    changed_pixels: int


class MaskRecord(Record):
    x: int
    y: int
    width: int
    height: int


Verdict = Literal["noise", "likely_intended", "likely_regression"]


class ChangeRecord(Record):
    """One changed region as the analysis sees it, on the compared canvas."""

    x: int
    y: int
    width: int
    height: int
    kind: Literal["noise", "move", "color", "content", "size"]
    changed_pixels: int
    dx: int | None = Field(None, description="For a move: how far it moved right (px).")
    dy: int | None = Field(None, description="For a move: how far it moved down (px).")
    note: str | None = Field(
        None, description="inserted at the top, new content, vanished, pushed out of view..."
    )


class AnalysisRecord(Record):
    """What changed, in words and numbers: offline, perhaps refined by a vision model."""

    kind: Literal["identical", "noise", "layout_shift", "color", "content", "size"]
    noise: bool = Field(description="Every difference is rendering noise.")
    verdict: Verdict | None
    confidence: float = Field(ge=0, le=1)
    summary: str
    reasoning: str
    changes: list[ChangeRecord]
    source: Literal["offline", "vision"] = Field(
        "offline", description="vision: a vision model refined the verdict."
    )


class ComparisonResult(Record):
    """What the engine found, as every record of a comparison shows it."""

    state: Literal["requested", "done", "failed"]
    changed: bool | None
    identical: bool | None
    diff_ratio: float | None
    changed_pixels: int | None
    compared_pixels: int | None
    width: int | None
    height: int | None
    regions: list[RegionRecord]
    masks: list[MaskRecord]
    max_diff_ratio: float
    threshold: float
    failure_reason: str | None
    analysis: AnalysisRecord | None = Field(
        None, description="What changed; null until compared pixel by pixel, or when bytes matched."
    )
    requested_at: datetime
    completed_at: datetime | None


class ComparisonUrls(Record):
    """Signed, expiring links to the images (null when there is no such image)."""

    base: str | None = None
    candidate: str | None = None
    diff: str | None = None


class ComparisonRecord(ComparisonResult):
    """Two stored images compared, with no build or baseline involved."""

    id: str
    base_image_id: str | None
    image_id: str
    owner_kind: str = Field(description="What asked for it: images (directly), story, push ...")
    outcome: Literal["changed", "unchanged", "failed", "registered"] | None
    urls: ComparisonUrls


class DiffRecord(ComparisonResult):
    """A comparison of a candidate image with the baseline current when it was requested, as
    its viewer sees it: what was found, and what the viewer may do with it now."""

    id: str = Field(description="The diff id.")
    image_id: str
    build_id: str | None
    story_id: str | None = None
    context_id: str | None
    name: str
    variant: str
    outcome: Literal["registered", "changed", "unchanged", "failed"] | None = Field(
        description="registered: no baseline existed and this image became it."
    )
    found: str = Field(description="What the comparison found, in one sentence.")
    baseline_id: str | None
    baseline_image_id: str | None
    baseline_scope: Literal["shared", "context"] | None
    stale: bool = Field(description="The baseline changed after this comparison.")
    decision: Decision
    decided_by: str | None
    decided_at: datetime | None
    approved_by: str | None
    approved_at: datetime | None
    open_threads: int = Field(description="Unresolved comment threads and marks on the diff.")
    blocked_by: list[str] = Field(
        default_factory=list, description="Ids of the unresolved threads that block accepting."
    )
    can_decide: bool = Field(False, description="The viewer may record a decision (deny at least).")
    can_accept: bool = Field(False, description="The viewer may accept it now.")
    can_ignore: bool = Field(False, description="The viewer may ignore it now.")
    can_approve: bool = Field(False, description="The viewer may make it the baseline now.")
    urls: Urls
    next_step: str = Field(description="What to do next, in one sentence.")


class StoryRecord(Record):
    id: str
    build_id: str
    name: str
    variant: str
    state: StoryState
    image_id: str | None
    diff_id: str | None
    diff_ratio: float | None
    changed_pixels: int | None
    verdict: Verdict | None = None
    summary: str | None = Field(None, description="The analysis in one line.")
    decision: Decision | None
    open_threads: int
    urls: Urls


class StoryBrief(Record):
    """A story in a few fields, for lists an agent reads (links are in get_diff)."""

    id: str
    name: str
    variant: str
    state: StoryState
    diff_id: str | None
    diff_ratio: float | None
    verdict: Verdict | None = None
    decision: Decision | None
    open_threads: int


class StoryBriefs(Record):
    items: list[StoryBrief]
    next_cursor: str | None


class Counts(Record):
    changed: int = 0
    new: int = 0
    removed: int = 0
    failed: int = 0
    unchanged: int = 0
    pending: int = 0


class BuildRecord(Record):
    id: str
    commit_sha: str
    branch: str | None
    repo: str | None
    pr_number: int | None
    context_id: str | None
    status: Literal["uploading", "comparing", "done"]
    verdict: Literal["pending", "unchanged", "changed", "failed"]
    review: Literal["none", "pending", "accepted", "denied"] = Field(
        description="none: nothing to review; accepted: every change accepted or ignored."
    )
    counts: Counts
    url: str
    created_at: datetime
    finalized_at: datetime | None
    completed_at: datetime | None


class StoryList(Record):
    items: list[StoryRecord]
    next_cursor: str | None

    def brief(self) -> StoryBriefs:
        return StoryBriefs(
            items=[
                StoryBrief(
                    id=s.id,
                    name=s.name,
                    variant=s.variant,
                    state=s.state,
                    diff_id=s.diff_id,
                    diff_ratio=s.diff_ratio,
                    verdict=s.verdict,
                    decision=s.decision,
                    open_threads=s.open_threads,
                )
                for s in self.items
            ],
            next_cursor=self.next_cursor,
        )


class BuildDetail(BuildRecord):
    """A build with the first page of each story list."""

    changed: StoryList
    new: StoryList
    removed: StoryList
    failed: StoryList
    unchanged: StoryList


class BuildSummary(BuildRecord):
    """A build with the first page of what needs a look (changed and failed stories); the
    other lists are counted and paged with list_build_stories."""

    changed: StoryBriefs
    failed: StoryBriefs

    @classmethod
    def of(cls, detail: BuildDetail) -> BuildSummary:
        fields = BuildRecord.model_fields
        base = {k: v for k, v in detail.model_dump().items() if k in fields}
        return cls(**base, changed=detail.changed.brief(), failed=detail.failed.brief())


class ImageRecord(Record):
    id: str
    name: str
    variant: str
    width: int | None
    height: int | None
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


class PushResult(Record):
    image_id: str
    view_url: str
    markdown: str
    diff_requested: bool
    diff: DiffRecord | None
    replaced_image_id: str | None = Field(
        description="The older image of the same name and variant in this context, now expired."
    )


class ContextRecord(Record):
    id: str
    type: Literal["github_pr", "manual"]
    key: str
    label: str | None
    repo: str | None
    pr_number: int | None
    status: Literal["open", "closed"]
    close_reason: Literal["merged", "closed", "manual"] | None
    closed_at: datetime | None
    expire_policy: Literal["on_close", "ttl", "never"]
    ttl_seconds: int | None = None
    created_at: datetime


class CloseResult(Record):
    context: ContextRecord
    already_closed: bool
    baselines_promoted: int
    baselines_discarded: int
    images_expired: int


class BaselineRecord(Record):
    id: str
    name: str
    variant: str
    scope: Literal["shared", "context"]
    context_id: str | None
    image_id: str
    source: Literal["registered", "approved", "promoted"]
    comparison_id: str | None
    created_by: str
    created_at: datetime
    ended_at: datetime | None
    end_reason: str | None
    ended_by: str | None
    view_url: str | None


class PointAnchor(Record):
    type: Literal["point"]
    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)


class RectAnchor(Record):
    type: Literal["rect"]
    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)
    w: float = Field(ge=0, le=1)
    h: float = Field(ge=0, le=1)


class PathPoint(Record):
    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)


class PathAnchor(Record):
    type: Literal["path"]
    points: list[PathPoint] = Field(min_length=2, max_length=1000)
    closed: bool = False


Anchor = Annotated[PointAnchor | RectAnchor | PathAnchor, Field(discriminator="type")]


class Author(Record):
    key_id: str
    name: str
    is_agent: bool


class Subject(Record):
    """What a thread is about: one side of a diff, or one stored image."""

    type: Literal["diff", "image"]
    id: str
    side: Side | None = None


ThreadStatus = Literal["open", "in_progress", "resolved", "verified"]


class ThreadRecord(Record):
    id: str
    subject: Subject
    diff_id: str | None = Field(description="The diff, when the subject is one.")
    parent_id: str | None
    kind: Literal["comment", "mark", "finding"] = "comment"
    severity: str | None = Field(None, description="A mark's or a finding's severity.")
    body: str
    anchor: Anchor | None
    side: Side | None
    status: ThreadStatus
    unresolved: bool = Field(
        description="Still to be dealt with (open or in progress); such comments and marks "
        "block accepting their diff."
    )
    author: Author
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None
    can_edit: bool = Field(False, description="The viewer may change its text.")
    can_delete: bool = Field(False, description="The viewer may delete it.")
    moves: list[ThreadStatus] = Field(
        default_factory=list, description="The statuses the viewer may move the thread to."
    )
    replies: list[ThreadRecord] = Field(default_factory=list)


class ReviewResult(Record):
    diff: DiffRecord
    baseline_updated: bool
    message: str


class AcceptBuildResult(Record):
    build_id: str
    accepted: list[str] = Field(description="Diff ids accepted by this call.")
    blocked: list[StoryRecord] = Field(
        description="Stories with unresolved comments; nothing was accepted when any is listed."
    )
    message: str


class ApproveResult(Record):
    diff: DiffRecord
    baseline: BaselineRecord
    already_approved: bool
    message: str


class UsageRecord(Record):
    project_id: str
    used_bytes: int
    quota_bytes: int | None
    images: int
    baselines: int


class Changeset(Record):
    repo: str | None
    pr_number: int
    builds: list[str]
    counts: Counts
    changed: StoryList
    new: StoryList
    removed: StoryList
    failed: StoryList
