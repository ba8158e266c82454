"""What a design checkup (a ReviseMy review) looks like to agents, scripts and people: the
review object, its marks ("pins"), screenshots, work packets and loop counts. Field names are
the reference's (``pass``, ``next_action``, ``work_packets`` ...), so the compatible MCP
profile returns these records as they are."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from viewfinder.services.records import Record

ReviewStatus = Literal["pending", "changes_requested", "approved", "expired"]
Action = Literal["wait_for_human", "apply_pins_then_next_pass", "open_next_pass", "done", "expired"]
ReviewType = Literal["ui", "website", "presentation", "email"]
PinStatus = Literal["open", "in_progress", "resolved", "verified"]


class Area(Record):
    """A rectangle as fractions 0-1 of its screenshot."""

    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)
    w: float = Field(ge=0, le=1)
    h: float = Field(ge=0, le=1)


class PassDiff(Record):
    """Whether a mark's area changed between the pass it was made on and the next one."""

    state: Literal["changed", "identical", "pending", "failed"] = Field(
        description="changed or identical once the screenshots are compared; pending before."
    )
    from_pass: int
    to_pass: int
    comparison_id: str | None
    summary: str = Field(description="e.g. 'M3 resolved; its area changed between pass 1 and 2'.")


class PinComment(Record):
    id: str
    body: str
    author: str
    is_agent: bool
    created_at: datetime


class Pin(Record):
    """A person's mark (M#), or a hint (S#: second opinion, agent findings)."""

    id: str = Field(description="Pass it to resolve_marks (marks) or accept it (hints).")
    number: str = Field(description="M1, M2 ... as the person sees them; S1 ... for hints.")
    kind: Literal["mark", "finding"]
    severity: str
    body: str
    area: Area | None = Field(description="The drawn rectangle; null for the whole screenshot.")
    point: Area | None = Field(None, description="Where a point mark was set (w and h are 0).")
    screenshot_index: int
    suggested_copy: str | None = None
    question_answer: str | None = None
    status: PinStatus
    comments: list[PinComment] = Field(default_factory=list)
    source: str = Field(
        description="human, or where a hint came from: checklist, axe, vision, agent, guest"
    )
    rule: str | None = Field(None, description="The check that made a hint (contrast, axe:...).")
    note: str | None = Field(None, description="What the agent said it changed.")
    after_image_url: str | None = Field(None, description="The agent's after-image.")
    related_pin: str | None = Field(None, description="The mark (M#) a hint overlaps.")
    accepted_as: str | None = Field(None, description="The mark a hint became, once accepted.")
    review_id: str = Field(description="The pass the mark was made on.")
    pass_number: int
    reopened: int = Field(0, description="How often the person reopened it.")
    pass_diff: PassDiff | None = None
    created_at: datetime
    updated_at: datetime


class ShotDiff(Record):
    """The screenshot compared with the parent pass's matching one."""

    comparison_id: str
    parent_screenshot_index: int
    state: str
    changed: bool | None
    diff_ratio: float | None
    diff_url: str | None
    before_url: str | None


class Screenshot(Record):
    index: int
    label: str
    url: str = Field(description="A signed link to the PNG.")
    width: int
    height: int
    meta: dict[str, Any] = Field(
        description="origin (page, email, pdf, image or capture_failed), reason, viewport ..."
    )
    diff: ShotDiff | None = None


class NextAction(Record):
    action: Action
    summary: str


class WorkPackets(Record):
    pins: list[Pin] = Field(
        description="Every mark of this pass and the ones carried over (authoritative)."
    )
    must_fix: list[Pin]
    nits: list[Pin]
    questions: list[Pin]
    tweaks: list[Pin]
    keeps: list[Pin]
    awaiting_verification: list[Pin]
    carried_over: list[Pin] = Field(description="Marks of earlier passes still to be fixed.")
    second_opinion: list[Pin] = Field(description="Hints only: never required.")


class Loop(Record):
    must_fix: int
    nits: int
    questions: int
    outstanding: int
    awaiting_verification: int


class DeliveryRecord(Record):
    state: str
    attempts: int
    last_status: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


class WebhookRecord(Record):
    url: str
    state: Literal["active", "paused"] = Field(
        description="paused after five failed deliveries in a row; its owner resumes it "
        "(POST /api/v1/reviews/{id}/webhook/resume, viewfinder checkup resume-webhook)."
    )
    failures: int = Field(description="Failed deliveries in a row; five pause the webhook.")
    secret: str = Field(description="HMAC-SHA256 key of the X-Viewfinder-Signature header.")
    last_delivery: DeliveryRecord | None


class CaptureRecord(Record):
    state: Literal["none", "queued", "done", "failed"]
    reason: str | None


class ReviewRecord(Record):
    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)

    id: str
    status: ReviewStatus
    title: str
    context: str | None
    type: ReviewType
    source: Literal["images", "capture", "pdf", "html"]
    page_url: str | None
    design_rules: str | None
    pass_number: int = Field(alias="pass")
    parent_id: str | None
    next_pass_id: str | None = Field(description="The pass that follows this one, if any.")
    review_url: str = Field(description="The person's link: always share it.")
    board_url: str
    guest_share_url: str | None
    guest_expires_at: datetime | None
    next_action: NextAction
    guidance: str
    work_packets: WorkPackets
    loop: Loop
    screenshots: list[Screenshot]
    capture: CaptureRecord
    decision_note: str | None
    decided_at: datetime | None
    webhook: WebhookRecord | None
    credits: int = Field(description="What this pass cost.")
    created_at: datetime
    updated_at: datetime
    expires_at: datetime


class ReviewSummary(Record):
    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)

    id: str
    title: str
    status: ReviewStatus
    pass_number: int = Field(alias="pass")
    type: ReviewType
    next_action: NextAction
    outstanding: int
    awaiting_verification: int
    review_url: str
    updated_at: datetime


class ReviewList(Record):
    reviews: list[ReviewSummary]


class LiveState(Record):
    """What an open review page polls: a version that changes whenever anything it shows does
    (marks, their statuses, screenshots, the pass comparison, the decision, a next pass)."""

    version: str
    status: ReviewStatus
    updated_at: datetime
    next_pass_url: str | None = Field(description="The next pass's review link, once it opened.")


class Updated(Record):
    id: str
    number: str
    status: PinStatus
    summary: str


class Skipped(Record):
    id: str
    reason: str


class ResolveResult(Record):
    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)

    updated: list[Updated]
    skipped: list[Skipped]
    next_action: NextAction
    review: ReviewRecord


class FindingsResult(Record):
    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)

    added: list[Pin]
    review: ReviewRecord
