"""The UI Verify profile: UI Verify's tool names, arguments and result fields over Viewfinder's
services, for agents and skills written against UI Verify. It renames and reshapes; every rule
(selectors, roles, open threads blocking an accept, paging limits) stays in the services."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from viewfinder.errors import ViewfinderError
from viewfinder.mcp.common import pictures as shown_pictures
from viewfinder.mcp.tooling import Call, ImageResult, Result, ToolSpec
from viewfinder.mcp.uiverify_builds import (
    AnyBuild,
    ListBuilds,
    ListPrStories,
    ListStories,
    Selector,
    changeset,
    get_build,
    list_builds,
    list_pr_stories,
    list_stories,
    selected_build_id,
)
from viewfinder.mcp.uiverify_shapes import (
    BuildAcceptance,
    BuildList,
    BuildTriage,
    Comment,
    CommentList,
    DiffDetail,
    PrChangeset,
    PrStoryPage,
    RenderedImage,
    Rendering,
    ReviewOutcome,
    StoryPage,
    flatten,
    story_items,
)
from viewfinder.services import diffs, reviews, threads

# ---- the vocabulary ---------------------------------------------------------------------------

_NAMES = {
    "build_id": "buildId",
    "commit_sha": "commitSha",
    "pr_number": "prNumber",
    "diff_id": "diffResultId",
    "story_id": "storyId",
    "comment_id": "commentId",
    "parent_id": "parentId",
    "next_cursor": "nextCursor",
}
_NAME = re.compile(r"\b(" + "|".join(_NAMES) + r")\b")
A = TypeVar("A", bound=BaseModel)


def _speak(run: Callable[[Call, A], Result]) -> Callable[[Call, A], Result]:
    """Services name arguments in Viewfinder's words (build_id); an agent using this profile
    should read back the names it sends (buildId)."""

    @functools.wraps(run)
    def spoken(call: Call, args: A) -> Result:
        try:
            return run(call, args)
        except ViewfinderError as exc:
            raise type(exc)(_NAME.sub(lambda m: _NAMES[m.group(1)], exc.message)) from None

    return spoken


# ---- one story --------------------------------------------------------------------------------


class GetDiff(AnyBuild):
    diffResultId: str | None = Field(None, description="The story's diff (or storyId).")
    storyId: str | None = Field(
        None, description="Any story, unchanged ones too: its current comparison."
    )


def _get_diff(call: Call, args: GetDiff) -> DiffDetail:
    story, record = diffs.find(
        call.env,
        call.actor,
        diff_id=args.diffResultId,
        story_id=args.storyId,
        names=("diffResultId", "storyId", ""),
        selector=args.selector(),
    )
    if record is None:
        assert story is not None
        return DiffDetail.removed(story)
    return DiffDetail.of(record, threads.list_comments(call.env, call.actor, record.id))


class PxPagination(BaseModel):
    offset: int = Field(0, ge=0, description="First row of the slice, in device pixels.")
    height: int = Field(500, ge=1, le=10000, description="Rows in the slice (500).")


class Render(BaseModel):
    diffResultId: str | None = Field(None, description="The story's diff (or storyId).")
    storyId: str | None = Field(
        None, description="Any story's current image, unchanged ones too (which is not used)."
    )
    which: Literal["diff", "baseline", "candidate", "before_after", "before", "after"] = Field(
        "diff",
        description="diff: changes in red over a faded copy; baseline (before) or candidate "
        "(after) whole; before_after: side-by-side crops, one per changed region, 10 at a "
        "time (pxPagination picks the band of rows).",
    )
    pxPagination: PxPagination | None = Field(
        None, description="A slice of a tall image: {offset, height}; omit for the whole image."
    )


def _render(call: Call, args: Render) -> ImageResult:
    px = args.pxPagination
    pictures, note = shown_pictures(
        call,
        diff_id=args.diffResultId,
        story_id=args.storyId,
        which=args.which,
        offset=px.offset if px is not None else None,
        height=px.height if px is not None else None,
        names=("diffResultId", "storyId"),
    )
    record = Rendering(
        diffResultId=args.diffResultId,
        storyId=args.storyId,
        which=args.which,
        images=[RenderedImage(label=p.label, note=p.note, bytes=len(p.png)) for p in pictures],
        note=note,
    )
    return ImageResult(
        note, pictures, record, large_hint="ask for a slice with pxPagination {offset, height}"
    )


class Review(BaseModel):
    diffResultId: str = Field(description="The story's diff, from get_build or get_diff.")
    decision: Literal["accept", "deny", "ignore"] = Field(
        description="accept an intended change, deny a regression, ignore rendering noise."
    )


def _review(call: Call, args: Review) -> ReviewOutcome:
    result = reviews.review_diff(call.env, call.actor, args.diffResultId, args.decision)
    return ReviewOutcome(
        diffResultId=result.diff.id,
        review=result.diff.decision,
        baselineUpdated=result.baseline_updated,
        message=result.message,
    )


def _accept_build(call: Call, sel: Selector) -> BuildAcceptance:
    result = reviews.accept_build(
        call.env,
        call.actor,
        build_id=sel.buildId,
        commit_sha=sel.commitSha,
        pr_number=sel.prNumber,
        repo=sel.repo,
    )
    return BuildAcceptance(
        buildId=result.build_id,
        accepted=result.accepted,
        blocked=story_items(result.blocked),
        message=result.message,
    )


# ---- comments ---------------------------------------------------------------------------------

CommentId = Field(description="The comment's id (cmt_...).")


def _list_comments(call: Call, sel: Selector) -> CommentList:
    build_id = selected_build_id(call, sel)
    found = threads.list_build_comments(call.env, call.actor, build_id)
    return CommentList(buildId=build_id, items=flatten(found))


class PostComment(AnyBuild):
    diffResultId: str | None = Field(
        None, description="The story's diff to open a thread on (not needed with parentId)."
    )
    body: str = Field(description="1 to 4000 characters.")
    side: Literal["after", "before"] | None = Field(
        None, description="after: the candidate (default); before: the baseline."
    )
    anchor: dict[str, Any] | None = Field(
        None,
        description="Where on the image, normalised 0..1: {type: 'point', x, y}, "
        "{type: 'rect', x, y, w, h} or {type: 'path', points: [{x, y}...], closed}; omit for "
        "the whole diff.",
    )
    parentId: str | None = Field(
        None, description="Reply to this comment's thread: the reply takes its side, no anchor."
    )


def _post_comment(call: Call, args: PostComment) -> Comment:
    if args.diffResultId is not None and args.selector():
        diffs.find(call.env, call.actor, diff_id=args.diffResultId, selector=args.selector())
    created = threads.post_comment(
        call.env,
        call.actor,
        args.body,
        diff_id=args.diffResultId,
        parent_id=args.parentId,
        anchor=args.anchor,
        side=args.side or "after",
    )
    return Comment.of(created)


class UpdateComment(BaseModel):
    commentId: str = CommentId
    body: str = Field(description="The new text, 1 to 4000 characters.")


class ResolveComment(BaseModel):
    commentId: str = CommentId
    resolved: bool = Field(True, description="false reopens the thread.")


class CommentArg(BaseModel):
    commentId: str = CommentId


# ---- the tools --------------------------------------------------------------------------------

SELECT = "Select the build with exactly one of commitSha, prNumber and buildId."

TOOLS: list[ToolSpec] = [
    ToolSpec(
        "list_builds",
        "Recent builds, newest first, with their status, verdict (the gate), review state and "
        "counts; filter by branch or status. Page with nextCursor.",
        ListBuilds,
        BuildList,
        _speak(list_builds),
        read_only=True,
        operation="list_builds",
    ),
    ToolSpec(
        "get_build",
        f"Triage one build. {SELECT} Returns counts, the comment tally and the first 25 changed "
        "and failed stories, likely regressions first (each with its diffResultId, diffPercent, "
        "status and aiVerdict; when both lists are long they share the 25); page the rest with "
        "list_build_stories and changedNextCursor / failedNextCursor.",
        Selector,
        BuildTriage,
        _speak(get_build),
        read_only=True,
        operation="get_build",
    ),
    ToolSpec(
        "list_build_stories",
        f"Page one build's stories by status. {SELECT} nextCursor is null on the last page.",
        ListStories,
        StoryPage,
        _speak(list_stories),
        read_only=True,
        operation="list_build_stories",
    ),
    ToolSpec(
        "get_diff",
        "One story's comparison: status, diffPercent, changed regions, review, comment counts, "
        "signed baselineUrl / candidateUrl / diffUrl and the next step. By diffResultId, or by "
        "storyId for any story, unchanged ones too.",
        GetDiff,
        DiffDetail,
        _speak(_get_diff),
        read_only=True,
        operation="get_diff",
    ),
    ToolSpec(
        "render_diff_image",
        "Look at a story's pixels: which diff, baseline, candidate, or before_after (side-by-side "
        "crops, one per changed region); storyId shows any story's current image. A note on "
        "open comment threads comes first. Tall images: pxPagination {offset, height}.",
        Render,
        Rendering,
        _speak(_render),
        read_only=True,
        images=True,
        operation="render",
    ),
    ToolSpec(
        "review_diff",
        "Decide a story: accept an intended change, deny a regression, ignore noise. Accept and "
        "ignore are refused while a comment thread on it is unresolved; deny always works.",
        Review,
        ReviewOutcome,
        _speak(_review),
        idempotent=True,
        operation="review_diff",
    ),
    ToolSpec(
        "accept_build",
        f"Accept every pending change of a build. {SELECT} Accepts nothing while any story has "
        "an unresolved comment, and names those stories.",
        Selector,
        BuildAcceptance,
        _speak(_accept_build),
        idempotent=True,
        operation="accept_build",
    ),
    ToolSpec(
        "get_pr_changeset",
        f"Everything a pull request changed across its builds: new, changed, removed and failed "
        f"stories with their review state, counts, and the first 25 of each list with "
        f"newNextCursor, changedNextCursor ... for list_pr_stories. {SELECT}",
        Selector,
        PrChangeset,
        _speak(changeset),
        read_only=True,
        operation="get_pr_changeset",
    ),
    ToolSpec(
        "list_pr_stories",
        f"Page one bucket (kind) of a pull request's changeset. {SELECT}",
        ListPrStories,
        PrStoryPage,
        _speak(list_pr_stories),
        read_only=True,
        operation="get_pr_changeset",
    ),
    ToolSpec(
        "list_comments",
        f"Every comment on a build's stories, threads and replies, each with its diffResultId, "
        f"authorType, body, side, parentId, anchor and resolved. {SELECT}",
        Selector,
        CommentList,
        _speak(_list_comments),
        read_only=True,
        operation="list_comments",
    ),
    ToolSpec(
        "post_comment",
        "Open a comment thread on a story's diff (diffResultId, optional anchor and side), or "
        "reply to one (parentId). Written as the agent.",
        PostComment,
        Comment,
        _speak(_post_comment),
        operation="comment",
    ),
    ToolSpec(
        "update_comment",
        "Change the text of your own comment.",
        UpdateComment,
        Comment,
        _speak(
            lambda c, a: Comment.of(threads.update_comment(c.env, c.actor, a.commentId, a.body))
        ),
        idempotent=True,
        operation="comment",
    ),
    ToolSpec(
        "resolve_comment",
        "Resolve a comment's thread once addressed (resolved false reopens it).",
        ResolveComment,
        Comment,
        _speak(
            lambda c, a: Comment.of(
                threads.resolve_comment(c.env, c.actor, a.commentId, resolved=a.resolved)
            )
        ),
        idempotent=True,
        operation="resolve_comment",
    ),
    ToolSpec(
        "delete_comment",
        "Delete your own comment; deleting a thread's first comment deletes its replies.",
        CommentArg,
        Comment,
        _speak(lambda c, a: Comment.of(threads.delete_comment(c.env, c.actor, a.commentId))),
        destructive=True,
        operation="delete_comment",
    ),
]
