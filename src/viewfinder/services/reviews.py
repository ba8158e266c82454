"""Review decisions on diffs (accept, deny, ignore), accepting a whole build, and approving a
diff as the new baseline. What is allowed when is stated once, in diffs.refusal: while a diff
has an unresolved comment thread, accept and ignore are refused (deny always works)."""

from __future__ import annotations

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import InvalidInput
from viewfinder.services import baselines, builds, commit_status, diffs, permissions
from viewfinder.services.baselines import BaselineRecord
from viewfinder.services.builds.records import StoryRecord
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    Record,
)
from viewfinder.store.models import Baseline, Comparison, Context, Story, utcnow


class ReviewResult(Record):
    diff: DiffRecord
    baseline_updated: bool
    message: str


class AcceptBuildResult(Record):
    build_id: str
    accepted: list[str] = Field(description="Diff ids accepted by this call.")
    blocked: list[StoryRecord] = Field(
        description="Stories with unresolved comments; nothing was accepted when any is listed."
    )
    message: str


class ApproveResult(Record):
    diff: DiffRecord
    baseline: BaselineRecord
    already_approved: bool
    message: str


DECISIONS = {"accept": "accepted", "deny": "denied", "ignore": "ignored"}


def _locked_facts(s: Session, row: Comparison) -> diffs.Facts:
    """The diff's facts with its name's baselines row-locked (PostgreSQL), so that checking
    which baseline is current and replacing it happen as one step for concurrent approvals."""
    baselines.lock_name(s, row.project_id, row.name, row.variant)
    return diffs.facts(s, row)


def _approve_row(s: Session, actor: Actor, row: Comparison, *, approving: bool = True) -> Baseline:
    """Make the diff's candidate the baseline it was compared with (the PR's for a PR diff),
    as an approval or, within a PR, as an accept (diffs.accept_moves_baseline). The caller
    checked diffs.refusal first."""
    context = s.get(Context, row.context_id) if row.context_id else None
    base = baselines.replace(
        s,
        actor,
        name=row.name,
        variant=row.variant,
        context=context,
        image_id=row.image_id,
        source="approved" if approving else "accepted",
        comparison_id=row.id,
    )
    if approving:
        row.approved_at = utcnow()
        row.approved_by = actor.key_id
    row.decision = "accepted"
    row.decided_at = row.decided_at or utcnow()
    row.decided_by = row.decided_by or actor.key_id
    commit_status.decided(s, row)
    return base


def _decide(s: Session, actor: Actor, row: Comparison, decision: str) -> Baseline | None:
    """Record the decision, replacing the baseline when the accept moves it
    (diffs.accept_moves_baseline). Returns the new baseline, if any. Raises what diffs.refusal
    names."""
    f = _locked_facts(s, row)
    refused = diffs.refusal(actor, row, f, decision)  # type: ignore[arg-type]
    if refused is not None:
        raise refused
    moved = None
    if decision == "accept" and row.approved_at is None and diffs.accept_moves_baseline(actor, f):
        moved = _approve_row(s, actor, row, approving=actor.can("approve"))
    row.decision = DECISIONS[decision]
    row.decided_at = utcnow()
    row.decided_by = actor.key_id
    row.decision_from = None
    commit_status.decided(s, row)
    return moved


