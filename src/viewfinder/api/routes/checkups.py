"""Design checkups over REST: the agent's side with a project key (open, read, list, add
screenshots and findings, resolve marks, run the second opinion, credits), and the person's
side under /api/v1/r/{token}, where the review link's token is the whole sign-in and no key
is read (marking, answering, verifying, reopening, accepting hints, deciding)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import Field

from viewfinder.api.deps import ActorDep, EnvDep, op
from viewfinder.api.fields import line, text
from viewfinder.plumbing.bodies import Body, JsonInt
from viewfinder.plumbing.offloop import call, wait_for
from viewfinder.services import checkup_guests, checkup_marks, checkups, credits, webhooks
from viewfinder.services.checkup_records import (
    FindingsResult,
    LiveState,
    Pin,
    ResolveResult,
    ReviewList,
    ReviewRecord,
)
from viewfinder.services.credits import BillingRecord

router = APIRouter(tags=["checkups"])
person = APIRouter(tags=["checkups: the person's link"])

Fraction = Annotated[float, Field(strict=False, ge=0, le=100)]


class AreaBody(Body):
    x: Fraction
    y: Fraction
    w: Fraction
    h: Fraction


class PointBody(Body):
    x: Annotated[float, Field(strict=False, ge=0, le=1)]
    y: Annotated[float, Field(strict=False, ge=0, le=1)]


class CreateBody(Body):
    title: str = Field(
        description="Short title for this checkup pass.", json_schema_extra=line(160)
    )
    context: str | None = Field(
        None, description="What the person should look at this pass.", json_schema_extra=text(4000)
    )
    type: Literal["ui", "website", "presentation", "email"] | None = Field(
        None,
        description="Defaults from the source (website, email, presentation, ui) or the "
        "parent pass.",
    )
    page_url: str | None = Field(
        None, description="The page (captured with capture_url).", json_schema_extra=line(2000)
    )
    webhook_url: str | None = Field(
        None, description="POSTed review.decided (https).", json_schema_extra=line(2000)
    )
    parent_id: str | None = Field(None, description="The pass before, after changes_requested.")
    images: list[str] | None = Field(
        None, description="1-5 screenshots: data URLs, base64 or https URLs."
    )
    capture_url: bool = Field(False, description="Capture page_url at desktop and mobile size.")
    pdf: str | None = Field(None, description="A PDF (https URL, data URL or base64).")
    html: str | None = Field(None, description="An email's HTML.")
    design_rules: str | None = Field(
        None, description="Rules the person checks against.", json_schema_extra=text(20000)
    )
    full_page: bool = Field(False, description="Capture the whole page, not the first screen.")


Wait = Annotated[
    float,
    Query(ge=0, le=120, description="Seconds to wait for a page's, email's or PDF's capture."),
]


@router.post("/reviews", status_code=201, **op("create_review"))
async def create_review(
    body: CreateBody, env: EnvDep, actor: ActorDep, wait: Wait = 0
) -> ReviewRecord:
    """Open a review from exactly one source; share its review_url with the person."""
    record = await call(checkups.create_review, env, actor, checkups.NewReview(**body.model_dump()))
    if wait and record.capture.state == "queued":
        record = await wait_for(checkups.capture_waiting(env, actor, record.id, timeout=wait))
    return record


@router.get("/reviews", **op("list_reviews"))
async def list_reviews(env: EnvDep, actor: ActorDep) -> ReviewList:
    """The reviews this key opened, newest first."""
    return await call(checkups.list_reviews, env, actor)


@router.get("/reviews/{review_id}", **op("get_review"))
async def get_review(review_id: str, env: EnvDep, actor: ActorDep, wait: Wait = 0) -> ReviewRecord:
    if wait:
        return await wait_for(checkups.capture_waiting(env, actor, review_id, timeout=wait))
    return await call(checkups.get_review, env, actor, review_id)


class ScreenshotBody(Body):
    image: str = Field(description="A screenshot as https URL, data URL or base64.")


@router.post("/reviews/{review_id}/screenshots", **op("add_screenshot"))
async def add_screenshot(
    review_id: str, body: ScreenshotBody, env: EnvDep, actor: ActorDep
) -> ReviewRecord:
    return await call(checkups.add_screenshot, env, actor, review_id, body.image)


class FindingBody(Body):
    severity: Literal["suggestion", "a11y", "polish"] | None = None
    body: str = Field(json_schema_extra=text(4000))
    area: AreaBody | None = None
    screenshot_index: JsonInt = Field(0, json_schema_extra={"minimum": 0})
    related_pin: str | None = None


class FindingsBody(Body):
    findings: list[FindingBody] = Field(min_length=1, max_length=checkups.MAX_FINDINGS)


@router.post("/reviews/{review_id}/findings", **op("add_findings"))
async def add_findings(
    review_id: str, body: FindingsBody, env: EnvDep, actor: ActorDep
) -> FindingsResult:
    """Hints beside the person's marks (never must-fix)."""
    items = [f.model_dump(exclude_none=True) for f in body.findings]
    return await call(checkups.add_findings, env, actor, review_id, items)


