"""review.decided deliveries against a real receiver on 127.0.0.1: signed with the review's
secret, retried as jobs after 10 s, 60 s and 5 min, never following a redirect, refused when
the address is no longer allowed at the attempt, https only unless the host is allowed,
paused after five failures in a row, and resumed by the review's owner (service, REST and the
default MCP profile), which sends the last failed decision again."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from tests.conftest import Keys, drain, shot
from tests.webhook_receiver import Receiver, receiving
from viewfinder.app import create_app
from viewfinder.errors import AddressRefused, Conflict, Forbidden, NotFound
from viewfinder.services import checkup_marks, checkups, webhooks
from viewfinder.services.checkup_records import ReviewRecord
from viewfinder.services.env import Env
from viewfinder.store.models import Job, WebhookDelivery, utcnow

PNG = "data:image/png;base64," + base64.b64encode(shot()).decode()


@pytest.fixture
def receiver(env: Env) -> Iterator[Receiver]:
    with receiving() as r:
        env.settings = env.settings.model_copy(update={"capture_allow": f"127.0.0.1:{r.port}"})
        yield r


def open_review(env: Env, keys: Keys, receiver: Receiver, path: str = "/hook") -> ReviewRecord:
    review = checkups.create_review(
        env,
        keys.agent,
        checkups.NewReview(title="Pricing", images=[PNG], webhook_url=receiver.url + path),
    )
    assert review.webhook is not None
    receiver.secret = review.webhook.secret
    return review


def token(review: ReviewRecord) -> str:
    return review.review_url.rsplit("/r/", 1)[1]


def webhook_jobs(env: Env) -> list[Job]:
    with env.db.read() as s:
        return list(s.scalars(select(Job).where(Job.kind == webhooks.JOB).order_by(Job.id)))


def make_due(env: Env) -> None:
    """Bring retries scheduled for later to now, as if their delay had passed."""
    with env.db.write() as s:
        s.execute(update(Job).where(Job.state == "pending").values(run_after=utcnow()))


def test_a_decision_arrives_signed_with_the_event_and_review_headers(
    env: Env, keys: Keys, receiver: Receiver
) -> None:
    review = open_review(env, keys, receiver)
    checkup_marks.decide(env, token(review), "approved", "Looks right")
    drain(env)
    [delivery] = receiver.deliveries
    assert delivery.signed and delivery.path == "/hook"
    assert delivery.headers["x-viewfinder-event"] == "review.decided"
    assert delivery.headers["x-viewfinder-review"] == review.id
    assert delivery.headers["x-viewfinder-signature"].startswith("sha256=")
    body = delivery.json()
    assert body["review"]["id"] == review.id and body["review"]["status"] == "approved"
    assert body["decided_at"]
    state = checkups.get_review(env, keys.agent, review.id).webhook
    assert state is not None and state.last_delivery is not None
    assert state.last_delivery.state == "delivered" and state.state == "active"


def test_a_failed_delivery_is_retried_after_10_s_60_s_and_5_min_then_given_up(
    env: Env, keys: Keys, receiver: Receiver
) -> None:
    receiver.answers = [500, 503, 500, 500]
    review = open_review(env, keys, receiver)
    checkup_marks.decide(env, token(review), "changes_requested")
    delays = []
    for _ in range(4):
        drain(env)
        pending = [j for j in webhook_jobs(env) if j.state == "pending"]
        if pending:
            delays.append(round((pending[0].run_after - pending[0].created_at).total_seconds()))
        make_due(env)
    assert delays == [10, 60, 300]
    assert len(receiver.deliveries) == 4 and all(d.signed for d in receiver.deliveries)
    with env.db.read() as s:
        [delivery] = s.scalars(select(WebhookDelivery))
        assert (delivery.state, delivery.attempts) == ("failed", 4)
        assert delivery.last_error == "the receiver answered 500"


def test_a_redirect_is_never_followed(env: Env, keys: Keys, receiver: Receiver) -> None:
    receiver.answers = [302]
    review = open_review(env, keys, receiver)
    checkup_marks.decide(env, token(review), "approved")
    drain(env)
    assert [d.path for d in receiver.deliveries] == ["/hook"]
    state = checkups.get_review(env, keys.agent, review.id).webhook
    assert state is not None and state.last_delivery is not None
    assert "redirect, which is never followed" in (state.last_delivery.last_error or "")


def test_the_address_is_checked_again_at_every_attempt(
    env: Env, keys: Keys, receiver: Receiver
) -> None:
    review = open_review(env, keys, receiver)
    env.settings = env.settings.model_copy(update={"capture_allow": None})
    checkup_marks.decide(env, token(review), "approved")
    drain(env)
    assert receiver.deliveries == []
    state = checkups.get_review(env, keys.agent, review.id).webhook
    assert state is not None and state.last_delivery is not None
    assert "127.0.0.1" in (state.last_delivery.last_error or "")


def test_webhooks_are_https_unless_the_host_is_allowed(env: Env, keys: Keys) -> None:
    with pytest.raises(AddressRefused, match="https"):
        checkups.create_review(
            env,
            keys.agent,
            checkups.NewReview(title="t", images=[PNG], webhook_url="http://example.com/hook"),
        )
    with pytest.raises(AddressRefused):
        checkups.create_review(
            env,
            keys.agent,
            checkups.NewReview(title="t", images=[PNG], webhook_url="https://10.1.2.3/hook"),
        )


def test_five_failures_in_a_row_pause_the_webhook_and_later_passes_inherit_it(
    env: Env, keys: Keys, receiver: Receiver
) -> None:
    receiver.answers = [500] * 10
    first = open_review(env, keys, receiver)
    mark = checkup_marks.add_mark(env, token(first), screenshot_index=0, body="x")
    checkup_marks.decide(env, token(first), "changes_requested")
    for _ in range(4):
        drain(env)
        make_due(env)
    checkup_marks.resolve_marks(env, keys.agent, first.id, [{"id": mark.id}])
    second = checkups.create_review(
        env, keys.agent, checkups.NewReview(title="Pass 2", images=[PNG], parent_id=first.id)
    )
    assert second.webhook is not None and second.webhook.url == receiver.url + "/hook"
    assert second.webhook.secret == first.webhook.secret  # type: ignore[union-attr]
    # The four failures of pass 1 carry over with the webhook: the fifth in a row pauses it.
    assert second.webhook.failures == 4 and second.webhook.state == "active"
    checkup_marks.decide(env, token(second), "approved")
    drain(env)
    paused = checkups.get_review(env, keys.agent, second.id).webhook
    assert paused is not None and paused.state == "paused"
    assert paused.last_delivery is not None and "paused after 5 failures" in (
        paused.last_delivery.last_error or ""
    )
    assert [j for j in webhook_jobs(env) if j.state == "pending"] == []
    assert timedelta(0) < utcnow() - paused.last_delivery.created_at


def pause(env: Env, keys: Keys, receiver: Receiver) -> ReviewRecord:
    """A review whose webhook the fifth failure in a row paused (four came before it)."""
    from viewfinder.store.models import Checkup

    receiver.answers = [500]
    review = open_review(env, keys, receiver)
    with env.db.write() as s:
        s.execute(update(Checkup).where(Checkup.id == review.id).values(webhook_failures=4))
    checkup_marks.decide(env, token(review), "approved", "Ship it")
    drain(env)
    paused = checkups.get_review(env, keys.agent, review.id)
    assert paused.webhook is not None and paused.webhook.state == "paused"
    return paused


def test_a_paused_webhook_resumes_and_sends_the_last_decision_again(
    env: Env, keys: Keys, receiver: Receiver
) -> None:
    review = pause(env, keys, receiver)
    assert [d.signed for d in receiver.deliveries] == [True]
    resumed = webhooks.resume(env, keys.agent, review.id)
    assert resumed.webhook is not None
    assert (resumed.webhook.state, resumed.webhook.failures) == ("active", 0)
    drain(env)
    first, again = receiver.deliveries
    assert again.signed and again.json()["review"]["decision_note"] == "Ship it"
    assert again.headers["x-viewfinder-delivery"] == first.headers["x-viewfinder-delivery"]
    state = checkups.get_review(env, keys.agent, review.id).webhook
    assert state is not None and state.last_delivery is not None
    assert (state.state, state.failures, state.last_delivery.state) == ("active", 0, "delivered")
    with pytest.raises(Conflict, match="is not paused \\(0 failures in a row\\)"):
        webhooks.resume(env, keys.agent, review.id)


def test_resuming_is_refused_without_a_webhook_or_by_a_key_without_the_review_role(
    env: Env, keys: Keys
) -> None:
    bare = checkups.create_review(env, keys.agent, checkups.NewReview(title="t", images=[PNG]))
    with pytest.raises(Conflict, match="has no webhook"):
        webhooks.resume(env, keys.agent, bare.id)
    with pytest.raises(Forbidden, match="review"):
        webhooks.resume(env, keys.ci, bare.id)
    with pytest.raises(NotFound):
        webhooks.resume(env, keys.agent, "rev_nothing")


def test_the_owner_resumes_over_rest(env: Env, keys: Keys, receiver: Receiver) -> None:
    review = pause(env, keys, receiver)
    agent_key = keys.secrets["agent"]
    with TestClient(create_app(env=env, workers=0)) as client:
        path = f"/api/v1/reviews/{review.id}/webhook/resume"
        refused = client.post(path, headers={"Authorization": f"Bearer {keys.secrets['ci']}"})
        assert refused.status_code == 403, refused.text
        answer = client.post(path, headers={"Authorization": f"Bearer {agent_key}"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["webhook"]["state"] == "active"
        again = client.post(path, headers={"Authorization": f"Bearer {agent_key}"})
        assert again.status_code == 409 and "not paused" in again.json()["error"]["message"]
    drain(env)
    assert len(receiver.deliveries) == 2 and receiver.deliveries[1].signed