def review_diff(env: Env, actor: Actor, diff_id: str, decision: str) -> ReviewResult:
    """Record accept, deny or ignore. Accepting with the approve role also makes the candidate
    the baseline; with the review role alone the decision is recorded and the baseline waits
    for a person who can approve. Raises InvalidInput, Conflict, Forbidden, NotFound."""
    permissions.require(actor, "review_diff")
    if decision not in DECISIONS:
        raise InvalidInput(f"decision must be accept, deny or ignore (got {decision!r})")
    with env.db.read() as s:
        replayed = diffs.get_row(s, actor, diff_id).owner_kind == diffs.REPLAYED
    if replayed:
        return _review_replayed(env, actor, diff_id, decision)
    with env.db.write() as s:
        row = diffs.get_row(s, actor, diff_id)
        moved = _decide(s, actor, row, decision)
        s.flush()
        if moved is not None and moved.scope == "context":
            message = (
                "Accepted; the candidate is now this pull request's baseline, so the PR's next "
                "build compares with it. The shared baseline changes when the PR is closed as "
                "merged."
            )
        elif moved is not None:
            message = "Accepted; the candidate is now the shared baseline."
        elif decision == "accept" and row.approved_at is None:
            message = (
                "Accepted. The baseline is unchanged until a person with the approve role "
                f"approves it (viewfinder approve {row.id})."
            )
        else:
            message = f"Recorded: {DECISIONS[decision]}."
        return ReviewResult(
            diff=diffs.record(env, s, row, actor),
            baseline_updated=moved is not None,
            message=message,
        )


def _review_replayed(env: Env, actor: Actor, diff_id: str, decision: str) -> ReviewResult:
    """A replay screenshot's pair has no baseline: its decision follows the test runs' rules
    (an agent only rejects, and only on a pull request's run)."""
    from viewfinder.services.testruns import review as replays

    replay_diff_id, name = replays.screenshot_of(env, actor, diff_id)
    said = {"accept": "accept", "deny": "reject", "ignore": "ignore"}[decision]
    replays.decide(env, actor, replay_diff_id, name, said)
    return ReviewResult(
        diff=diffs.get_diff(env, actor, diff_id),
        baseline_updated=False,
        message=f"Recorded: {DECISIONS[decision]} (screenshot {name} of {replay_diff_id}).",
    )


def accept_build(
    env: Env,
    actor: Actor,
    *,
    build_id: str | None = None,
    commit_sha: str | None = None,
    pr_number: int | None = None,
    repo: str | None = None,
) -> AcceptBuildResult:
    """Accept every pending changed story of a build, or none: when any has an unresolved
    thread, nothing is accepted and those stories are named."""
    permissions.require(actor, "accept_build")
    with env.db.write() as s:
        build = builds.resolve_selector(
            s, actor, build_id=build_id, commit_sha=commit_sha, pr_number=pr_number, repo=repo
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
        blocked = [st for st in stories if diffs.facts(s, rows[st.comparison_id or ""]).blockers]
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
        moved_pr = False
        for st in stories:
            row = rows[st.comparison_id or ""]
            if row.decision != "pending":
                continue
            moved = _decide(s, actor, row, "accept")
            moved_pr = moved_pr or (moved is not None and moved.scope == "context")
            accepted.append(row.id)
        if moved_pr:
            note = (
                " They are this pull request's baselines now; the shared baselines change when "
                "the PR is closed as merged."
            )
        elif accepted and not actor.can("approve"):
            note = " Baselines change once a person with the approve role approves them."
        else:
            note = ""
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
    permissions.require(actor, "approve_diff")
    with env.db.write() as s:
        row = diffs.get_row(s, actor, diff_id)
        if row.approved_at is not None:
            base = s.scalar(
                select(Baseline).where(
                    Baseline.comparison_id == row.id, Baseline.source == "approved"
                )
            )
            assert base is not None
            return ApproveResult(
                diff=diffs.record(env, s, row, actor),
                baseline=baselines.record(env, base),
                already_approved=True,
                message=f"Already approved: {diff_id}.",
            )
        refused = diffs.refusal(actor, row, _locked_facts(s, row), "approve")
        if refused is not None:
            raise refused
        base = _approve_row(s, actor, row)
        pr = base.scope == "context"
        return ApproveResult(
            diff=diffs.record(env, s, row, actor),
            baseline=baselines.record(env, base),
            already_approved=False,
            message=(
                f"Approved {diff_id}: this PR's baseline is updated. Closing the PR as merged "
                "makes it the shared baseline."
                if pr
                else f"Approved {diff_id}: the shared baseline is updated."
            ),
        )
