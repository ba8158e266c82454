"""Design checkups in the services: a review from each source with its refusals, the person's
marks through the review link only, the agent's resolve_marks with updated and skipped, the
next pass with reopened marks carried over and each resolved mark's area compared between
passes, hints, and credits."""

from __future__ import annotations

import base64
import dataclasses
from datetime import timedelta

import pytest
from sqlalchemy import select

from tests.capture_site import WIDE_EMAIL
from tests.conftest import Keys, drain, shot
from viewfinder.errors import (
    AddressRefused,
    Conflict,
    Forbidden,
    InsufficientCredits,
    InvalidInput,
    NotFound,
    PaymentsDisabled,
)
from viewfinder.services import checkup_marks, checkups, credits, threads
from viewfinder.services.checkup_records import ReviewRecord
from viewfinder.services.checkups import NewReview
from viewfinder.services.env import Env

WHITE = shot(size=(200, 100))
# A button (the box at 20..60 x 20..40) drawn black, then fixed (grey) on the next pass.
BUTTON = shot(box=(20, 20, 60, 40), size=(200, 100))
FIXED = shot(box=(20, 20, 60, 40), size=(200, 100), fill=(120, 120, 120))


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def token_of(review_url: str) -> str:
    return review_url.rsplit("/r/", 1)[1]


def open_images(env: Env, keys: Keys, *pngs: bytes, **fields: object) -> ReviewRecord:
    return checkups.create_review(
        env,
        keys.agent,
        NewReview(title="Checkout", images=[data_url(p) for p in pngs], **fields),  # type: ignore[arg-type]
    )


