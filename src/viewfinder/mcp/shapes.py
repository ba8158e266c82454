"""Shapes only MCP answers use: a build and its stories in few fields, for agents."""

from __future__ import annotations

from viewfinder.services.builds.records import BuildDetail, BuildRecord, StoryList
from viewfinder.services.records import Decision, Record, StoryState, Verdict


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


def brief(stories: StoryList) -> StoryBriefs:
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
            for s in stories.items
        ],
        next_cursor=stories.next_cursor,
    )


class BuildSummary(BuildRecord):
    """A build with the first page of what needs a look (changed and failed stories); the
    other lists are counted and paged with list_build_stories."""

    changed: StoryBriefs
    failed: StoryBriefs

    @classmethod
    def of(cls, detail: BuildDetail) -> BuildSummary:
        fields = BuildRecord.model_fields
        base = {k: v for k, v in detail.model_dump().items() if k in fields}
        return cls(**base, changed=brief(detail.changed), failed=brief(detail.failed))
