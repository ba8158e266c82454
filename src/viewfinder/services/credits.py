"""Checkup credits: what each kind of source costs (the burn table), against a monthly
allowance per project that an admin sets. A self-hosted server has no limit until one is set,
and takes no payments: checkout, the billing portal and cancelling answer PaymentsDisabled,
which says how an admin raises the allowance instead."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from viewfinder.errors import InsufficientCredits, InvalidInput, PaymentsDisabled
from viewfinder.services import permissions
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.store.models import Checkup, CreditSpend, Project, utcnow

Source = Literal["images", "pdf", "html", "capture"]
# What one review costs by its source; the names are the ones agents see (capture_url).
BURN: dict[str, int] = {"images": 1, "pdf": 1, "html": 3, "capture": 5}
BURN_TABLE = {"images": 1, "pdf": 1, "html": 3, "capture_url": 5}
ALLOWANCE_MAX = 10_000_000
RAISE_HINT = (
    "an admin raises the allowance with `viewfinder checkup allowance N` (or none for no "
    "limit), or PUT /api/v1/project/checkup-allowance"
)


class BillingRecord(Record):
    plan: str = Field(description="self-hosted: no payments; credits come from the allowance.")
    allowance: int | None = Field(description="Credits a month; null: no limit.")
    used: int = Field(description="Credits spent this month.")
    remaining: int | None = Field(description="Credits left this month; null: no limit.")
    refills_at: datetime = Field(description="When this month's credits renew (UTC).")
    burn: dict[str, int] = Field(description="Credits per review by its source.")
    note: str


def month_start(now: datetime) -> datetime:
    return datetime(now.year, now.month, 1, tzinfo=UTC)


def next_refill(now: datetime) -> datetime:
    year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def _used(s: Session, project_id: str, now: datetime) -> int:
    total = s.scalar(
        select(func.coalesce(func.sum(CreditSpend.credits), 0)).where(
            CreditSpend.project_id == project_id, CreditSpend.spent_at >= month_start(now)
        )
    )
    return int(total or 0)


def spend(s: Session, actor: Actor, checkup_id: str, source: str) -> int:
    """Charge a review's credits in the caller's transaction (the project's row is locked, so
    two reviews cannot both take the last credits). Raises InsufficientCredits."""
    cost = BURN[source]
    project = s.get(Project, actor.project_id, with_for_update=True)
    assert project is not None
    now = utcnow()
    if project.checkup_allowance is not None:
        used = _used(s, actor.project_id, now)
        left = project.checkup_allowance - used
        if cost > left:
            raise InsufficientCredits(
                f"this review costs {cost} credits and {max(left, 0)} of this month's "
                f"{project.checkup_allowance} are left; they renew on "
                f"{next_refill(now):%Y-%m-%d}. Call get_billing for the details; {RAISE_HINT}.",
                cost=cost,
                remaining=max(left, 0),
            )
    s.add(
        CreditSpend(
            project_id=actor.project_id,
            checkup_id=checkup_id,
            source=source,
            credits=cost,
            spent_at=now,
        )
    )
    return cost


def refund(s: Session, checkup: Checkup) -> int:
    """Give back a review's credits in the caller's transaction, when its capture produced no
    screenshot at all (only placeholders, ``meta.origin: capture_failed``). Credits are still
    charged when the review opens, so the allowance refuses at once and two reviews cannot
    both take the last credits; the refund is a negative spend dated with the charge (the
    same month's count goes down). A capture that kept some screenshots is charged in full.
    Returns the credits given back (0 the second time)."""
    if checkup.credits <= 0:
        return 0
    charged = s.scalar(
        select(func.min(CreditSpend.spent_at)).where(
            CreditSpend.checkup_id == checkup.id, CreditSpend.credits > 0
        )
    )
    s.add(
        CreditSpend(
            project_id=checkup.project_id,
            checkup_id=checkup.id,
            source="refund",
            credits=-checkup.credits,
            spent_at=charged or utcnow(),
        )
    )
    given, checkup.credits = checkup.credits, 0
    return given


def _billing(s: Session, project_id: str) -> BillingRecord:
    project = s.get(Project, project_id)
    assert project is not None
    now = utcnow()
    used = _used(s, project_id, now)
    allowance = project.checkup_allowance
    note = (
        "No limit on this self-hosted server: reviews are counted, never refused."
        if allowance is None
        else f"{allowance} credits a month, renewed on the 1st (no rollover); {RAISE_HINT}."
    )
    return BillingRecord(
        plan="self-hosted",
        allowance=allowance,
        used=used,
        remaining=None if allowance is None else max(allowance - used, 0),
        refills_at=next_refill(now),
        burn=dict(BURN_TABLE),
        note=note,
    )


def get_billing(env: Env, actor: Actor) -> BillingRecord:
    """The project's allowance, what this month used and the burn table."""
    permissions.require(actor, "get_billing")
    with env.db.read() as s:
        return _billing(s, actor.project_id)


def set_allowance(env: Env, actor: Actor, allowance: int | None) -> BillingRecord:
    """Set the project's monthly checkup credits (None: no limit). Raises Forbidden (admin
    only), InvalidInput."""
    permissions.require(actor, "set_allowance")
    if allowance is not None and (
        isinstance(allowance, bool) or not 0 <= allowance <= ALLOWANCE_MAX
    ):
        raise InvalidInput(f"an allowance is 0 to {ALLOWANCE_MAX:,} credits, or none for no limit")
    with env.db.write() as s:
        project = s.get(Project, actor.project_id, with_for_update=True)
        assert project is not None
        project.checkup_allowance = allowance
        s.flush()
        return _billing(s, actor.project_id)


def refuse_payment(what: str) -> PaymentsDisabled:
    """The answer of checkout, portal and cancel on a self-hosted server."""
    return PaymentsDisabled(
        f"{what} is not offered: this is a self-hosted Viewfinder server, which takes no "
        f"payments. Credits come from the project's monthly allowance (see get_billing); "
        f"{RAISE_HINT}."
    )
