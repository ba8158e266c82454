"""Baselines: shared and per PR, promoted or discarded when the PR closes, deleted and made
again by the next compare."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, pushed_diff, shot
from viewfinder.errors import Forbidden
from viewfinder.services import baselines, contexts, diffs, reviews
from viewfinder.services.env import Env

BOX = (2, 2, 20, 20)
PR = {"pr_number": 5, "repo": "acme/web"}


def test_a_pr_approval_changes_only_the_prs_baseline_until_merged(env: Env, keys: Keys) -> None:
    # A manual context registers a shared baseline.
    pushed_diff(env, keys.ci, shot(), context_key="main")
    diff = pushed_diff(env, keys.ci, shot(box=BOX), **PR)
    assert diffs.get_diff(env, keys.agent, diff).baseline_scope == "shared"
    approved = reviews.approve_diff(env, keys.admin, diff)
    assert approved.baseline.scope == "context" and "merged" in approved.message
    shared = [b for b in baselines.list_baselines(env, keys.agent).items if b.scope == "shared"]
    assert shared[0].source == "registered"
    # The PR compares with its own baseline now; elsewhere the shared one still rules.
    assert (
        diffs.get_diff(env, keys.agent, pushed_diff(env, keys.ci, shot(box=BOX), **PR)).changed
        is False
    )
    assert diffs.get_diff(
        env, keys.agent, pushed_diff(env, keys.ci, shot(box=BOX), context_key="x")
    ).changed

    closed = contexts.close_context(env, keys.admin, reason="merged", **PR)
    assert (closed.baselines_promoted, closed.already_closed) == (1, False)
    shared = [b for b in baselines.list_baselines(env, keys.agent).items if b.scope == "shared"]
    assert [b.source for b in shared] == ["promoted"]
    again = contexts.close_context(env, keys.admin, reason="merged", **PR)
    assert again.already_closed and again.baselines_promoted == 0


def test_closing_a_pr_unmerged_discards_its_baselines(env: Env, keys: Keys) -> None:
    pushed_diff(env, keys.ci, shot(), context_key="main")
    reviews.approve_diff(env, keys.admin, pushed_diff(env, keys.ci, shot(box=BOX), **PR))
    result = contexts.close_context(env, keys.admin, reason="closed", **PR)
    assert result.baselines_discarded == 1 and result.images_expired == 1
    assert [b.source for b in baselines.list_baselines(env, keys.agent).items] == ["registered"]


def test_deleting_a_baseline_lets_the_next_compare_register_a_new_one(env: Env, keys: Keys) -> None:
    pushed_diff(env, keys.ci, shot(), context_key="main")
    (base,) = baselines.list_baselines(env, keys.agent).items
    with pytest.raises(Forbidden):
        baselines.delete_baseline(env, keys.agent, base.id)
    assert baselines.delete_baseline(env, keys.admin, base.id).end_reason == "deleted"
    assert (
        diffs.get_diff(
            env, keys.agent, pushed_diff(env, keys.ci, shot(box=BOX), context_key="main")
        ).outcome
        == "registered"
    )
