"""The ReviseMy profile (/mcp/revisemy, `viewfinder mcp --profile revisemy`): ReviseMy's design
checkup tools with its argument names, result fields and bracketed error codes, over
Viewfinder's checkup services. The default profile's twins (open_checkup, get_checkup,
add_to_checkup, resolve_checkup_marks) run the same functions under Viewfinder's names.

Approving and verifying are not here: the person does them on the review page, signed in by
the link's token, which no agent key replaces."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from viewfinder.errors import CaptureFailed, InvalidInput
from viewfinder.mcp import review_app
from viewfinder.mcp.revisemy_shapes import (
    AddFindingsArgs,
    AddMarkArgs,
    AddScreenshotArgs,
    AddToCheckupArgs,
    CancelArgs,
    CheckoutArgs,
    CreateReviewArgs,
    DecideArgs,
    GetCheckupArgs,
    IdArg,
    NoArgs,
    PaymentAnswer,
    ResolveMarksArgs,
    SecondOpinionArgs,
    VerifyArgs,
)
from viewfinder.mcp.tooling import Call, Result, TextResult, ToolSpec
from viewfinder.services import checkup_marks, checkups, credits, permissions
from viewfinder.services.checkup_records import (
    FindingsResult,
    ResolveResult,
    ReviewList,
    ReviewRecord,
    ReviewSummary,
)
from viewfinder.services.credits import BillingRecord

A = TypeVar("A", bound=BaseModel)


class ProviderFailed(CaptureFailed):
    """ReviseMy's name for a capture that failed on the far side."""

    code = "capture_provider_failed"


def _codes(run: Callable[[Call, A], Result]) -> Callable[[Call, A], Result]:
    """ReviseMy's bracketed codes where they differ from Viewfinder's."""

    @functools.wraps(run)
    def coded(call: Call, args: A) -> Result:
        try:
            return run(call, args)
        except CaptureFailed as exc:
            if isinstance(exc, ProviderFailed):
                raise
            raise ProviderFailed(f"{exc.message}; retry once with images", **exc.details) from None

    return coded


def review_text(review: ReviewRecord) -> str:
    """What a host without Apps shows: the link, what to do, and a failed capture's reason."""
    lines = [
        f"Review {review.id} (pass {review.pass_number}, {review.status}): {review.review_url}",
        f"Next: {review.next_action.action} — {review.next_action.summary}",
    ]
    if review.capture.state == "failed":
        lines.append(
            f"The capture failed ({review.capture.reason}); the review is open with a "
            "placeholder (meta.origin capture_failed). Add the page with add_screenshot, "
            "desktop and mobile, before you share the link."
        )
    elif review.capture.state == "queued":
        lines.append("The screenshots are still being captured: poll get_review.")
    loop = review.loop
    if loop.outstanding or loop.awaiting_verification:
        lines.append(
            f"Marks: {loop.must_fix} must-fix, {loop.nits} nits, {loop.questions} questions, "
            f"{loop.outstanding} outstanding, {loop.awaiting_verification} awaiting verification."
        )
    return "\n".join(lines)


def _answer(review: ReviewRecord, record: BaseModel | None = None) -> TextResult:
    shown = record or review
    return TextResult([review_text(review), shown.model_dump_json(by_alias=True)], shown)


def _created(call: Call, a: CreateReviewArgs) -> ReviewRecord:
    new = checkups.NewReview(**a.model_dump())
    review = checkups.create_review(call.env, call.actor, new)
    wait = call.env.settings.checkup_capture_wait_seconds
    if review.capture.state == "queued" and wait:
        review = checkups.wait_for_capture(call.env, call.actor, review.id, timeout=wait)
    return review


def _create(call: Call, a: CreateReviewArgs) -> Result:
    return _answer(_created(call, a))


def _get(call: Call, a: IdArg) -> Result:
    return _answer(checkups.get_review(call.env, call.actor, a.id))


def _list(call: Call, _: NoArgs) -> Result:
    return checkups.list_reviews(call.env, call.actor)


def _add_screenshot(call: Call, a: AddScreenshotArgs) -> Result:
    return _answer(checkups.add_screenshot(call.env, call.actor, a.id, a.image))


def _findings(a: AddFindingsArgs | AddToCheckupArgs) -> list[dict[str, Any]]:
    return [f.model_dump(exclude_none=True) for f in a.findings or []]


def _add_findings(call: Call, a: AddFindingsArgs) -> Result:
    result = checkups.add_findings(call.env, call.actor, a.id, _findings(a))
    return _answer(result.review, result)


def _resolved(call: Call, a: ResolveMarksArgs) -> ResolveResult:
    marks = [m.model_dump(exclude_none=True) for m in a.marks]
    return checkup_marks.resolve_marks(call.env, call.actor, a.id, marks)


