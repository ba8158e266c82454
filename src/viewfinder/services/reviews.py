"""Review decisions on diffs (accept, deny, ignore), accepting a whole build, and approving a
diff as the new baseline.

While a diff has an unresolved comment thread, accept and ignore are refused (deny always
works): a question asked on a change must be answered before the change goes in."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, InvalidInput
from viewfinder.services import baselines, builds, comparisons
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import AcceptBuildResult, ApproveResult, ReviewResult
from viewfinder.store.models import Baseline, Comparison, Context, Story, utcnow

DECISIONS = {"accept": "accepted", "deny": "denied", "ignore": "ignored"}


def _require_reviewable(row: Comparison) -> None:
    result = comparisons.outcome(row)
    if result is None:
        raise Conflict(f"diff {row.id} is still computing: decide once it is done")
    if result not in comparisons.REVIEWABLE:
        raise InvalidInput(f"diff {row.id} has no change to review ({result})")


def _require_no_open_threads(s: Session, row: Comparison, what: str) -> None:
    threads = comparisons.open_threads(s, row.id)
    if threads:
        raise Conflict(
            f"cannot {what} diff {row.id}: it has {threads} unresolved comment thread(s). "
            "Read them (list comments), address them and resolve them first; deny always works."
        )


def _approve_row(s: Session, actor: Actor, row: Comparison) -> Baseline:
    """Make the diff's candidate the baseline it was compared with (the PR's for a PR diff)."""
    context = s.get(Context, row.context_id) if row.context_id else None
    if context is not None and context.status == "closed":
        raise Conflict(f"context is closed: diff {row.id} can no longer be approved")
    baselines.lock_name(s, row.project_id, row.name, row.variant)
    if comparisons.is_stale(s, row):
        raise Conflict(
            f"the baseline changed after diff {row.id} was computed: push (or upload) the "
            "screenshot again to compare with the current baseline, then approve that diff"
        )
    base = baselines.replace(
        s,
        actor,
        name=row.name,
        variant=row.variant,
        context=context,
        image_id=row.image_id,
        source="approved",
        comparison_id=row.id,
    )
    row.approved_at = utcnow()
    row.approved_by = actor.key_id
    row.decision = "accepted"
    row.decided_at = row.decided_at or utcnow()
    row.decided_by = row.decided_by or actor.key_id
    return base


def review_diff(env: Env, actor: Actor, diff_id: str, decision: str) -> ReviewResult:
    """Record accept, deny or ignore. Accepting with the approve role also makes the candidate
    the baseline; with the review role alone the decision is recorded and the baseline waits
    for a person who can approve. Raises InvalidInput, Conflict, Forbidden, NotFound."""
    if decision not in DECISIONS:
        raise InvalidInput(f"decision must be accept, deny or ignore (got {decision!r})")
    actor.require("review", "review diffs")
    with env.db.write() as s:
        row = comparisons.get_row(s, actor, diff_id)
        _require_reviewable(row)
        if decision == "accept" and row.state == "failed":
            raise InvalidInput(f"diff {row.id} failed ({row.failure_reason}): deny or ignore it")
        if decision != "deny":
            _require_no_open_threads(s, row, decision)
        updated = False
        if decision == "accept" and actor.can("approve") and row.approved_at is None:
            _approve_row(s, actor, row)
            updated = True
        row.decision = DECISIONS[decision]
        row.decided_at = utcnow()
        row.decided_by = actor.key_id
        s.flush()
        if updated:
            message = "Accepted; the candidate is now the baseline."
        elif decision == "accept" and row.approved_at is None:
            message = (
                "Accepted. The baseline is unchanged until a person with the approve role "
                f"approves it (viewfinder approve {row.id})."
            )
        else:
            message = f"Recorded: {DECISIONS[decision]}."
        return ReviewResult(
            diff=comparisons.record(env, s, row), baseline_updated=updated, message=message
        )


def accept_build(
    env: Env,
    actor: Actor,
    *,
    build_id: str | None = None,
    commit_sha: str | None = None,
    pr_number: int | None = None,
) -> AcceptBuildResult:
    """Accept every pending changed story of a build, or none: when any has an unresolved
    thread, nothing is accepted and those stories are named."""
    actor.require("review", "review diffs")
    with env.db.write() as s:
        build = builds.resolve_selector(
            s, actor, build_id=build_id, commit_sha=commit_sha, pr_number=pr_number
        )
        stories = list(
            s.scalars(
                select(Story)
                .where(Story.build_id == build.id, Story.state == "changed")
                .order_by(Story.name, Story.variant)
            )
        )
        rows = {
            r.id: r
            for r in s.scalars(
                select(Comparison).where(Comparison.id.in_([st.comparison_id for st in stories]))
            )
        }
        blocked = [st for st in stories if comparisons.open_threads(s, st.comparison_id or "")]
        if blocked:
            names = ", ".join(st.name for st in blocked[:10])
            return AcceptBuildResult(
                build_id=build.id,
                accepted=[],
                blocked=builds.story_records(env, s, blocked),
                message=f"Nothing accepted: {len(blocked)} story(ies) have unresolved comments "
                f"({names}). Resolve them first.",
            )
        accepted = []
        for st in stories:
            row = rows[st.comparison_id or ""]
            if row.decision != "pending":
                continue
            if actor.can("approve") and row.approved_at is None:
                _approve_row(s, actor, row)
            row.decision = "accepted"
            row.decided_at = utcnow()
            row.decided_by = actor.key_id
            accepted.append(row.id)
        note = (
            ""
            if actor.can("approve")
            else (" Baselines change once a person with the approve role approves them.")
        )
        return AcceptBuildResult(
            build_id=build.id,
            accepted=accepted,
            blocked=[],
            message=f"Accepted {len(accepted)} change(s).{note}",
        )


def approve_diff(env: Env, actor: Actor, diff_id: str) -> ApproveResult:
    """Replace the baseline the diff was compared with by its candidate: for a PR's diff only
    that PR's baseline (promoted to shared when the PR closes merged). Idempotent. Refused when
    the baseline changed since (push again), for an unapproved diff of a closed context, and
    while a comment thread is open. Raises Forbidden, Conflict, InvalidInput, NotFound."""
    actor.require("approve", "approve diffs (change baselines)")
    with env.db.write() as s:
        row = comparisons.get_row(s, actor, diff_id)
        if row.approved_at is not None:
            base = s.scalar(
                select(Baseline).where(
                    Baseline.comparison_id == row.id, Baseline.source == "approved"
                )
            )
            assert base is not None
            return ApproveResult(
                diff=comparisons.record(env, s, row),
                baseline=baselines.record(env, base),
                already_approved=True,
                message=f"Already approved: {diff_id}.",
            )
        if comparisons.outcome(row) is None:
            raise Conflict(f"diff {row.id} is still computing: approve it once it is done")
        if row.registered:
            raise InvalidInput(f"diff {row.id} registered the first baseline; nothing to approve")
        if row.state == "failed":
            raise InvalidInput(f"diff {row.id} failed ({row.failure_reason}); nothing to approve")
        _require_no_open_threads(s, row, "approve")
        base = _approve_row(s, actor, row)
        pr = base.scope == "context"
        return ApproveResult(
            diff=comparisons.record(env, s, row),
            baseline=baselines.record(env, base),
            already_approved=False,
            message=(
                f"Approved {diff_id}: this PR's baseline is updated. Closing the PR as merged "
                "makes it the shared baseline."
                if pr
                else f"Approved {diff_id}: the shared baseline is updated."
            ),
        )