class MarkUpdate(Body):
    id: str
    status: Literal["in_progress", "resolved"] | None = None
    note: str | None = Field(None, json_schema_extra=text(2000))
    after_image: str | None = None


class ResolveBody(Body):
    marks: list[MarkUpdate] = Field(min_length=1, max_length=checkup_marks.MAX_RESOLVE)


@router.post("/reviews/{review_id}/resolve", **op("resolve_marks"))
async def resolve_marks(
    review_id: str, body: ResolveBody, env: EnvDep, actor: ActorDep
) -> ResolveResult:
    """Report marks in progress or resolved (while changes_requested)."""
    items = [m.model_dump(exclude_none=True) for m in body.marks]
    return await call(checkup_marks.resolve_marks, env, actor, review_id, items)


class SecondOpinionBody(Body):
    screenshot_index: JsonInt | None = Field(None, json_schema_extra={"minimum": 0})


@router.post("/reviews/{review_id}/second-opinion", **op("second_opinion"))
async def second_opinion(
    review_id: str, body: SecondOpinionBody, env: EnvDep, actor: ActorDep
) -> ReviewRecord:
    return await call(checkups.request_second_opinion, env, actor, review_id, body.screenshot_index)


@router.post("/reviews/{review_id}/webhook/resume", **op("resume_webhook"))
async def resume_webhook(review_id: str, env: EnvDep, actor: ActorDep) -> ReviewRecord:
    """Unpause a webhook paused after five failures in a row (and send its last failed
    delivery again)."""
    return await call(webhooks.resume, env, actor, review_id)


@router.get("/billing", **op("get_billing"))
async def get_billing(env: EnvDep, actor: ActorDep) -> BillingRecord:
    """Checkup credits: allowance, used, remaining, refill date and the burn table."""
    return await call(credits.get_billing, env, actor)


class AllowanceBody(Body):
    allowance: JsonInt | None = Field(
        description="Credits a month; null for no limit.",
        json_schema_extra={"minimum": 0, "maximum": credits.ALLOWANCE_MAX},
    )


@router.put("/project/checkup-allowance", **op("set_allowance"))
async def set_allowance(body: AllowanceBody, env: EnvDep, actor: ActorDep) -> BillingRecord:
    return await call(credits.set_allowance, env, actor, body.allowance)


# ---- the person's link ------------------------------------------------------------------------

LINK = "/api/v1/r/{token}"


@person.get(LINK, **op("review_link"))
async def view(token: str, env: EnvDep) -> ReviewRecord:
    """The review as its person sees it (no key: the token is the sign-in)."""
    return await call(checkup_marks.view, env, token)


@person.get(f"{LINK}/live", response_model=LiveState, responses={304: {}}, **op("review_link"))
async def live(token: str, request: Request, env: EnvDep) -> Response:
    """What an open review page polls: its version (also the ETag; send it back as
    If-None-Match and an unchanged review answers 304 with no body)."""
    state = await call(checkup_marks.live, env, token)
    etag = f'"{state.version}"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(state.model_dump_json(), media_type="application/json", headers=headers)


class MarkBody(Body):
    screenshot_index: JsonInt = Field(json_schema_extra={"minimum": 0})
    body: str = Field(json_schema_extra=text(4000))
    severity: Literal[
        "must-fix", "nit", "question", "keep", "wording", "spacing", "size", "color", "alignment"
    ] = "nit"
    area: AreaBody | None = None
    point: PointBody | None = None
    suggested_copy: str | None = Field(None, json_schema_extra=text(2000))