def _resolve(call: Call, a: ResolveMarksArgs) -> Result:
    result = _resolved(call, a)
    lines = [f"{u.number}: {u.summary}" for u in result.updated]
    lines += [f"skipped {s.id}: {s.reason}" for s in result.skipped]
    lines.append(f"Next: {result.next_action.action} — {result.next_action.summary}")
    return TextResult(["\n".join(lines), result.model_dump_json(by_alias=True)], result)


def _second_opinion(call: Call, a: SecondOpinionArgs) -> Result:
    review = checkups.request_second_opinion(call.env, call.actor, a.id, a.screenshot_index)
    return _answer(review)


def _billing(call: Call, _: NoArgs) -> Result:
    return credits.get_billing(call.env, call.actor)


def _refuse(what: str) -> Callable[[Call, Any], Result]:
    def refuse(call: Call, _: Any) -> Result:
        raise credits.refuse_payment(what)

    return refuse


# ---- the default profile's twins --------------------------------------------------------------


class CheckupView(BaseModel):
    """One checkup (with id), or the ones this key opened (without)."""

    review: ReviewRecord | None = None
    reviews: list[ReviewSummary] | None = None


def _get_checkup(call: Call, a: GetCheckupArgs) -> Result:
    if a.id is None:
        listed = checkups.list_reviews(call.env, call.actor)
        return CheckupView(reviews=listed.reviews)
    return CheckupView(review=checkups.get_review(call.env, call.actor, a.id))


def _add_to(call: Call, a: AddToCheckupArgs) -> Result:
    permissions.require(call.actor, "add_findings")  # the role first, then the arguments
    chosen = [
        n
        for n, v in (
            ("image", a.image),
            ("findings", a.findings),
            ("second_opinion", a.second_opinion),
        )
        if v
    ]
    if len(chosen) != 1:
        raise InvalidInput("add one thing a call: image, findings or second_opinion: true")
    if a.image:
        review = checkups.add_screenshot(call.env, call.actor, a.id, a.image)
        result = FindingsResult(added=[], review=review)
    elif a.findings:
        result = checkups.add_findings(call.env, call.actor, a.id, _findings(a))
    else:
        review = checkups.request_second_opinion(call.env, call.actor, a.id, a.screenshot_index)
        result = FindingsResult(added=[], review=review)
    return result


# ---- the app-only tools: the person, through the review app, with the link's token --------------


def _by_token(call: Call, token: str) -> ReviewRecord:
    return checkup_marks.view(call.env, token)


def _add_mark(call: Call, a: AddMarkArgs) -> Result:
    checkup_marks.add_mark(
        call.env,
        a.token,
        screenshot_index=a.screenshot_index,
        body=a.body,
        severity=a.severity,
        area=a.area.model_dump() if a.area else None,
        point=a.point.model_dump() if a.point else None,
        suggested_copy=a.suggested_copy,
    )
    return _answer(_by_token(call, a.token))


def _decide(call: Call, a: DecideArgs) -> Result:
    return _answer(checkup_marks.decide(call.env, a.token, a.decision, a.note))


def _verify(call: Call, a: VerifyArgs) -> Result:
    if a.verified:
        checkup_marks.verify_mark(call.env, a.token, a.mark_id)
    else:
        checkup_marks.reopen_mark(call.env, a.token, a.mark_id)
    return _answer(_by_token(call, a.token))


APP_ONLY = review_app.linked(["app"])
APP_NOTE = " For the review app only (hidden from the model): agents never call it."

CREATE = (
    "Use when the person wants something visual (a page, screen, email or deck) checked, "
    "marked up or signed off before it ships, or after you change UI. Not for code review. "
    "Start or continue a design checkup loop: provide exactly one source — capture_url+page_url "
    "(website), html (email), pdf (slides), or images (local UI as data URLs) — and get a "
    "review URL for the human. Pass parent_id after changes_requested to open the next pass "
    "with fresh screenshots. Always paste review_url to the human."
)
GET = (
    "Poll the design checkup: status, next_action, human marks in work_packets.pins "
    "(authoritative), second_opinion hints, and for each resolved mark whether its area changed "
    "between passes. Follow next_action — wait, apply marks + create next pass, or stop when "
    "approved."
)
RESOLVE = (
    "Report progress on human marks while fixing them: set each mark to in_progress or "
    "resolved (with a short note on what you changed). When resolving, optionally attach "
    "after_image — a screenshot of the fixed area. Works while changes_requested. Verifying "
    "stays the human's job — never claim a mark is done for them."
)

