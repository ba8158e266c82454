"""The default profile's shared argument fields, selectors and answer shapes that are not
service records as they are."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from viewfinder.services.identity import ProjectRef
from viewfinder.services.images import UsageRecord
from viewfinder.services.projects import ProjectRecord
from viewfinder.services.records import Record
from viewfinder.services.threads import ThreadRecord

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
    repo: str | None = Field(
        None, description="owner/name, with pr_number when that number is in several repos."
    )


class ContextSelector(BaseModel):
    context_key: str | None = Field(
        None, description="owner/repo#N for a PR, or any label (exactly one of this and pr_number)."
    )
    context_type: Literal["github_pr", "manual"] | None = Field(
        None, description="Default manual; pr_number implies github_pr."
    )
    pr_number: int | None = Field(None, description="Shorthand for the PR context repo#N.")
    repo: str | None = Repo


# ---- answers that are not service records as they are -----------------------------------------


class Overview(Record):
    project: ProjectRecord
    usage: UsageRecord
    key_name: str = Field(description="Who calls: the key's label, or the person's name.")
    roles: list[str]
    source: Literal["key", "connection", "default", "only_project"] = Field(
        "key",
        description="Where the project came from: the project key's own project, or this "
        "connection's (a person's OAuth token; set_project changes it).",
    )
    default_project: ProjectRef | None = Field(
        None, description="The person's default project (null for a project key)."
    )


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
