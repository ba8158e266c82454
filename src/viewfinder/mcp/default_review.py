"""The default profile's review tools: the project, builds and their stories, diffs and their
images, decisions, and comment threads."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from viewfinder.mcp.common import pictures as shown_pictures
from viewfinder.mcp.default_fields import (
    CommentId,
    Cursor,
    DiffId,
    Limit,
    Overview,
    RenderedImage,
    Rendering,
    Selector,
    ThreadList,
)
from viewfinder.mcp.shapes import BuildSummary, StoryBriefs, brief
from viewfinder.mcp.tooling import Call, ImageResult, ToolSpec
from viewfinder.services import (
    builds,
    diffs,
    identity,
    images,
    projects,
    reviews,
    threads,
)
from viewfinder.services.builds.records import BuildRecord
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.records import Page
from viewfinder.services.reviews import AcceptBuildResult, ApproveResult, ReviewResult
from viewfinder.services.threads import ThreadRecord

# ---- the tools --------------------------------------------------------------------------------


class NoArgs(BaseModel):
    pass


def _overview(call: Call, _: NoArgs) -> Overview:
    chosen = identity.get_project(call.env, call.actor)
    return Overview(
        project=projects.whoami(call.env, call.actor),
        usage=images.usage(call.env, call.actor),
        key_name=call.actor.name,
        roles=sorted(call.actor.roles),
        source=chosen.source,
        default_project=chosen.default_project,
    )


class ListBuilds(BaseModel):
    branch: str | None = Field(None, description="Only builds of this branch.")
    pr_number: int | None = Field(None, description="Only builds of this pull request.")
    verdict: Literal["pending", "unchanged", "changed", "failed"] | None = Field(
        None, description="Only builds with this verdict."
    )
    limit: int | None = Field(None, ge=1, le=100, description="20 by default, at most 100.")
    cursor: str | None = Cursor


class GetBuild(Selector):
    limit: int | None = Limit


class ListStories(BaseModel):
    build_id: str = Field(description="The build's id (bld_...).")
    state: Literal["changed", "new", "removed", "failed", "unchanged", "pending"] = "changed"
    cursor: str | None = Cursor
    limit: int | None = Limit


class GetDiff(BaseModel):
    diff_id: str | None = Field(None, description="The diff's id (exactly one of the two).")
    image_id: str | None = Field(None, description="A pushed image: its newest diff.")


def _get_diff(call: Call, args: GetDiff) -> DiffRecord:
    _, found = diffs.find(
        call.env,
        call.actor,
        diff_id=args.diff_id,
        image_id=args.image_id,
        names=("diff_id", "", "image_id"),
    )
    assert found is not None  # only a story can lack a diff
    return found


class Render(BaseModel):
    diff_id: str | None = Field(None, description="The diff to show (or story_id).")
    story_id: str | None = Field(
        None, description="Any story's current image, unchanged ones too (instead of diff_id)."
    )
    which: Literal["diff", "before", "after", "before_after"] = Field(
        "diff",
        description="diff: changes in red on a faded copy; before/after: either side; "
        "before_after: side-by-side crops, one per changed region.",
    )
    px_offset: int | None = Field(None, ge=0, description="Tall images: first row of the page.")
    px_height: int | None = Field(None, ge=1, le=10000, description="Rows per page (500).")


def _render(call: Call, args: Render) -> ImageResult:
    pictures, note = shown_pictures(
        call,
        diff_id=args.diff_id,
        story_id=args.story_id,
        which=args.which,
        offset=args.px_offset,
        height=args.px_height,
        names=("diff_id", "story_id"),
    )
    record = Rendering(
        diff_id=args.diff_id,
        story_id=args.story_id,
        which=args.which,
        images=[RenderedImage(label=p.label, note=p.note, bytes=len(p.png)) for p in pictures],
        open_threads_note=note,
    )
    return ImageResult(note=note, pictures=pictures, record=record)


class Review(BaseModel):
    diff_id: str = DiffId
    decision: Literal["accept", "deny", "ignore"] = Field(
        description="accept an intended change, deny a regression, ignore noise."
    )


class DiffArg(BaseModel):
    diff_id: str = DiffId


class ListComments(BaseModel):
    diff_id: str = DiffId
    status: Literal["open", "resolved"] | None = None


class AddComment(BaseModel):
    diff_id: str | None = Field(None, description="The diff to comment on (new thread).")
    parent_id: str | None = Field(
        None, description="Reply to this thread instead (a reply takes its side, no anchor)."
    )
    body: str = Field(description="1 to 4000 characters.")
    anchor: dict[str, Any] | None = Field(
        None,
        description="Where on the image, normalised 0..1: {type: point, x, y}, "
        "{type: rect, x, y, w, h} or {type: path, points: [{x, y}...], closed}; omit for the "
        "whole image.",
    )
    side: Literal["after", "before"] = Field("after", description="after: the candidate.")


def _add_comment(call: Call, args: AddComment) -> ThreadRecord:
    return threads.post_comment(
        call.env,
        call.actor,
        args.body,
        diff_id=args.diff_id,
        parent_id=args.parent_id,
        anchor=args.anchor,
        side=args.side,
    )


class UpdateComment(BaseModel):
    comment_id: str = CommentId
    body: str = Field(description="The new text, 1 to 4000 characters.")


class ResolveComment(BaseModel):
    comment_id: str = CommentId
    resolved: bool = Field(True, description="false reopens the thread.")


class CommentArg(BaseModel):
    comment_id: str = CommentId


TOOLS: list[ToolSpec] = [
    ToolSpec(
        "get_project",
        "The project the tools work in (a project key's own, or this connection's), who calls "
        "with which roles, and its storage use.",
        NoArgs,
        Overview,
        _overview,
        read_only=True,
        operation="whoami",
    ),
    ToolSpec(
        "list_builds",
        "Recent builds, newest first, with status, verdict and counts.",
        ListBuilds,
        Page[BuildRecord],
        lambda c, a: builds.list_builds(
            c.env,
            c.actor,
            limit=a.limit,
            cursor=a.cursor,
            branch=a.branch,
            pr_number=a.pr_number,
            verdict=a.verdict,
        ),
        read_only=True,
        operation="list_builds",
    ),
    ToolSpec(
        "get_build",
        "One build (exactly one of build_id, commit_sha, pr_number): status, verdict, counts, "
        "and the first page of changed and failed stories with their diff ids. Other lists: "
        "list_build_stories.",
        GetBuild,
        BuildSummary,
        lambda c, a: BuildSummary.of(
            builds.get_build(
                c.env,
                c.actor,
                build_id=a.build_id,
                commit_sha=a.commit_sha,
                pr_number=a.pr_number,
                repo=a.repo,
                limit=a.limit,
            )
        ),
        read_only=True,
        operation="get_build",
    ),
    ToolSpec(
        "list_build_stories",
        "Page through a build's stories in one state.",
        ListStories,
        StoryBriefs,
        lambda c, a: brief(
            builds.list_build_stories(
                c.env, c.actor, a.build_id, state=a.state, cursor=a.cursor, limit=a.limit
            )
        ),
        read_only=True,
        operation="list_build_stories",
    ),
    ToolSpec(
        "get_diff",
        "A diff: outcome, ratio, changed regions, decision, open threads, signed image URLs and "
        "the next step. By diff_id, or by a pushed image_id.",
        GetDiff,
        DiffRecord,
        _get_diff,
        read_only=True,
        operation="get_diff",
    ),
    ToolSpec(
        "render_diff_image",
        "Look at a diff's pixels: the diff image, before, after, or before_after crops of each "
        "changed region; or any story's current image by story_id. Tall images page by "
        "px_offset/px_height.",
        Render,
        Rendering,
        _render,
        read_only=True,
        images=True,
        operation="render",
    ),
    ToolSpec(
        "review_diff",
        "Record accept, deny or ignore on a diff. Accept and ignore are refused while a comment "
        "thread is open. With the approve role, accept also makes the candidate the baseline.",
        Review,
        ReviewResult,
        lambda c, a: reviews.review_diff(c.env, c.actor, a.diff_id, a.decision),
        idempotent=True,
        operation="review_diff",
    ),
    ToolSpec(
        "accept_build",
        "Accept every pending change of a build, or nothing while any story has an open thread "
        "(those are named).",
        Selector,
        AcceptBuildResult,
        lambda c, a: reviews.accept_build(
            c.env,
            c.actor,
            build_id=a.build_id,
            commit_sha=a.commit_sha,
            pr_number=a.pr_number,
            repo=a.repo,
        ),
        idempotent=True,
        operation="accept_build",
    ),
    ToolSpec(
        "approve_diff",
        "Make a diff's candidate the baseline it was compared with (a PR's own baseline for a "
        "PR diff). Needs the approve role; refused when the baseline changed since.",
        DiffArg,
        ApproveResult,
        lambda c, a: reviews.approve_diff(c.env, c.actor, a.diff_id),
        idempotent=True,
        operation="approve_diff",
    ),
    ToolSpec(
        "list_comments",
        "The comment threads of a diff with their replies.",
        ListComments,
        ThreadList,
        lambda c, a: ThreadList(
            items=threads.list_comments(c.env, c.actor, a.diff_id, status=a.status)
        ),
        read_only=True,
        operation="list_comments",
    ),
    ToolSpec(
        "add_comment",
        "Open a thread on a diff (diff_id, optional anchor and side) or reply to one "
        "(parent_id). Written as the agent.",
        AddComment,
        ThreadRecord,
        _add_comment,
        operation="comment",
    ),
    ToolSpec(
        "update_comment",
        "Change the text of your own comment.",
        UpdateComment,
        ThreadRecord,
        lambda c, a: threads.update_comment(c.env, c.actor, a.comment_id, a.body),
        idempotent=True,
        operation="comment",
    ),
    ToolSpec(
        "resolve_comment",
        "Resolve a thread once addressed (or reopen it with resolved=false).",
        ResolveComment,
        ThreadRecord,
        lambda c, a: threads.resolve_comment(c.env, c.actor, a.comment_id, resolved=a.resolved),
        idempotent=True,
        operation="resolve_comment",
    ),
    ToolSpec(
        "delete_comment",
        "Delete your own comment (a thread's first comment takes its replies with it).",
        CommentArg,
        ThreadRecord,
        lambda c, a: threads.delete_comment(c.env, c.actor, a.comment_id),
        destructive=True,
        operation="delete_comment",
    ),
]
