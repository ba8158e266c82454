"""The UI Verify profile's build-level tools: selecting a build, listing builds, a build's
triage and story lists, and a pull request's changeset, over Viewfinder's services."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from viewfinder.errors import InvalidInput
from viewfinder.mcp.tooling import Call
from viewfinder.mcp.uiverify_shapes import (
    BuildItem,
    BuildList,
    BuildTriage,
    ChangesetCounts,
    CommentTally,
    PrChangeset,
    PrStoryPage,
    StoryPage,
    story_items,
)
from viewfinder.services import builds, prs, threads
from viewfinder.services.builds.records import BuildDetail, StoryList
from viewfinder.services.pagination import Cursor
from viewfinder.services.prs import Changeset

# ---- arguments --------------------------------------------------------------------------------

CURSOR = Field(None, description="nextCursor of the previous page; omit for the first page.")
LIMIT = Field(None, ge=1, le=100, description="Items per page: 25 by default, at most 100.")
UNUSED = (
    "Optional: the diffResultId (or storyId) already names one build's story; when given, it "
    "must name that build."
)
REPO = Field(
    None,
    description="owner/name, with prNumber: needed only when that number has builds in several "
    "repositories.",
)


class Selector(BaseModel):
    """Exactly one of the three; none or several is an error."""

    commitSha: str | None = Field(None, description="The newest build of this commit.")
    prNumber: int | None = Field(None, description="The newest build of this pull request.")
    buildId: str | None = Field(None, description="The build's id (bld_...).")
    repo: str | None = REPO


class AnyBuild(BaseModel):
    commitSha: str | None = Field(None, description=UNUSED)
    prNumber: int | None = Field(None, description=UNUSED)
    buildId: str | None = Field(None, description=UNUSED)
    repo: str | None = Field(None, description=UNUSED)

    def selector(self) -> dict[str, Any]:
        """The build selector as the services name it, only what was sent."""
        sent = {
            "build_id": self.buildId,
            "commit_sha": self.commitSha,
            "pr_number": self.prNumber,
            "repo": self.repo,
        }
        return {k: v for k, v in sent.items() if v is not None}


def detail(call: Call, sel: Selector, limit: int | None = None) -> BuildDetail:
    return builds.get_build(
        call.env,
        call.actor,
        build_id=sel.buildId,
        commit_sha=sel.commitSha,
        pr_number=sel.prNumber,
        repo=sel.repo,
        limit=limit,
    )


def selected_build_id(call: Call, sel: Selector) -> str:
    if sel.buildId is not None and sel.commitSha is None and sel.prNumber is None and not sel.repo:
        return sel.buildId
    return detail(call, sel, limit=1).id


# ---- builds -----------------------------------------------------------------------------------

BuildStatus = Literal[
    "uploading", "comparing", "done", "expired", "pending", "unchanged", "changed", "failed"
]


class ListBuilds(BaseModel):
    branch: str | None = Field(None, description="Only builds of this branch.")
    status: BuildStatus | None = Field(
        None,
        description="Only builds with this status (uploading, comparing, done) or verdict "
        "(pending, unchanged, changed, failed).",
    )
    limit: int | None = Field(None, ge=1, le=100, description="20 by default, at most 100.")
    cursor: str | None = CURSOR


def list_builds(call: Call, args: ListBuilds) -> BuildList:
    """UI Verify's one status argument names either a build's status or its verdict."""
    is_status = args.status in builds.BUILD_STATUSES
    page = builds.list_builds(
        call.env,
        call.actor,
        limit=args.limit,
        cursor=args.cursor,
        branch=args.branch,
        status=args.status if is_status else None,
        verdict=None if is_status else args.status,
    )
    return BuildList(items=[BuildItem.of(b) for b in page.items], nextCursor=page.next_cursor)


# Stories one get_build answer holds in all: 25 keep the answer (JSON text and structured
# content both) under 16 KB whatever the build's size. Each list that has stories gets some of
# them, the lists that need a look first most; every list's cursor goes on from where it stops.
TRIAGE_ITEMS = 25
TRIAGE_LISTS = ("changed", "failed", "new", "removed")
LIST_SHARE = 5  # stories every non-empty list gets before the others take the rest


def triage_sizes(counts: dict[str, int]) -> dict[str, int]:
    """How many stories of each list one get_build answer shows."""
    sizes = {k: min(counts[k], LIST_SHARE) for k in TRIAGE_LISTS}
    left = TRIAGE_ITEMS - sum(sizes.values())
    for k in TRIAGE_LISTS:
        extra = min(counts[k] - sizes[k], left)
        sizes[k] += extra
        left -= extra
    return sizes


def get_build(call: Call, sel: Selector) -> BuildTriage:
    d = detail(call, sel, limit=1)
    comments = threads.list_build_comments(call.env, call.actor, d.id)
    sizes = triage_sizes(d.counts.model_dump())
    fields: dict[str, Any] = {}
    for state in TRIAGE_LISTS:
        page = _first(call, d.id, state, sizes[state]) if sizes[state] else None
        fields[state] = story_items(page.items) if page else []
        fields[f"{state}NextCursor"] = page.next_cursor if page else None
    return BuildTriage.model_validate(
        {**BuildItem.fields_of(d), "url": d.url, "comments": CommentTally.of(comments), **fields}
    )


def _first(call: Call, build_id: str, state: str, size: int) -> StoryList:
    return builds.list_build_stories(call.env, call.actor, build_id, state=state, limit=size)


class ListStories(Selector):
    status: Literal["changed", "unchanged", "failed", "new", "removed", "pending"] = Field(
        "changed", description="Which list to page."
    )
    cursor: str | None = CURSOR
    limit: int | None = LIMIT


def list_stories(call: Call, args: ListStories) -> StoryPage:
    build_id = selected_build_id(call, args)
    page = builds.list_build_stories(
        call.env, call.actor, build_id, state=args.status, cursor=args.cursor, limit=args.limit
    )
    return StoryPage(
        buildId=build_id,
        status=args.status,
        items=story_items(page.items),
        nextCursor=page.next_cursor,
    )


# ---- pull requests ----------------------------------------------------------------------------

Kind = Literal["new", "changed", "removed", "failed"]
KINDS: tuple[Kind, ...] = ("new", "changed", "removed", "failed")
FIRST_PAGE = 25


def _pr_of(call: Call, sel: Selector) -> tuple[int, str | None]:
    """The pull request of the selected build (by prNumber: of its newest build)."""
    build = detail(call, sel, limit=1)
    if build.pr_number is None:
        raise InvalidInput(
            f"build {build.id} was not made for a pull request: select one by prNumber, or a "
            "build that has one"
        )
    return build.pr_number, build.repo


def _pr_cursor(call: Call, number: int, repo: str | None, kind: str, offset: int) -> str:
    # The service lists a PR's stories in a stable order, so a signed offset resumes the list.
    return Cursor.make(call.env, f"uiverify-pr:{repo}#{number}:{kind}", [offset])


def _bucket(c: Changeset, kind: Kind) -> tuple[StoryList, int]:
    lists = {"new": c.new, "changed": c.changed, "removed": c.removed, "failed": c.failed}
    return lists[kind], getattr(c.counts, kind)


def changeset(call: Call, sel: Selector) -> PrChangeset:
    number, repo = _pr_of(call, sel)
    c = prs.get_pr_changeset(call.env, call.actor, pr_number=number, repo=repo, limit=FIRST_PAGE)
    fields: dict[str, Any] = {}
    for kind in KINDS:
        stories, count = _bucket(c, kind)
        fields[kind] = story_items(stories.items)
        more = count > len(stories.items)
        fields[f"{kind}NextCursor"] = (
            _pr_cursor(call, number, repo, kind, len(stories.items)) if more else None
        )
    counts = ChangesetCounts(
        total=sum(getattr(c.counts, k) for k in KINDS),
        new=c.counts.new,
        changed=c.counts.changed,
        removed=c.counts.removed,
        failed=c.counts.failed,
    )
    return PrChangeset.model_validate(
        {"prNumber": number, "repo": repo, "buildIds": c.builds, "counts": counts, **fields}
    )


class ListPrStories(Selector):
    kind: Kind = Field(description="Which bucket of the changeset to page.")
    cursor: str | None = CURSOR
    limit: int | None = LIMIT


def list_pr_stories(call: Call, args: ListPrStories) -> PrStoryPage:
    number, repo = _pr_of(call, args)
    start = Cursor.read(call.env, args.cursor, f"uiverify-pr:{repo}#{number}:{args.kind}")
    offset = int(start[0]) if start else 0
    c = prs.get_pr_changeset(
        call.env, call.actor, pr_number=number, repo=repo, limit=args.limit, offset=offset
    )
    stories, count = _bucket(c, args.kind)
    end = offset + len(stories.items)
    return PrStoryPage(
        prNumber=number,
        kind=args.kind,
        items=story_items(stories.items),
        nextCursor=_pr_cursor(call, number, repo, args.kind, end) if end < count else None,
    )
