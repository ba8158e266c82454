"""Decisions, open-thread rule, approvals, stale diffs, PR baselines and closing contexts."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, drain, make_build, shot
from viewfinder.errors import Conflict, Forbidden, InvalidInput
from viewfinder.services import baselines, builds, contexts, diffs, pushes, reviews, threads
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


# ---- PR baselines and closing -----------------------------------------------------------------


def push(env: Env, keys: Keys, data: bytes, **where: object) -> str:
    result = pushes.push(env, keys.ci, data, name="home", compare=True, wait_seconds=0, **where)  # type: ignore[arg-type]
    drain(env)
    assert result.diff is not None
    return result.diff.id


PR = {"pr_number": 5, "repo": "acme/web"}


def test_a_pr_approval_changes_only_the_prs_baseline_until_merged(env: Env, keys: Keys) -> None:
    push(env, keys, shot(), context_key="main")  # manual context: registers a shared baseline
    diff = push(env, keys, shot(box=BOX), **PR)
    assert diffs.get_diff(env, keys.agent, diff).baseline_scope == "shared"
    approved = reviews.approve_diff(env, keys.admin, diff)
    assert approved.baseline.scope == "context" and "merged" in approved.message
    shared = [b for b in baselines.list_baselines(env, keys.agent).items if b.scope == "shared"]
    assert shared[0].source == "registered"
    # The PR compares with its own baseline now; elsewhere the shared one still rules.
    assert diffs.get_diff(env, keys.agent, push(env, keys, shot(box=BOX), **PR)).changed is False
    assert diffs.get_diff(env, keys.agent, push(env, keys, shot(box=BOX), context_key="x")).changed

    closed = contexts.close_context(env, keys.ci, reason="merged", **PR)
    assert (closed.baselines_promoted, closed.already_closed) == (1, False)
    shared = [b for b in baselines.list_baselines(env, keys.agent).items if b.scope == "shared"]
    assert [b.source for b in shared] == ["promoted"]
    again = contexts.close_context(env, keys.ci, reason="merged", **PR)
    assert again.already_closed and again.baselines_promoted == 0


def test_closing_a_pr_unmerged_discards_its_baselines(env: Env, keys: Keys) -> None:
    push(env, keys, shot(), context_key="main")
    reviews.approve_diff(env, keys.admin, push(env, keys, shot(box=BOX), **PR))
    result = contexts.close_context(env, keys.ci, reason="closed", **PR)
    assert result.baselines_discarded == 1 and result.images_expired == 1
    assert [b.source for b in baselines.list_baselines(env, keys.agent).items] == ["registered"]


def test_an_unapproved_diff_of_a_closed_context_cannot_be_approved(env: Env, keys: Keys) -> None:
    push(env, keys, shot(), context_key="main")
    diff = push(env, keys, shot(box=BOX), **PR)
    contexts.close_context(env, keys.ci, reason="closed", **PR)
    with pytest.raises(Conflict, match="context is closed"):
        reviews.approve_diff(env, keys.admin, diff)


def test_deleting_a_baseline_lets_the_next_compare_register_a_new_one(env: Env, keys: Keys) -> None:
    push(env, keys, shot(), context_key="main")
    (base,) = baselines.list_baselines(env, keys.agent).items
    with pytest.raises(Forbidden):
        baselines.delete_baseline(env, keys.agent, base.id)
    assert baselines.delete_baseline(env, keys.admin, base.id).end_reason == "deleted"
    assert (
        diffs.get_diff(env, keys.agent, push(env, keys, shot(box=BOX), context_key="main")).outcome
        == "registered"
    )
