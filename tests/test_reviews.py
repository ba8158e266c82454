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