def test_a_review_from_images_answers_the_whole_review_object(env: Env, keys: Keys) -> None:
    review = open_images(env, keys, BUTTON, WHITE, context="Look at the button")
    assert review.status == "pending" and review.type == "ui" and review.pass_number == 1
    assert review.next_action.action == "wait_for_human"
    assert review.review_url.startswith(env.settings.public_url + "/r/")
    assert review.board_url == review.review_url + "/board"
    assert review.guest_share_url and review.expires_at > review.created_at
    assert [s.label for s in review.screenshots] == ["image-1", "image-2"]
    assert review.screenshots[0].meta["origin"] == "image"
    assert review.credits == 1
    dumped = review.model_dump(mode="json")
    assert dumped["pass"] == 1 and "pass_number" not in dumped
    assert set(dumped["work_packets"]) == {
        "pins",
        "must_fix",
        "nits",
        "questions",
        "tweaks",
        "keeps",
        "awaiting_verification",
        "carried_over",
        "second_opinion",
    }
    assert checkups.list_reviews(env, keys.agent).reviews[0].id == review.id


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({}, "this call gave none"),
        ({"images": [data_url(WHITE)], "html": "<p>hi</p>"}, "gave images and html"),
        ({"images": [data_url(WHITE)] * 6}, "images takes 1 to 5 screenshots; this call sent 6"),
    ],
)
def test_a_review_needs_exactly_one_source_and_the_error_names_the_four(
    env: Env, keys: Keys, fields: dict[str, object], said: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        checkups.create_review(env, keys.agent, NewReview(title="t", **fields))  # type: ignore[arg-type]
    assert said in caught.value.message
    if "gave" in said:
        for name in ("images", "capture_url", "pdf", "html"):
            assert name in caught.value.message
    assert checkups.list_reviews(env, keys.agent).reviews == []


def test_a_private_page_url_is_refused_before_anything_is_written(env: Env, keys: Keys) -> None:
    with pytest.raises(AddressRefused):
        checkups.create_review(
            env,
            keys.agent,
            NewReview(title="t", capture_url=True, page_url="http://127.0.0.1:9/admin"),
        )
    with pytest.raises(InvalidInput, match="needs page_url"):
        checkups.create_review(env, keys.agent, NewReview(title="t", capture_url=True))
    assert checkups.list_reviews(env, keys.agent).reviews == []


def test_the_loop_marks_resolves_opens_the_next_pass_and_says_which_areas_changed(
    env: Env, keys: Keys
) -> None:
    first = open_images(env, keys, BUTTON)
    token = token_of(first.review_url)
    with pytest.raises(Conflict, match="only while the review is changes_requested"):
        checkup_marks.resolve_marks(env, keys.agent, first.id, [{"id": "cmt_x"}])
    button = checkup_marks.add_mark(
        env,
        token,
        screenshot_index=0,
        body="Button is too dark",
        severity="must-fix",
        area={"x": 10, "y": 20, "w": 20, "h": 20},  # percentages are normalised
    )
    corner = checkup_marks.add_mark(
        env,
        token,
        screenshot_index=0,
        body="Corner",
        severity="nit",
        area={"x": 0.9, "y": 0.8, "w": 0.09, "h": 0.1},
    )
    keep = checkup_marks.add_mark(env, token, screenshot_index=0, body="Love it", severity="keep")
    assert (button.number, corner.number, keep.number) == ("M1", "M2", "M3")
    assert button.area is not None and button.area.x == pytest.approx(0.1)
    tiny = checkup_marks.add_mark(
        env, token, screenshot_index=0, body="x", area={"x": 0.5, "y": 0.5, "w": 0.005, "h": 0.2}
    )
    assert tiny.area is None  # areas under 0.01 are dropped
    decided = checkup_marks.decide(env, token, "changes_requested", "Fix the button")
    assert decided.status == "changes_requested" and decided.decision_note == "Fix the button"
    assert decided.next_action.action == "apply_pins_then_next_pass"
    assert decided.loop.must_fix == 1 and decided.loop.outstanding == 3

    result = checkup_marks.resolve_marks(
        env,
        keys.agent,
        first.id,
        [
            {"id": button.id, "note": "Lighter grey", "after_image": data_url(FIXED)},
            {"id": corner.id},
            {"id": tiny.id, "status": "in_progress"},
            {"id": keep.id},
            {"id": button.id, "status": "verified"},
            {"id": "cmt_nothing"},
        ],
    )
    assert [u.number for u in result.updated] == ["M1", "M2", "M4"]
    reasons = [s.reason for s in result.skipped]
    assert "M3 is a keep: leave it as it is" in reasons
    assert any("agents set only in_progress or resolved" in r for r in reasons)
    assert any("no mark cmt_nothing" in r for r in reasons)
    checkup_marks.resolve_marks(env, keys.agent, first.id, [{"id": tiny.id}])
    after = checkups.get_review(env, keys.agent, first.id)
    assert after.next_action.action == "open_next_pass"
    m1 = next(p for p in after.work_packets.pins if p.number == "M1")
    assert m1.note == "Lighter grey" and m1.after_image_url

    second = checkups.create_review(
        env, keys.agent, NewReview(title="Pass 2", images=[data_url(FIXED)], parent_id=after.id)
    )
    with pytest.raises(Conflict, match="already follows"):
        checkups.create_review(
            env, keys.agent, NewReview(title="Again", images=[data_url(FIXED)], parent_id=after.id)
        )
    assert second.pass_number == 2 and second.type == "ui" and second.parent_id == first.id
    drain(env)
    second = checkups.get_review(env, keys.agent, second.id)
    assert second.screenshots[0].diff is not None and second.screenshots[0].diff.changed
    waiting = {p.number: p for p in second.work_packets.awaiting_verification}
    assert waiting["M1"].pass_diff is not None
    assert waiting["M1"].pass_diff.summary == (
        "M1 resolved; its area changed between pass 1 and pass 2"
    )
    assert waiting["M2"].pass_diff is not None
    assert (
        waiting["M2"].pass_diff.summary == "M2 resolved, but its area is identical to the last pass"
    )

    token2 = token_of(second.review_url)
    checkup_marks.verify_mark(env, token2, button.id)
    checkup_marks.reopen_mark(env, token2, corner.id, "Still there")
    reread = checkups.get_review(env, keys.agent, second.id)
    assert [p.number for p in reread.work_packets.carried_over] == ["M2"]
    assert reread.work_packets.carried_over[0].reopened == 1
    assert reread.work_packets.carried_over[0].comments[-1].body == "Still there"
    approved = checkup_marks.decide(env, token2, "approved", "Ship it")
    assert approved.status == "approved" and approved.next_action.action == "done"


def test_people_act_only_through_their_link_and_agents_never_verify(env: Env, keys: Keys) -> None:
    review = open_images(env, keys, WHITE)
    with pytest.raises(NotFound, match="no review at this link"):
        checkup_marks.decide(env, "not-a-real-token-at-all", "approved")
    token = token_of(review.review_url)
    mark = checkup_marks.add_mark(env, token, screenshot_index=0, body="x", severity="nit")
    checkup_marks.decide(env, token, "changes_requested")
    checkup_marks.resolve_marks(env, keys.agent, review.id, [{"id": mark.id}])
    # Even reaching the mark's thread directly, an agent's key cannot verify it.
    with pytest.raises(Forbidden, match="only a person"):
        threads.set_status(env, dataclasses.replace(keys.agent, is_agent=True), mark.id, "verified")
    assert checkup_marks.verify_mark(env, token, mark.id).status == "verified"


def test_findings_are_hints_never_must_fix_and_name_the_mark_they_overlap(
    env: Env, keys: Keys
) -> None:
    review = open_images(env, keys, BUTTON)
    token = token_of(review.review_url)
    mark = checkup_marks.add_mark(
        env, token, screenshot_index=0, body="Dark", area={"x": 0.1, "y": 0.2, "w": 0.2, "h": 0.2}
    )
    with pytest.raises(InvalidInput, match="never must-fix"):
        checkups.add_findings(env, keys.agent, review.id, [{"severity": "must-fix", "body": "x"}])
    with pytest.raises(InvalidInput, match="1 to 20"):
        checkups.add_findings(env, keys.agent, review.id, [{"body": "x"}] * 21)
    result = checkups.add_findings(
        env,
        keys.agent,
        review.id,
        [
            {
                "severity": "a11y",
                "body": "Low contrast",
                "area": {"x": 0.15, "y": 0.25, "w": 0.1, "h": 0.1},
            }
        ],
    )
    [hint] = result.added
    assert hint.number == "S1" and hint.source == "agent" and hint.related_pin == mark.number
    assert result.review.status == "pending"
    accepted = checkup_marks.accept_hint(env, token, hint.id, "must-fix")
    assert accepted.number == "M2" and accepted.source == "agent"
    assert checkups.get_review(env, keys.agent, review.id).work_packets.second_opinion == []


def test_credits_follow_the_burn_table_and_run_out(env: Env, keys: Keys) -> None:
    billing = credits.get_billing(env, keys.agent)
    assert billing.allowance is None and billing.burn == {
        "images": 1,
        "pdf": 1,
        "html": 3,
        "capture_url": 5,
    }
    credits.set_allowance(env, keys.admin, 2)
    open_images(env, keys, WHITE)
    with pytest.raises(InsufficientCredits) as caught:
        checkups.create_review(env, keys.agent, NewReview(title="e", html=WIDE_EMAIL))
    assert (
        caught.value.code == "insufficient_credits"
        and "1 of this month's 2" in caught.value.message
    )
    now = credits.get_billing(env, keys.agent)
    assert (now.used, now.remaining) == (1, 1)
    with pytest.raises(PaymentsDisabled, match="self-hosted"):
        raise credits.refuse_payment("create_checkout")


def test_an_email_is_captured_by_a_job_and_measured(env: Env, keys: Keys) -> None:
    review = checkups.create_review(env, keys.agent, NewReview(title="Newsletter", html=WIDE_EMAIL))
    assert review.type == "email" and review.capture.state == "queued" and review.credits == 3
    assert review.next_action.action == "wait_for_human"
    drain(env)
    done = checkups.get_review(env, keys.agent, review.id)
    assert done.capture.state == "done"
    assert [s.label for s in done.screenshots] == ["light", "dark"]
    rules = {p.rule for p in done.work_packets.second_opinion}
    assert "email-width" in rules
    wide = next(p for p in done.work_packets.second_opinion if p.rule == "email-width")
    assert wide.area is not None


def test_a_failed_capture_still_opens_the_review_with_a_placeholder(env: Env, keys: Keys) -> None:
    env.settings = env.settings.model_copy(update={"capture_allow": "127.0.0.1:9"})
    review = checkups.create_review(
        env, keys.agent, NewReview(title="Down", capture_url=True, page_url="http://127.0.0.1:9/")
    )
    drain(env)
    done = checkups.get_review(env, keys.agent, review.id)
    assert done.capture.state == "failed" and done.capture.reason
    assert {s.meta["origin"] for s in done.screenshots} == {"capture_failed"}
    added = checkups.add_screenshot(env, keys.agent, review.id, data_url(WHITE))
    assert added.screenshots[-1].meta["origin"] == "image"


def test_a_capture_that_fails_gives_its_credits_back(env: Env, keys: Keys) -> None:
    from viewfinder.store.models import Checkup, CreditSpend

    env.settings = env.settings.model_copy(update={"capture_allow": "127.0.0.1:9"})
    credits.set_allowance(env, keys.admin, 5)
    down = NewReview(title="Down", capture_url=True, page_url="http://127.0.0.1:9/")
    review = checkups.create_review(env, keys.agent, down)
    assert review.credits == 5 and credits.get_billing(env, keys.agent).remaining == 0
    with pytest.raises(InsufficientCredits):
        checkups.create_review(env, keys.agent, down)
    drain(env)
    done = checkups.get_review(env, keys.agent, review.id)
    assert done.capture.state == "failed" and done.credits == 0
    assert {s.meta["origin"] for s in done.screenshots} == {"capture_failed"}
    billing = credits.get_billing(env, keys.agent)
    assert (billing.used, billing.remaining) == (0, 5)
    with env.db.write() as s:
        spends = sorted((c.source, c.credits) for c in s.scalars(select(CreditSpend)))
        assert spends == [("capture", 5), ("refund", -5)]
        row = s.get(Checkup, review.id)
        assert row is not None and credits.refund(s, row) == 0  # never twice
    # The credits given back pay for the next try.
    again = checkups.create_review(env, keys.agent, down)
    assert again.credits == 5 and credits.get_billing(env, keys.agent).remaining == 0


def test_an_expired_link_expires_the_review_and_refuses_the_person(env: Env, keys: Keys) -> None:
    from viewfinder.store.models import Checkup, utcnow

    review = open_images(env, keys, WHITE)
    with env.db.write() as s:
        row = s.get(Checkup, review.id)
        assert row is not None
        row.expires_at = utcnow() - timedelta(seconds=1)
    expired = checkups.get_review(env, keys.agent, review.id)
    assert expired.status == "expired" and expired.next_action.action == "expired"
    with pytest.raises(Conflict, match="link expired"):
        checkup_marks.add_mark(env, token_of(review.review_url), screenshot_index=0, body="x")
    with pytest.raises(Conflict, match="expired"):
        checkups.add_findings(env, keys.agent, review.id, [{"body": "x"}])


def test_guests_suggest_through_their_own_link_which_expires_and_rotates(
    env: Env, keys: Keys
) -> None:
    from viewfinder.services import checkup_guests

    review = open_images(env, keys, BUTTON)
    assert review.guest_share_url is not None
    guest = review.guest_share_url.rsplit("/g/", 1)[1]
    seen = checkup_guests.suggest(env, guest, screenshot_index=0, body="Bigger logo", name="Ana")
    assert [p.number for p in seen.suggestions] == ["G1"]
    assert "review_url" not in seen.model_dump()  # a guest never sees the person's link
    again = checkups.get_review(env, keys.agent, review.id)
    [hint] = [p for p in again.work_packets.second_opinion if p.source == "guest"]
    accepted = checkup_marks.accept_hint(env, token_of(review.review_url), hint.id, "nit")
    assert accepted.source == "guest" and accepted.number == "M1"
    rotated = checkup_marks.regenerate_guest_link(env, token_of(review.review_url), "never")
    assert rotated.guest_share_url != review.guest_share_url and rotated.guest_expires_at is None
    with pytest.raises(NotFound, match="expired or was replaced"):
        checkup_guests.view(env, guest)


def test_a_vision_model_adds_hints_with_areas_when_one_is_set(env: Env, keys: Keys) -> None:
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[dict[str, object]] = []
    answer = {
        "findings": [
            {
                "severity": "polish",
                "body": "The button sits off the grid",
                "area": {"x": 0.1, "y": 0.2, "w": 0.2, "h": 0.2},
            },
            {"severity": "must-fix", "body": "Not a severity hints have", "area": None},
        ]
    }

    class Model(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            asked.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            data = json.dumps({"choices": [{"message": {"content": json.dumps(answer)}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        env.settings = env.settings.model_copy(update={"vision_url": url})
        review = open_images(env, keys, BUTTON)
    finally:
        server.shutdown()
        server.server_close()
    hints = [p for p in review.work_packets.second_opinion if p.source == "vision"]
    assert [(h.severity, h.body) for h in hints] == [
        ("polish", "The button sits off the grid"),
        ("suggestion", "Not a severity hints have"),
    ]
    assert hints[0].area is not None and hints[0].area.x == pytest.approx(0.1)
    assert len(asked) == 1 and review.status == "pending"


def test_a_page_checkup_points_at_what_a_flawed_page_contains_and_not_at_a_clean_one(
    env: Env, keys: Keys
) -> None:
    from tests.capture_site import running_site

    with running_site() as site:
        env.settings = env.settings.model_copy(update={"capture_allow": f"127.0.0.1:{site.port}"})
        flawed = checkups.create_review(
            env,
            keys.agent,
            NewReview(title="Offers", capture_url=True, page_url=f"{site.url}/flawed"),
        )
        clean = checkups.create_review(
            env,
            keys.agent,
            NewReview(title="Home", capture_url=True, page_url=f"{site.url}/clean"),
        )
        assert flawed.credits == 5 and flawed.type == "website"
        drain(env)
    flawed = checkups.get_review(env, keys.agent, flawed.id)
    assert [s.label for s in flawed.screenshots] == ["desktop", "mobile"]
    hints = flawed.work_packets.second_opinion
    rules = {h.rule for h in hints}
    assert {"contrast", "text-size", "tap-target"} <= rules
    assert all(h.area is not None for h in hints if h.rule in ("contrast", "tap-target"))
    tap = next(h for h in hints if h.rule == "tap-target")
    assert flawed.screenshots[tap.screenshot_index].label == "mobile"
    assert checkups.get_review(env, keys.agent, clean.id).work_packets.second_opinion == []


def test_a_deck_becomes_one_screenshot_per_page_with_its_dom_kept(env: Env, keys: Keys) -> None:
    from sqlalchemy import select

    from tests.capture_site import slide_deck
    from viewfinder.store.models import CheckupShot

    deck = base64.b64encode(slide_deck()).decode()
    review = checkups.create_review(env, keys.agent, NewReview(title="Deck", pdf=deck))
    assert review.type == "presentation" and review.credits == 1
    drain(env)
    done = checkups.get_review(env, keys.agent, review.id)
    assert [s.label for s in done.screenshots][:2] == ["page-1", "page-2"]
    assert len(done.screenshots) == 5 and done.capture.state == "done"
    dense = [h for h in done.work_packets.second_opinion if h.rule == "slide-density"]
    assert [done.screenshots[h.screenshot_index].label for h in dense] == ["page-2"]
    with env.db.read() as s:
        rows = s.scalars(select(CheckupShot).where(CheckupShot.checkup_id == review.id))
        assert all(r.dom_sha256 and env.blobs.get(r.dom_sha256) for r in rows)
