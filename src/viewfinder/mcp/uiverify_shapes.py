"""The UI Verify profile's records: Viewfinder's service records under the names UI Verify's
clients read (camelCase, diffResultId for a diff, storyId for a story), and no more than an
agent needs: lists carry no URLs, get_diff does."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from viewfinder.services.builds.records import BuildRecord, StoryRecord
from viewfinder.services.builds.records import Counts as ServiceCounts
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.records import Anchor, Decision, Record, Side, StoryState, Verdict
from viewfinder.services.threads import ThreadRecord

# A diff's outcome in the words of a story's status.
_STATUS_OF_OUTCOME: dict[str | None, StoryState] = {
    None: "pending",
    "registered": "new",
    "changed": "changed",
    "unchanged": "unchanged",
    "failed": "failed",
}


def percent(ratio: float | None) -> float | None:
    return None if ratio is None else round(ratio * 100, 4)


class Counts(Record):
    total: int
    changed: int
    failed: int
    unchanged: int
    new: int
    removed: int
    pending: int = Field(description="Stories still being compared.")

    @classmethod
    def of(cls, c: ServiceCounts) -> Counts:
        total = c.changed + c.failed + c.unchanged + c.new + c.removed + c.pending
        return cls(
            total=total,
            changed=c.changed,
            failed=c.failed,
            unchanged=c.unchanged,
            new=c.new,
            removed=c.removed,
            pending=c.pending,
        )


class CommentTally(Record):
    total: int = Field(description="Comment threads (a first comment with its replies is one).")
    unresolved: int = Field(description="Threads not resolved yet: they block accepting.")

    @classmethod
    def of(cls, threads: list[ThreadRecord]) -> CommentTally:
        return cls(total=len(threads), unresolved=sum(t.unresolved for t in threads))


class StoryItem(Record):
    """A story in a list: enough to pick it; get_diff has the rest."""

    storyId: str
    name: str
    variant: str = Field(description="The viewport, e.g. 1280x800; empty when none was given.")
    status: StoryState
    diffResultId: str | None = Field(description="null for a removed story (no screenshot).")
    diffPercent: float | None = Field(description="Changed share of the pixels, in percent.")
    review: Decision | None = Field(description="The decision on a changed or failed story.")
    aiVerdict: Verdict | None = Field(
        description="What the change analysis makes of it; lists put likely regressions first."
    )
    unresolvedComments: int

    @classmethod
    def of(cls, s: StoryRecord) -> StoryItem:
        return cls(
            storyId=s.id,
            name=s.name,
            variant=s.variant,
            status=s.state,
            diffResultId=s.diff_id,
            diffPercent=percent(s.diff_ratio),
            review=s.decision,
            aiVerdict=s.verdict,
            unresolvedComments=s.open_threads,
        )


def story_items(stories: list[StoryRecord]) -> list[StoryItem]:
    return [StoryItem.of(s) for s in stories]


class BuildItem(Record):
    buildId: str
    commitSha: str
    branch: str | None
    repo: str | None
    prNumber: int | None
    status: Literal["uploading", "comparing", "done", "expired"] = Field(
        description="Processing: done once every story is compared."
    )
    verdict: Literal["pending", "unchanged", "changed", "failed"] = Field(
        description="The gate: unchanged passes; changed needs review; failed is broken."
    )
    review: Literal["none", "pending", "accepted", "denied"] = Field(
        description="none: nothing to review; accepted: every change accepted or ignored."
    )
    counts: Counts
    createdAt: datetime

    @classmethod
    def fields_of(cls, b: BuildRecord) -> dict[str, object]:
        return {
            "buildId": b.id,
            "commitSha": b.commit_sha,
            "branch": b.branch,
            "repo": b.repo,
            "prNumber": b.pr_number,
            "status": b.status,
            "verdict": b.verdict,
            "review": b.review,
            "counts": Counts.of(b.counts),
            "createdAt": b.created_at,
        }

    @classmethod
    def of(cls, b: BuildRecord) -> BuildItem:
        return cls.model_validate(cls.fields_of(b))


class BuildList(Record):
    items: list[BuildItem]
    nextCursor: str | None = Field(description="Pass back as cursor; null on the last page.")


class BuildTriage(BuildItem):
    """One build for triage: counts, the comment tally, and the first stories of each list
    (25 in all, changed ones first). A non-null NextCursor means more: page that list with
    list_build_stories."""

    url: str = Field(description="The build in the dashboard.")
    comments: CommentTally
    changed: list[StoryItem]
    changedNextCursor: str | None
    failed: list[StoryItem]
    failedNextCursor: str | None
    new: list[StoryItem]
    newNextCursor: str | None
    removed: list[StoryItem]
    removedNextCursor: str | None


class StoryPage(Record):
    buildId: str
    status: str
    items: list[StoryItem]
    nextCursor: str | None = Field(description="Pass back as cursor; null on the last page.")


class Region(Record):
    x: int
    y: int
    width: int
    height: int
    changedPixels: int


class DiffDetail(Record):
    """One story's comparison: metrics, signed image URLs, comments and the next step."""

    diffResultId: str | None
    storyId: str | None
    buildId: str | None
    name: str
    variant: str
    status: StoryState
    review: Decision | None
    diffPercent: float | None
    changedPixels: int | None
    width: int | None
    height: int | None
    regions: list[Region] = Field(description="Where it changed, in image pixels.")
    maxDiffRatio: float | None
    stale: bool = Field(description="The baseline changed after this comparison.")
    failureReason: str | None
    aiVerdict: Verdict | None = Field(description="noise, likely_intended or likely_regression.")
    aiConfidence: float | None = Field(description="0 to 1.")
    aiSummary: str | None = Field(description="What changed, in one line.")
    aiReasoning: str | None = Field(description="Why, in a few sentences.")
    baselineUrl: str | None = Field(description="Signed and expiring, like the other URLs.")
    candidateUrl: str | None
    diffUrl: str | None
    comments: CommentTally
    nextStep: str

    @classmethod
    def of(cls, d: DiffRecord, threads: list[ThreadRecord]) -> DiffDetail:
        return cls(
            diffResultId=d.id,
            storyId=d.story_id,
            buildId=d.build_id,
            name=d.name,
            variant=d.variant,
            status=_STATUS_OF_OUTCOME[d.outcome],
            review=d.decision,
            diffPercent=percent(d.diff_ratio),
            changedPixels=d.changed_pixels,
            width=d.width,
            height=d.height,
            regions=[
                Region(x=r.x, y=r.y, width=r.width, height=r.height, changedPixels=r.changed_pixels)
                for r in d.regions
            ],
            maxDiffRatio=d.max_diff_ratio,
            stale=d.stale,
            failureReason=d.failure_reason,
            aiVerdict=d.analysis.verdict if d.analysis else None,
            aiConfidence=d.analysis.confidence if d.analysis else None,
            aiSummary=d.analysis.summary if d.analysis else None,
            aiReasoning=d.analysis.reasoning if d.analysis else None,
            baselineUrl=d.urls.baseline,
            candidateUrl=d.urls.candidate,
            diffUrl=d.urls.diff,
            comments=CommentTally.of(threads),
            nextStep=d.next_step,
        )

    @classmethod
    def removed(cls, s: StoryRecord) -> DiffDetail:
        """A removed story has no screenshot, so no comparison: only its baseline."""
        return cls(
            diffResultId=None,
            storyId=s.id,
            buildId=s.build_id,
            name=s.name,
            variant=s.variant,
            status=s.state,
            review=None,
            diffPercent=None,
            changedPixels=None,
            width=None,
            height=None,
            regions=[],
            maxDiffRatio=None,
            stale=False,
            failureReason=None,
            aiVerdict=None,
            aiConfidence=None,
            aiSummary=None,
            aiReasoning=None,
            baselineUrl=s.urls.baseline,
            candidateUrl=s.urls.candidate,
            diffUrl=None,
            comments=CommentTally(total=0, unresolved=0),
            nextStep="This build has no screenshot of a story its baseline has: if removing it "
            "was intended there is nothing to review; if not, restore the story.",
        )


