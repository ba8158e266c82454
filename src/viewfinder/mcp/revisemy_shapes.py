"""Arguments of the checkup tools, in ReviseMy's names (id, images, capture_url, marks ...),
shared by the revisemy profile and the default profile's twins."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateReviewArgs(BaseModel):
    title: str = Field(description="Short title for this checkup pass")
    context: str | None = Field(
        None,
        description="What should the human look at on this pass? Set a new focus for each pass "
        "— do not reuse the previous pass's notes blindly.",
    )
    type: Literal["ui", "website", "presentation", "email"] | None = Field(
        None,
        description="What kind of content this is — ui (default), website, slide "
        "(presentation), or email. Drives the second-opinion lens. Follow-up passes inherit "
        "the parent type.",
    )
    page_url: str | None = Field(
        None,
        description="Live page URL. Required with capture_url:true (desktop + mobile capture); "
        "on a follow-up pass it defaults to the parent review's page_url. Metadata only with "
        "images/html/pdf.",
    )
    webhook_url: str | None = Field(
        None,
        description="Optional https URL POSTed when the human decides (event review.decided, "
        "HMAC-SHA256 signed with the review's webhook secret). Follow-up passes inherit it.",
    )
    parent_id: str | None = Field(
        None, description="Previous review id when opening the next pass after changes_requested"
    )
    images: list[str] | None = Field(
        None,
        description="Local or app UI: 1–5 screenshots as data URLs, base64 or https URLs "
        "(costs 1 credit). Prefer this for localhost. Provide exactly one source: images, "
        "capture_url, pdf, or html.",
    )
    capture_url: bool = Field(
        False,
        description="Capture page_url server-side (desktop 1280x800 + mobile 375x812; costs 5 "
        "credits). Public addresses only, unless the server's admin allowed a host. On "
        "[insufficient_credits], call get_billing.",
    )
    pdf: str | None = Field(
        None,
        description="A PDF as https URL or base64 — rendered one screenshot per page, max 5 "
        "(type defaults to presentation).",
    )
    html: str | None = Field(
        None,
        description="Raw HTML of an email — rendered at ~600px like a mail client, light and "
        "dark (type defaults to email; costs 3 credits).",
    )
    design_rules: str | None = Field(
        None, description="Rules the human checks against (up to 20,000 characters); inherited."
    )


class IdArg(BaseModel):
    id: str = Field(description="The review public id returned by create_review")


class AddScreenshotArgs(BaseModel):
    id: str = Field(description="The review public id")
    image: str = Field(description="Screenshot as https URL, data URL, or base64")


class AreaArg(BaseModel):
    x: float = Field(ge=0, le=100)
    y: float = Field(ge=0, le=100)
    w: float = Field(ge=0, le=100)
    h: float = Field(ge=0, le=100)


class FindingArg(BaseModel):
    severity: Literal["suggestion", "a11y", "polish"] | None = None
    body: str
    area: AreaArg | None = Field(None, description="{x, y, w, h} as fractions 0-1.")
    screenshot_index: int | None = None
    related_pin: str | None = None


class AddFindingsArgs(BaseModel):
    id: str = Field(description="The review public id")
    findings: list[FindingArg] = Field(
        description="List of {severity?, body, area?, screenshot_index?, related_pin?} — "
        "severity must be suggestion|a11y|polish",
        min_length=1,
        max_length=20,
    )


class MarkArg(BaseModel):
    id: str
    status: Literal["in_progress", "resolved"] | None = None
    note: str | None = None
    after_image: str | None = None


class ResolveMarksArgs(BaseModel):
    id: str = Field(description="The review public id")
    marks: list[MarkArg] = Field(
        description="List of {id, status?, note?, after_image?}. id is the mark id from "
        "work_packets.pins[].id. status is in_progress or resolved (default resolved). note "
        "describes what you changed. after_image is an optional screenshot of the fixed area "
        "(https URL, data URL, or base64) shown to the human as a before/after.",
        min_length=1,
        max_length=50,
    )


class SecondOpinionArgs(BaseModel):
    id: str = Field(description="The review public id")
    screenshot_index: int | None = Field(
        None, description="Optional screenshot index; omit to refresh all shots"
    )


class CheckoutArgs(BaseModel):
    product: Literal["plus", "credits_50"] | None = Field(
        None, description="plus (default): monthly subscription. credits_50: one-time pack."
    )


class CancelArgs(BaseModel):
    confirm: bool | None = Field(
        None, description="Must be true. Only set after the human explicitly asks to cancel."
    )


class PaymentAnswer(BaseModel):
    """Never returned on a self-hosted server: these tools answer [payments_disabled]."""

    url: str | None = None


# ---- the default profile's twins --------------------------------------------------------------


class GetCheckupArgs(BaseModel):
    id: str | None = Field(
        None, description="The checkup (rev_...); omit to list the ones this key opened."
    )


class AddToCheckupArgs(BaseModel):
    id: str = Field(description="The checkup (rev_...).")
    image: str | None = Field(
        None, description="A screenshot to append while the person has not decided."
    )
    findings: list[FindingArg] | None = Field(
        None,
        description="Hints (suggestion, a11y, polish; up to 20) beside the person's marks.",
        max_length=20,
    )
    second_opinion: bool = Field(
        False, description="Measure the screenshots again (all, or screenshot_index)."
    )
    screenshot_index: int | None = None


# ---- the app-only tools (the review app, acting with the review link's token) -----------------


class PointArg(BaseModel):
    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)


class AddMarkArgs(BaseModel):
    token: str = Field(description="The review link's token (the part of review_url after /r/).")
    screenshot_index: int = Field(ge=0)
    body: str
    severity: Literal[
        "must-fix", "nit", "question", "keep", "wording", "spacing", "size", "color", "alignment"
    ] = "nit"
    area: AreaArg | None = None
    point: PointArg | None = None
    suggested_copy: str | None = None


class DecideArgs(BaseModel):
    token: str = Field(description="The review link's token.")
    decision: Literal["approved", "changes_requested"]
    note: str | None = None


class VerifyArgs(BaseModel):
    token: str = Field(description="The review link's token.")
    mark_id: str
    verified: bool = Field(True, description="false reopens the mark instead.")
