"""The review.decided webhook: when the person decides a pass, its webhook_url gets a POST of
``{event, decided_at, review}`` signed with HMAC-SHA256 of the raw body (the review's webhook
secret, which its owner reads in get_review). Each attempt is a job: 10 s timeout, no
redirects, https only unless the host is allowed, the address checked by the capture guard
at every attempt (a name that now resolves to a private address is refused). A failed
attempt is retried after 10 s, 60 s and 5 min; five failures in a row pause the webhook."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.capture import fetch
from viewfinder.errors import Conflict, ViewfinderError
from viewfinder.ids import new_id
from viewfinder.jobs import queue, registry
from viewfinder.services import checkup_shots, permissions, scoping
from viewfinder.services.checkup_records import ReviewRecord
from viewfinder.services.checkup_view import review_record
from viewfinder.services.env import Actor, Env
from viewfinder.store.models import Checkup, WebhookDelivery, utcnow

log = logging.getLogger("viewfinder.webhooks")
EVENT = "review.decided"
JOB = "webhook"
RETRY_DELAYS = (10.0, 60.0, 300.0)
PAUSE_AFTER = 5
RESPONSE_LIMIT = 64 * 1024
HEADER_EVENT = "X-Viewfinder-Event"
HEADER_REVIEW = "X-Viewfinder-Review"
HEADER_SIGNATURE = "X-Viewfinder-Signature"
HEADER_DELIVERY = "X-Viewfinder-Delivery"


def signature(secret: str, body: bytes) -> str:
    """``sha256=<hex HMAC-SHA256 of the raw body>``, as receivers check it."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def queue_decided(s: Session, checkup: Checkup, review: ReviewRecord) -> str | None:
    """Queue the review.decided delivery in the caller's transaction (nothing when the review
    has no webhook, or it is paused). Returns the delivery's id."""
    if not checkup.webhook_url or not checkup.webhook_secret or checkup.webhook_paused_at:
        return None
    decided_at = checkup.decided_at or utcnow()
    body = json.dumps(
        {
            "event": EVENT,
            "decided_at": decided_at.isoformat(),
            "review": review.model_dump(mode="json", by_alias=True),
        },
        separators=(",", ":"),
    )
    delivery = WebhookDelivery(
        id=new_id("whd"),
        project_id=checkup.project_id,
        checkup_id=checkup.id,
        event=EVENT,
        url=checkup.webhook_url,
        body=body,
        attempts=0,
        state="pending",
        created_at=utcnow(),
    )
    s.add(delivery)
    s.flush()
    queue.enqueue(s, JOB, delivery.id)
    return delivery.id


def _attempt(
    env: Env, url: str, secret: str, body: bytes, delivery: str, review: str
) -> str | None:
    """One POST; None when the receiver took it (2xx), else why not."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Viewfinder-Webhook",
        HEADER_EVENT: EVENT,
        HEADER_REVIEW: review,
        HEADER_DELIVERY: delivery,
        HEADER_SIGNATURE: signature(secret, body),
    }
    guard = checkup_shots.policy(env).guard
    try:
        guard.check_url(url, what="webhook_url", https_only=True)
        answer = fetch(
            url,
            guard=guard,
            timeout=env.settings.webhook_timeout_seconds,
            max_bytes=RESPONSE_LIMIT,
            what="the webhook",
            method="POST",
            content=body,
            headers=headers,
            https_only=True,
            follow_redirects=False,
            fail_on_status=False,
        )
    except ViewfinderError as exc:
        return exc.message
    if 200 <= answer.status < 300:
        return None
    if 300 <= answer.status < 400:
        return f"the receiver answered {answer.status} (a redirect, which is never followed)"
    return f"the receiver answered {answer.status}"


def deliver(env: Env, delivery_id: str, job_id: int | None = None) -> bool:
    """The webhook job: one attempt, and the next one scheduled when it failed."""
    with env.db.read() as s:
        delivery = s.get(WebhookDelivery, delivery_id)
        checkup = s.get(Checkup, delivery.checkup_id) if delivery else None
        if delivery is None or checkup is None or delivery.state != "pending":
            return False
        paused = checkup.webhook_paused_at is not None
        url, secret, body = delivery.url, checkup.webhook_secret or "", delivery.body
        checkup_id = checkup.id
    problem = (
        "the webhook is paused"
        if paused
        else _attempt(env, url, secret, body.encode(), delivery_id, checkup_id)
    )
    with env.db.write() as s:
        delivery = s.get(WebhookDelivery, delivery_id, with_for_update=True)
        checkup = s.get(Checkup, checkup_id, with_for_update=True)
        assert delivery is not None and checkup is not None
        delivery.attempts += 1
        if problem is None:
            delivery.state = "delivered"
            delivery.delivered_at = utcnow()
            delivery.last_error = None
            checkup.webhook_failures = 0
            return False
        delivery.last_error = problem
        if paused:
            delivery.state = "failed"
            return False
        checkup.webhook_failures += 1
        if checkup.webhook_failures >= PAUSE_AFTER:
            checkup.webhook_paused_at = utcnow()
            delivery.state = "failed"
            delivery.last_error = f"{problem}; paused after {PAUSE_AFTER} failures in a row"
            log.warning("webhook of review %s paused: %s", checkup.id, problem)
        elif delivery.attempts <= len(RETRY_DELAYS):
            queue.enqueue(s, JOB, delivery_id, delay=RETRY_DELAYS[delivery.attempts - 1])
        else:
            delivery.state = "failed"
    return False


def resume(env: Env, actor: Actor, review_id: str) -> ReviewRecord:
    """Unpause a review's webhook once its receiver works again: the count of failures in a
    row starts at 0 on every pass that shares the webhook, and the review's last delivery, if
    it failed, is sent again (with its retries). Raises NotFound, Conflict (no webhook, or
    not paused)."""
    permissions.require(actor, "resume_webhook")
    with env.db.write() as s:
        checkup = scoping.owned(s, Checkup, review_id, actor, "review", lock=True)
        if not checkup.webhook_url or not checkup.webhook_secret:
            raise Conflict(
                f"review {review_id} has no webhook: give webhook_url when opening the next pass",
                review_id=review_id,
            )
        if checkup.webhook_paused_at is None:
            raise Conflict(
                f"the webhook of review {review_id} is not paused ({checkup.webhook_failures} "
                "failures in a row): it needs no resuming",
                review_id=review_id,
            )
        sharing = s.scalars(
            select(Checkup)
            .where(
                Checkup.root_id == checkup.root_id,
                Checkup.webhook_secret == checkup.webhook_secret,
            )
            .with_for_update()
        )
        for row in sharing:
            row.webhook_failures = 0
            row.webhook_paused_at = None
        last = s.scalar(
            select(WebhookDelivery)
            .where(WebhookDelivery.checkup_id == checkup.id)
            .order_by(WebhookDelivery.id.desc())
            .limit(1)
            .with_for_update()
        )
        if last is not None and last.state == "failed":
            last.state = "pending"
            last.attempts = 0
            s.flush()
            queue.enqueue(s, JOB, last.id)
        checkup.updated_at = utcnow()
        s.flush()
        log.info("webhook of review %s resumed", checkup.id)
        return review_record(env, s, checkup)


def _give_up(env: Env, delivery_id: str, reason: str) -> None:
    with env.db.write() as s:
        delivery = s.get(WebhookDelivery, delivery_id, with_for_update=True)
        if delivery is not None and delivery.state == "pending":
            delivery.state = "failed"
            delivery.last_error = reason


registry.register(registry.Kind(JOB, deliver, _give_up, time_limit=60.0))
