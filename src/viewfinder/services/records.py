"""What the records services return are built from: the frozen base, pages, links, regions, anchors
and authors. Each record itself lives beside the service that makes it."""

from __future__ import annotations

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
