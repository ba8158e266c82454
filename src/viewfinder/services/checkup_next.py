"""Where a design checkup stands and what its agent does next: the status readers see (a
pass past its link's expiry is expired) and next_action with its one-sentence guidance."""

from __future__ import annotations

from datetime import datetime

from viewfinder.services.checkup_records import Loop, NextAction
from viewfinder.store.models import Checkup, utcnow


def status_of(checkup: Checkup, now: datetime | None = None) -> str:
    """The status as readers see it: a review past its link's expiry is expired, unless the
    person approved it."""
    if checkup.status != "approved" and checkup.expires_at <= (now or utcnow()):
        return "expired"
    return checkup.status


def next_action(checkup: Checkup, status: str, loop: Loop, child: Checkup | None) -> NextAction:
    n = checkup.pass_number
    if status == "expired":
        return NextAction(
            action="expired",
            summary=f"Pass {n}'s link expired before the person decided; open a new review if "
            "it still needs one.",
        )
    if status == "approved":
        return NextAction(action="done", summary=f"The person approved pass {n}. Stop here.")
    if status == "pending":
        capturing = (
            " (its screenshots are still being captured)"
            if (checkup.capture_state == "queued")
            else ""
        )
        return NextAction(
            action="wait_for_human",
            summary=f"Pass {n} waits for the person{capturing}: share review_url, then poll "
            "get_review about every 30 s (or wait for the webhook) until they decide.",
        )
    if child is not None:
        return NextAction(
            action="done",
            summary=f"Pass {child.pass_number} ({child.id}) follows this one: poll that review.",
        )
    if loop.outstanding:
        return NextAction(
            action="apply_pins_then_next_pass",
            summary=f"{loop.outstanding} mark(s) to fix ({loop.must_fix} must-fix, {loop.nits} "
            f"nits, {loop.questions} questions): fix must-fix first, report each with "
            "resolve_marks, then create_review with parent_id and fresh screenshots.",
        )
    return NextAction(
        action="open_next_pass",
        summary=f"Every mark of pass {n} is resolved: call create_review with parent_id "
        f"{checkup.id} and fresh screenshots so the person can verify.",
    )


GUIDANCE = {
    "wait_for_human": "Paste review_url to the person now; nothing is yours to do until they "
    "decide.",
    "apply_pins_then_next_pass": "Fix the must-fix marks first, then nits and tweaks; leave "
    "keeps alone and ask the person before answering an open question.",
    "open_next_pass": "Capture the fixed screens again and open the next pass with parent_id.",
    "done": "Nothing left to do on this pass.",
    "expired": "This review's link no longer works.",
}
