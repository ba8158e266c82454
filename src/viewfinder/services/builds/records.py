"""The records builds are read as: a build, its counts and its stories."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from viewfinder.services.records import (
    Decision,
    Record,
    StoryState,
    Urls,
    Verdict,
)


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
    failure_reason: str | None = Field(
        None, description="Why it failed: its comparison, or its capture (a placeholder image)."
    )
    decision: Decision | None
    open_threads: int
    urls: Urls


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
    status: Literal["uploading", "comparing", "done", "expired"] = Field(
        description="expired: never finalized; it registered no baseline."
    )
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


class BuildDetail(BuildRecord):
    """A build with the first page of each story list."""

    changed: StoryList
    new: StoryList
    removed: StoryList
    failed: StoryList
    unchanged: StoryList