TOOLS: list[ToolSpec] = [
    ToolSpec(
        "create_review",
        CREATE,
        CreateReviewArgs,
        ReviewRecord,
        _codes(_create),
        operation="create_review",
        meta=review_app.linked(),
    ),
    ToolSpec(
        "get_review",
        GET,
        IdArg,
        ReviewRecord,
        _get,
        read_only=True,
        operation="get_review",
        meta=review_app.linked(),
    ),
    ToolSpec(
        "list_reviews",
        "List recent design reviews for this key only. Returns pass #, status, next_action, and "
        "outstanding / awaiting-verification counts — not full work packets. Call get_review "
        "for pins.",
        NoArgs,
        ReviewList,
        _list,
        read_only=True,
        operation="list_reviews",
    ),
    ToolSpec(
        "add_screenshot",
        "Append another screenshot to an open design review that is still waiting on feedback.",
        AddScreenshotArgs,
        ReviewRecord,
        _codes(_add_screenshot),
        operation="add_screenshot",
    ),
    ToolSpec(
        "add_findings",
        "Act as a design-reviewer subagent: push suggestion/a11y/polish findings into an open "
        "review for the human to see alongside their marks. Never use must-fix — human marks "
        "stay authoritative.",
        AddFindingsArgs,
        FindingsResult,
        _add_findings,
        operation="add_findings",
    ),
    ToolSpec(
        "resolve_marks",
        RESOLVE,
        ResolveMarksArgs,
        ResolveResult,
        _codes(_resolve),
        operation="resolve_marks",
    ),
    ToolSpec(
        "request_second_opinion",
        "Run the second opinion again (a checklist measured from the screenshots' pixels, "
        "axe-core for pages and emails, and a vision model when the server has one) for a "
        "review. Findings are suggestions only and never change review status.",
        SecondOpinionArgs,
        ReviewRecord,
        _second_opinion,
        operation="second_opinion",
    ),
    ToolSpec(
        "get_billing",
        "Show this project's plan, credits remaining, refill date and the burn table "
        "(images/pdf=1, html=3, capture_url=5). A self-hosted server has no limit unless an "
        "admin set a monthly allowance; it takes no payments.",
        NoArgs,
        BillingRecord,
        _billing,
        read_only=True,
        operation="get_billing",
    ),
    ToolSpec(
        "create_checkout",
        "Start a checkout link for the human. On this self-hosted server it answers "
        "[payments_disabled] with what an admin does instead.",
        CheckoutArgs,
        PaymentAnswer,
        _refuse("create_checkout"),
        operation="payments",
    ),
    ToolSpec(
        "create_portal",
        "Open the billing manage page. On this self-hosted server it answers "
        "[payments_disabled] with what an admin does instead.",
        NoArgs,
        PaymentAnswer,
        _refuse("create_portal"),
        operation="payments",
    ),
    ToolSpec(
        "cancel_subscription",
        "Cancel a subscription. On this self-hosted server it answers [payments_disabled]: "
        "there is none to cancel.",
        CancelArgs,
        PaymentAnswer,
        _refuse("cancel_subscription"),
        destructive=True,
        operation="payments",
    ),
    ToolSpec(
        "add_mark",
        "The person marks a screenshot (M1, M2 ...) in the review app." + APP_NOTE,
        AddMarkArgs,
        ReviewRecord,
        _add_mark,
        operation="review_link",
        meta=APP_ONLY,
    ),
    ToolSpec(
        "decide_review",
        "The person approves or requests changes in the review app." + APP_NOTE,
        DecideArgs,
        ReviewRecord,
        _decide,
        operation="review_link",
        meta=APP_ONLY,
    ),
    ToolSpec(
        "verify_mark",
        "The person verifies (or, with verified false, reopens) a resolved mark in the review "
        "app." + APP_NOTE,
        VerifyArgs,
        ReviewRecord,
        _verify,
        operation="review_link",
        meta=APP_ONLY,
    ),
]

DEFAULT_TOOLS: list[ToolSpec] = [
    ToolSpec(
        "open_checkup",
        CREATE.replace("parent_id", "parent_id (a rev_ id)"),
        CreateReviewArgs,
        ReviewRecord,
        _codes(_created),
        operation="create_review",
    ),
    ToolSpec(
        "get_checkup",
        GET + " Without id: the checkups this key opened, newest first.",
        GetCheckupArgs,
        CheckupView,
        _get_checkup,
        read_only=True,
        operation="get_review",
    ),
    ToolSpec(
        "add_to_checkup",
        "Add one thing to an open checkup: a screenshot (while the person has not decided), "
        "hints beside the person's marks (suggestion, a11y, polish; never must-fix), or a "
        "fresh second opinion of its screenshots.",
        AddToCheckupArgs,
        FindingsResult,
        _add_to,
        operation="add_findings",
    ),
    ToolSpec(
        "resolve_checkup_marks",
        RESOLVE,
        ResolveMarksArgs,
        ResolveResult,
        _resolved,
        operation="resolve_marks",
    ),
]
