"""Decisions, the open-thread rule, accepting builds, approvals and stale diffs."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, make_build, pushed_diff, shot
from viewfinder.errors import Conflict, Forbidden, InvalidInput
from viewfinder.services import baselines, builds, contexts, diffs, reviews, threads
from viewfinder.services.env import Env

BOX = (2, 2, 20, 20)


def changed_diff(env: Env, keys: Keys, build_id: str, name: str) -> str:
    detail = builds.get_build(env, keys.agent, build_id=build_id)
    story = next(s for s in detail.changed.items if s.name == name)
    assert story.diff_id is not None
    return story.diff_id


@pytest.fixture
def two_builds(env: Env, keys: Keys) -> tuple[str, str]:
    make_build(env, keys.ci, "aaa1", {"home": shot(), "cart": shot()})
    second = make_build(
        env, keys.ci, "bbb2", {"home": shot(box=BOX), "cart": shot(box=(0, 0, 4, 4))}
    )
    return changed_diff(env, keys, second, "home"), second


def test_an_open_thread_blocks_accept_and_ignore_but_not_deny(
    env: Env, keys: Keys, two_builds: tuple[str, str]
) -> None:
    diff, _ = two_builds
    thread = threads.create_comment(env, keys.agent, diff, "Is the box meant to be black?")
    for decision in ("accept", "ignore"):
        with pytest.raises(Conflict, match="1 unresolved comment thread"):
            reviews.review_diff(env, keys.agent, diff, decision)
    assert reviews.review_diff(env, keys.agent, diff, "deny").diff.decision == "denied"
    threads.resolve_comment(env, keys.agent, thread.id)
    assert reviews.review_diff(env, keys.agent, diff, "accept").diff.decision == "accepted"


def test_accepting_with_the_review_role_leaves_the_baseline(
    env: Env, keys: Keys, two_builds: tuple[str, str]
) -> None:
    diff, _ = two_builds
    before = baselines.list_baselines(env, keys.agent).items
    result = reviews.review_diff(env, keys.agent, diff, "accept")
    assert not result.baseline_updated and "approve role" in result.message
    assert baselines.list_baselines(env, keys.agent).items == before


def test_accepting_with_the_approve_role_replaces_the_baseline(
    env: Env, keys: Keys, two_builds: tuple[str, str]
) -> None:
    diff, _ = two_builds
    result = reviews.review_diff(env, keys.admin, diff, "accept")
    assert result.baseline_updated and result.diff.approved_at is not None
    home = baselines.list_baselines(env, keys.agent, name="home").items[0]
    assert home.source == "approved" and home.comparison_id == diff
    history = baselines.list_baselines(env, keys.agent, name="home", history=True).items
    assert [(b.source, b.end_reason) for b in history] == [
        ("registered", "replaced"),
        ("approved", None),
    ]


def test_accept_build_accepts_nothing_while_a_story_has_an_open_thread(
    env: Env, keys: Keys, two_builds: tuple[str, str]
) -> None:
    diff, build_id = two_builds
    threads.create_comment(env, keys.agent, diff, "Why?")
    blocked = reviews.accept_build(env, keys.agent, build_id=build_id)
    assert blocked.accepted == [] and [s.name for s in blocked.blocked] == ["home"]
    assert "home" in blocked.message
    assert builds.get_build(env, keys.agent, build_id=build_id).review == "pending"


def test_accept_build_accepts_every_pending_change(
    env: Env, keys: Keys, two_builds: tuple[str, str]
) -> None:
    _, build_id = two_builds
    result = reviews.accept_build(env, keys.admin, commit_sha="bbb2")
    assert len(result.accepted) == 2 and result.blocked == []
    assert builds.get_build(env, keys.agent, build_id=build_id).review == "accepted"
    again = make_build(
        env, keys.ci, "ccc3", {"home": shot(box=BOX), "cart": shot(box=(0, 0, 4, 4))}
    )
    assert builds.get_build(env, keys.agent, build_id=again).counts.unchanged == 2


def test_approve_is_idempotent_and_needs_the_approve_role(
    env: Env, keys: Keys, two_builds: tuple[str, str]
) -> None:
    diff, _ = two_builds
    with pytest.raises(Forbidden, match="needs the 'approve' role"):
        reviews.approve_diff(env, keys.agent, diff)
    first = reviews.approve_diff(env, keys.admin, diff)
    second = reviews.approve_diff(env, keys.admin, diff)
    assert not first.already_approved and second.already_approved
    assert first.baseline.id == second.baseline.id


def test_approving_after_the_baseline_changed_is_a_conflict(
    env: Env, keys: Keys, two_builds: tuple[str, str]
) -> None:
    diff, _ = two_builds
    third = make_build(env, keys.ci, "ccc3", {"home": shot(box=(5, 5, 9, 9))})
    reviews.approve_diff(env, keys.admin, changed_diff(env, keys, third, "home"))
    assert diffs.get_diff(env, keys.agent, diff).stale
    with pytest.raises(Conflict, match="baseline changed after .* push .* again"):
        reviews.approve_diff(env, keys.admin, diff)


def test_decisions_need_a_change_to_review(env: Env, keys: Keys) -> None:
    first = make_build(env, keys.ci, "aaa1", {"home": shot()})
    new = builds.get_build(env, keys.agent, build_id=first).new.items[0].diff_id or ""
    with pytest.raises(InvalidInput, match="no change to review"):
        reviews.review_diff(env, keys.agent, new, "accept")
    with pytest.raises(InvalidInput, match="accept, deny or ignore"):
        reviews.review_diff(env, keys.agent, new, "maybe")


PR = {"pr_number": 5, "repo": "acme/web"}


def test_an_unapproved_diff_of_a_closed_context_cannot_be_approved(env: Env, keys: Keys) -> None:
    pushed_diff(env, keys.ci, shot(), context_key="main")
    diff = pushed_diff(env, keys.ci, shot(box=BOX), **PR)
    contexts.close_context(env, keys.admin, reason="closed", **PR)
    with pytest.raises(Conflict, match="context is closed"):
        reviews.approve_diff(env, keys.admin, diff)


# ---- decisions that carry over within a pull request ------------------------------------------


def test_within_a_pr_an_agent_accept_moves_the_prs_baseline_and_decisions_carry_over(
    env: Env, keys: Keys
) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot(), "cart": shot(), "menu": shot()})
    changed = {"home": shot(box=BOX), "cart": shot(box=(0, 0, 4, 4)), "menu": shot()}
    first = make_build(env, keys.ci, "bbb2", changed, pr=7)
    home, cart = changed_diff(env, keys, first, "home"), changed_diff(env, keys, first, "cart")

    accepted = reviews.review_diff(env, keys.agent, home, "accept")
    assert accepted.baseline_updated and accepted.diff.became_baseline == "context"
    assert "this pull request's baseline" in accepted.message
    assert accepted.diff.approved_at is None  # an accept, not a person's approval
    assert "next build compares with it" in diffs.get_diff(env, keys.agent, home).next_step
    denied = reviews.review_diff(env, keys.agent, cart, "deny")
    assert not denied.baseline_updated and denied.diff.became_baseline is None
    listed = baselines.list_baselines(env, keys.agent).items
    shared = {b.name: b.image_id for b in listed if b.scope == "shared"}
    assert shared["home"] != accepted.diff.image_id

    # A fix for something else: the same home and cart again, and a menu that changed now.
    again = changed | {"menu": shot(box=(30, 30, 40, 40))}
    second = make_build(env, keys.ci, "ccc3", again, pr=7)
    detail = builds.get_build(env, keys.agent, build_id=second)
    assert {s.name for s in detail.changed.items} == {"cart", "menu"}  # home matches the PR's
    cart2 = diffs.get_diff(env, keys.agent, changed_diff(env, keys, second, "cart"))
    assert cart2.decision == "denied" and cart2.decision_from == cart
    assert cart2.next_step.startswith(
        f"Already denied on an earlier build of this pull request (diff {cart}"
    )
    menu = diffs.get_diff(env, keys.agent, changed_diff(env, keys, second, "menu"))
    assert menu.decision == "pending" and menu.decision_from is None

    # Shared baselines are untouched until the PR is merged, which promotes the accepted one.
    now = baselines.list_baselines(env, keys.agent)
    assert {b.name: b.image_id for b in now.items if b.scope == "shared"} == shared
    contexts.close_context(env, keys.admin, pr_number=7, repo="acme/shop", reason="merged")
    [merged_home] = baselines.list_baselines(env, keys.agent, name="home").items
    assert merged_home.scope == "shared" and merged_home.image_id == accepted.diff.image_id


def test_outside_a_pr_an_inherited_decision_never_happens(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()})
    first = make_build(env, keys.ci, "bbb2", {"home": shot(box=BOX)})
    reviews.review_diff(env, keys.agent, changed_diff(env, keys, first, "home"), "deny")
    second = make_build(env, keys.ci, "ccc3", {"home": shot(box=BOX)})
    again = diffs.get_diff(env, keys.agent, changed_diff(env, keys, second, "home"))
    assert again.decision == "pending" and again.decision_from is None


def test_an_agent_accepting_a_whole_pr_build_moves_the_prs_baselines(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot(), "cart": shot()})
    first = make_build(
        env, keys.ci, "bbb2", {"home": shot(box=BOX), "cart": shot(box=(1, 1, 9, 9))}, pr=8
    )
    result = reviews.accept_build(env, keys.agent, build_id=first)
    assert len(result.accepted) == 2 and "this pull request's baselines now" in result.message
    second = make_build(
        env, keys.ci, "ccc3", {"home": shot(box=BOX), "cart": shot(box=(1, 1, 9, 9))}, pr=8
    )
    assert builds.get_build(env, keys.agent, build_id=second).counts.changed == 0


def test_a_person_may_still_approve_a_diff_an_agent_accepted_in_its_pr(
    env: Env, keys: Keys
) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()})
    first = make_build(env, keys.ci, "bbb2", {"home": shot(box=BOX)}, pr=9)
    home = changed_diff(env, keys, first, "home")
    reviews.review_diff(env, keys.agent, home, "accept")
    assert not diffs.get_diff(env, keys.agent, home).stale  # its own accept moved the baseline
    approved = reviews.approve_diff(env, keys.admin, home)
    assert approved.diff.approved_at is not None and approved.baseline.scope == "context"


def test_a_diff_with_nothing_to_review_has_no_decision_in_any_record(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()})
    second = make_build(env, keys.ci, "bbb2", {"home": shot()})
    [story] = builds.list_build_stories(env, keys.agent, second, state="unchanged").items
    assert story.diff_id is not None
    assert story.decision is None
    assert diffs.get_diff(env, keys.agent, story.diff_id).decision is None
