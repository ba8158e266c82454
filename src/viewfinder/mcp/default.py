"""The default profile: Viewfinder's own vocabulary, one tool per job."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from viewfinder.mcp.common import pictures as shown_pictures
from viewfinder.mcp.common import read_image
from viewfinder.mcp.tooling import Call, ImageResult, ToolSpec
from viewfinder.services import (
    baselines,
    builds,
    contexts,
    diffs,
    images,
    projects,
    prs,
    pushes,
    reviews,
    threads,
)
from viewfinder.services.records import (
    AcceptBuildResult,
    ApproveResult,
    BaselineRecord,
    BuildRecord,
    BuildSummary,
    Changeset,
    CloseResult,
    DiffRecord,
    ImageRecord,
    Page,
    ProjectRecord,
    PushResult,
    Record,
    ReviewResult,
    StoryBriefs,
    ThreadRecord,
    UsageRecord,
)

# ---- shared argument fields ------------------------------------------------------------------

BuildId = Field(None, description="The build's id (bld_...).")
CommitSha = Field(None, description="Select the newest build of this commit.")
PrNumber = Field(None, description="Select the newest build of this pull request.")
Cursor = Field(None, description="next_cursor of the previous page; omit for the first page.")
Limit = Field(None, ge=1, le=100, description="Items per page: 25 by default, at most 100.")
DiffId = Field(description="The diff's id (dif_...), from get_build or push_screenshot.")
CommentId = Field(description="The comment's id (cmt_...).")
Repo = Field(None, description="owner/name of the GitHub repository, with pr_number.")


class Selector(BaseModel):
    build_id: str | None = BuildId
    commit_sha: str | None = CommitSha
    pr_number: int | None = PrNumber


class ContextSelector(BaseModel):
    context_key: str | None = Field(
        None, description="owner/repo#N for a PR, or any label (exactly one of this and pr_number)."
    )
    context_type: Literal["github_pr", "manual"] | None = Field(
        None, description="Default manual; pr_number implies github_pr."
    )
    pr_number: int | None = Field(None, description="Shorthand for the PR context repo#N.")
    repo: str | None = Repo


# ---- outputs that are not service records as they are -----------------------------------------


class Overview(Record):
    project: ProjectRecord
    usage: UsageRecord
    key_name: str
    roles: list[str]


class ThreadList(Record):
    items: list[ThreadRecord]


class Markdown(Record):
    markdown: str


class RenderedImage(Record):
    label: str
    note: str
    bytes: int


class Rendering(Record):
    diff_id: str | None
    story_id: str | None
    which: str
    images: list[RenderedImage]
    open_threads_note: str


# ---- the tools --------------------------------------------------------------------------------


class NoArgs(BaseModel):
    pass


def _overview(call: Call, _: NoArgs) -> Overview:
    return Overview(
        project=projects.whoami(call.env, call.actor),
        usage=images.usage(call.env, call.actor),
        key_name=call.actor.name,
        roles=sorted(call.actor.roles),
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


class Push(ContextSelector):
    image: str = Field(
        description="The screenshot: a data:image/png;base64,... URL or base64 (PNG, JPEG or "
        "WebP under 5 MB; compare needs PNG). Over stdio also an absolute file path."
    )
    name: str = Field(description="Logical name, e.g. home or checkout@mobile.")
    context_label: str | None = Field(None, description="A human-friendly context name.")
    viewport: str | None = Field(None, description="WIDTHxHEIGHT, e.g. 1280x800.")
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
        "get_project",
        "Which project this key belongs to, its roles, and storage use.",
        NoArgs,
        Overview,
        _overview,
        read_only=True,
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
                limit=a.limit,
            )
        ),
        read_only=True,
    ),
    ToolSpec(
        "list_build_stories",
        "Page through a build's stories in one state.",
        ListStories,
        StoryBriefs,
        lambda c, a: builds.list_build_stories(
            c.env, c.actor, a.build_id, state=a.state, cursor=a.cursor, limit=a.limit
        ).brief(),
        read_only=True,
    ),
    ToolSpec(
        "get_diff",
        "A diff: outcome, ratio, changed regions, decision, open threads, signed image URLs and "
        "the next step. By diff_id, or by a pushed image_id.",
        GetDiff,
        DiffRecord,
        _get_diff,
        read_only=True,
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
    ),
    ToolSpec(
        "review_diff",
        "Record accept, deny or ignore on a diff. Accept and ignore are refused while a comment "
        "thread is open. With the approve role, accept also makes the candidate the baseline.",
        Review,
        ReviewResult,
        lambda c, a: reviews.review_diff(c.env, c.actor, a.diff_id, a.decision),
        idempotent=True,
    ),
    ToolSpec(
        "accept_build",
        "Accept every pending change of a build, or nothing while any story has an open thread "
        "(those are named).",
        Selector,
        AcceptBuildResult,
        lambda c, a: reviews.accept_build(
            c.env, c.actor, build_id=a.build_id, commit_sha=a.commit_sha, pr_number=a.pr_number
        ),
        idempotent=True,
    ),
    ToolSpec(
        "approve_diff",
        "Make a diff's candidate the baseline it was compared with (a PR's own baseline for a "
        "PR diff). Needs the approve role; refused when the baseline changed since.",
        DiffArg,
        ApproveResult,
        lambda c, a: reviews.approve_diff(c.env, c.actor, a.diff_id),
        idempotent=True,
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
    ),
    ToolSpec(
        "add_comment",
        "Open a thread on a diff (diff_id, optional anchor and side) or reply to one "
        "(parent_id). Written as the agent.",
        AddComment,
        ThreadRecord,
        _add_comment,
    ),
    ToolSpec(
        "update_comment",
        "Change the text of your own comment.",
        UpdateComment,
        ThreadRecord,
        lambda c, a: threads.update_comment(c.env, c.actor, a.comment_id, a.body),
        idempotent=True,
    ),
    ToolSpec(
        "resolve_comment",
        "Resolve a thread once addressed (or reopen it with resolved=false).",
        ResolveComment,
        ThreadRecord,
        lambda c, a: threads.resolve_comment(c.env, c.actor, a.comment_id, resolved=a.resolved),
        idempotent=True,
    ),
    ToolSpec(
        "delete_comment",
        "Delete your own comment (a thread's first comment takes its replies with it).",
        CommentArg,
        ThreadRecord,
        lambda c, a: threads.delete_comment(c.env, c.actor, a.comment_id),
        destructive=True,
    ),
    ToolSpec(
        "push_screenshot",
        "Push one screenshot into a context (a PR or a label) and get Markdown to paste; with "
        "compare, compare it with its baseline (the PR's, else shared; the first one registers).",
        Push,
        PushResult,
        _push,
        file_args=("image",),
    ),
    ToolSpec(
        "expire_image",
        "Stop delivering a pushed image.",
        ImageArg,
        ImageRecord,
        lambda c, a: images.expire_image(c.env, c.actor, a.image_id),
        destructive=True,
        idempotent=True,
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
    ),
    ToolSpec(
        "delete_baseline",
        "End a baseline: the next compare of its name registers a new one. Needs the approve role.",
        BaselineArg,
        BaselineRecord,
        lambda c, a: baselines.delete_baseline(c.env, c.actor, a.baseline_id),
        destructive=True,
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
    ),
]