class RenderedImage(Record):
    label: str
    note: str
    bytes: int


class Rendering(Record):
    diffResultId: str | None
    storyId: str | None
    which: str
    images: list[RenderedImage]
    note: str = Field(description="The open comment threads, as the text before the images.")


class ReviewOutcome(Record):
    diffResultId: str
    review: Decision
    baselineUpdated: bool = Field(description="The candidate became the baseline.")
    message: str = Field(description="What happened, and what is left for a person.")


class BuildAcceptance(Record):
    buildId: str
    accepted: list[str] = Field(description="diffResultIds accepted by this call.")
    blocked: list[StoryItem] = Field(
        description="Stories with unresolved comments; nothing was accepted when any is listed."
    )
    message: str


class Comment(Record):
    commentId: str
    diffResultId: str
    parentId: str | None = Field(description="The thread's first comment, for a reply.")
    authorType: Literal["agent", "person"]
    authorName: str
    body: str
    side: Side = Field(description="after: the candidate; before: the baseline.")
    anchor: Anchor | None = Field(description="Where on the image, normalised 0..1.")
    resolved: bool = Field(description="Whether the comment's thread is resolved.")
    createdAt: datetime
    updatedAt: datetime

    @classmethod
    def of(cls, t: ThreadRecord, resolved: bool | None = None) -> Comment:
        return cls(
            commentId=t.id,
            diffResultId=t.diff_id,
            parentId=t.parent_id,
            authorType="agent" if t.author.is_agent else "person",
            authorName=t.author.name,
            body=t.body,
            side=t.side,
            anchor=t.anchor,
            resolved=not t.unresolved if resolved is None else resolved,
            createdAt=t.created_at,
            updatedAt=t.updated_at,
        )


def flatten(threads: list[ThreadRecord]) -> list[Comment]:
    """Each thread's first comment, then its replies, which share its resolved state."""
    out = []
    for t in threads:
        resolved = not t.unresolved
        out.append(Comment.of(t, resolved))
        out.extend(Comment.of(r, resolved) for r in t.replies)
    return out


class CommentList(Record):
    buildId: str
    items: list[Comment]


class ChangesetCounts(Record):
    total: int
    new: int
    changed: int
    removed: int
    failed: int


class PrChangeset(Record):
    """What a pull request changed across its builds: each story in its newest state."""

    prNumber: int
    repo: str | None
    buildIds: list[str] = Field(description="The PR's builds, oldest first.")
    counts: ChangesetCounts
    new: list[StoryItem]
    newNextCursor: str | None
    changed: list[StoryItem]
    changedNextCursor: str | None
    removed: list[StoryItem]
    removedNextCursor: str | None
    failed: list[StoryItem]
    failedNextCursor: str | None


class PrStoryPage(Record):
    prNumber: int
    kind: str
    items: list[StoryItem]
    nextCursor: str | None = Field(description="Pass back as cursor; null on the last page.")