@person.post(f"{LINK}/marks", status_code=201, **op("review_link"))
async def add_mark(token: str, body: MarkBody, env: EnvDep) -> Pin:
    return await call(
        checkup_marks.add_mark,
        env,
        token,
        screenshot_index=body.screenshot_index,
        body=body.body,
        severity=body.severity,
        area=body.area.model_dump() if body.area else None,
        point=body.point.model_dump() if body.point else None,
        suggested_copy=body.suggested_copy,
    )


class NoteBody(Body):
    note: str | None = Field(None, json_schema_extra=text(4000))


@person.post(f"{LINK}/marks/{{mark_id}}/verify", **op("review_link"))
async def verify(token: str, mark_id: str, env: EnvDep) -> Pin:
    return await call(checkup_marks.verify_mark, env, token, mark_id)


@person.post(f"{LINK}/marks/{{mark_id}}/reopen", **op("review_link"))
async def reopen(token: str, mark_id: str, body: NoteBody, env: EnvDep) -> Pin:
    return await call(checkup_marks.reopen_mark, env, token, mark_id, body.note)


class TextBody(Body):
    body: str = Field(json_schema_extra=text(2000))


@person.post(f"{LINK}/marks/{{mark_id}}/comments", **op("review_link"))
async def comment(token: str, mark_id: str, body: TextBody, env: EnvDep) -> Pin:
    return await call(checkup_marks.comment, env, token, mark_id, body.body)


@person.post(f"{LINK}/marks/{{mark_id}}/answer", **op("review_link"))
async def answer(token: str, mark_id: str, body: TextBody, env: EnvDep) -> Pin:
    return await call(checkup_marks.answer_question, env, token, mark_id, body.body)


class AcceptBody(Body):
    severity: Literal[
        "must-fix", "nit", "question", "keep", "wording", "spacing", "size", "color", "alignment"
    ] = "nit"


@person.post(f"{LINK}/hints/{{hint_id}}/accept", status_code=201, **op("review_link"))
async def accept(token: str, hint_id: str, body: AcceptBody, env: EnvDep) -> Pin:
    return await call(checkup_marks.accept_hint, env, token, hint_id, body.severity)


class DecisionBody(Body):
    decision: Literal["approved", "changes_requested"]
    note: str | None = Field(None, json_schema_extra=text(2000))


@person.post(f"{LINK}/decision", **op("review_link"))
async def decide(token: str, body: DecisionBody, env: EnvDep) -> ReviewRecord:
    """Approve, or request changes, with a note; sends review.decided to the webhook."""
    return await call(checkup_marks.decide, env, token, body.decision, body.note)


class GuestBody(Body):
    expires: Literal["7d", "14d", "never"] | None = None
    expires_at: datetime | None = Field(None, strict=False)


@person.post(f"{LINK}/guest-link", **op("review_link"))
async def guest_link(token: str, body: GuestBody, env: EnvDep) -> ReviewRecord:
    """A new guest link (the old one stops working)."""
    expires: Any = body.expires_at or body.expires or "7d"
    return await call(checkup_marks.regenerate_guest_link, env, token, expires)


# ---- the guests' link: suggestions only -------------------------------------------------------

GUEST = "/api/v1/g/{token}"


@person.get(GUEST, **op("guest_link"))
async def guest_view(token: str, env: EnvDep) -> checkup_guests.GuestView:
    """What a guest sees: the screenshots and the suggestions so far."""
    return await call(checkup_guests.view, env, token)


class SuggestionBody(Body):
    screenshot_index: JsonInt = Field(json_schema_extra={"minimum": 0})
    body: str = Field(json_schema_extra=text(4000))
    area: AreaBody | None = None
    point: PointBody | None = None
    name: str | None = Field(None, json_schema_extra=line(60))


@person.post(f"{GUEST}/suggestions", status_code=201, **op("guest_link"))
async def suggest(token: str, body: SuggestionBody, env: EnvDep) -> checkup_guests.GuestView:
    """A guest's suggestion (G1, G2 ...): a hint until the reviewer accepts it."""
    return await call(
        checkup_guests.suggest,
        env,
        token,
        screenshot_index=body.screenshot_index,
        body=body.body,
        area=body.area.model_dump() if body.area else None,
        point=body.point.model_dump() if body.point else None,
        name=body.name,
    )
