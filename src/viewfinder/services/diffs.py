"""Diffs: an image compared with the baseline current when it arrived (a build's story, or a
pushed screenshot), and reviewed. The first image of a name registers itself as the baseline.

The rules of what may be decided on a diff live here once (``refusal``): the services enforce
them, and every record carries their answer for its viewer (``can_accept``, ``blocked_by`` ...),
so adapters ask rather than restate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, InvalidInput, NotFound, ViewfinderError
from viewfinder.imaging import Mask
from viewfinder.services import baselines, comparisons, lifecycle, permissions, scoping, selectors
from viewfinder.services.comparisons import ComparisonResult
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    Decision,
    Urls,
)
from viewfinder.services.shortreads import short_read
from viewfinder.services.urls import file_url
from viewfinder.services.waiting import Wait
from viewfinder.store.models import Baseline, Comparison, Context, Image, Story, utcnow

if TYPE_CHECKING:
    from viewfinder.services.builds.records import StoryRecord


class DiffRecord(ComparisonResult):
    """A comparison of a candidate image with the baseline current when it was requested, as
    its viewer sees it: what was found, and what the viewer may do with it now."""

    id: str = Field(description="The diff id.")
    image_id: str
    build_id: str | None
    story_id: str | None = None
    context_id: str | None
    name: str
    variant: str
    outcome: Literal["registered", "changed", "unchanged", "failed"] | None = Field(
        description="registered: no baseline existed and this image became it."
    )
    found: str = Field(description="What the comparison found, in one sentence.")
    baseline_id: str | None
    baseline_image_id: str | None
    baseline_scope: Literal["shared", "context"] | None
    stale: bool = Field(description="The baseline changed after this comparison.")
    decision: Decision | None = Field(
        description="The review decision; null when there is no change to review."
    )
    decided_by: str | None
    decided_at: datetime | None
    decision_from: str | None = Field(
        None,
        description="The earlier diff of this pull request whose decision this one took: the "
        "same image, already decided there.",
    )
    became_baseline: Literal["shared", "context"] | None = Field(
        None,
        description="Which baseline the candidate became when accepted or approved: shared, "
        "or context (the pull request's own, shared once the PR is merged); null: none.",
    )
    approved_by: str | None
    approved_at: datetime | None
    open_threads: int = Field(description="Unresolved comment threads and marks on the diff.")
    blocked_by: list[str] = Field(
        default_factory=list, description="Ids of the unresolved threads that block accepting."
    )
    can_decide: bool = Field(False, description="The viewer may record a decision (deny at least).")
    can_accept: bool = Field(False, description="The viewer may accept it now.")
    can_ignore: bool = Field(False, description="The viewer may ignore it now.")
    can_approve: bool = Field(False, description="The viewer may make it the baseline now.")
    urls: Urls
    next_step: str = Field(description="What to do next, in one sentence.")


# Outcomes (and the story states named after them) a decision can be recorded on.
REVIEWABLE = ("changed", "failed")
# The owner kind of a replay screenshot pair's comparison (services/testruns/work.py): it has
# no baseline, and its decisions follow the test runs' rules.
REPLAYED = "replay"
Action = Literal["accept", "deny", "ignore", "approve"]


def request(
    s: Session,
    actor: Actor,
    image: Image,
    *,
    context: Context | None,
    owner_kind: str,
    owner_id: str,
    build_id: str | None = None,
    masks: tuple[Mask, ...] = (),
    max_diff_ratio: float = 0.0,
    known: tuple[Baseline, str] | None | bool = False,
    register_now: bool = True,
) -> Comparison:
    """Compare the image with its baseline (the PR's own, else the shared one). Without a
    baseline the image is registered: it becomes the baseline at once, or, with
    ``register_now=False``, when its owner says (a build, once it is finalized: see
    ``register``). ``known`` passes the baseline and its sha256 (or None for none) when the
    caller looked them up already, for many images at once."""
    if known is False:
        base = baselines.current(s, actor.project_id, image.name, image.variant, context)
        base_sha = s.scalar(select(Image.sha256).where(Image.id == base.image_id)) if base else None
    else:
        base, base_sha = known if isinstance(known, tuple) else (None, None)
    row = comparisons.new_row(
        actor,
        image,
        owner_kind=owner_kind,
        owner_id=owner_id,
        masks=masks,
        max_diff_ratio=max_diff_ratio,
    )
    row.build_id = build_id
    row.context_id = context.id if context else None
    if base is None or base_sha is None:
        comparisons.settle_unpaired(s, row)
        row.registered = True
        if register_now:
            register(s, actor, row, context, none_current=known is not False)
        return row
    row.baseline_id = base.id
    row.baseline_scope = base.scope
    comparisons.request(s, row, image, base.image_id, base_sha)
    return row


def failed(
    s: Session,
    actor: Actor,
    image: Image,
    reason: str,
    *,
    context: Context | None,
    owner_kind: str,
    owner_id: str,
    build_id: str | None = None,
) -> Comparison:
    """A diff of an image that is only a placeholder for a screenshot that could not be taken
    (``reason`` says why): failed at once, never compared, never a baseline."""
    row = comparisons.new_row(actor, image, owner_kind=owner_kind, owner_id=owner_id)
    row.build_id = build_id
    row.context_id = context.id if context else None
    comparisons.fail_at_once(s, row, reason)
    return row


def register(
    s: Session, actor: Actor, row: Comparison, context: Context | None, *, none_current: bool
) -> None:
    """Make a registered diff's image the baseline of its name (``none_current``: the caller
    knows there is none)."""
    baselines.replace(
        s,
        actor,
        name=row.name,
        variant=row.variant,
        context=context,
        image_id=row.image_id,
        source="registered",
        comparison_id=row.id,
        none_current=none_current,
    )


def get_row(s: Session, actor: Actor, diff_id: str) -> Comparison:
    row = scoping.owned(s, Comparison, diff_id, actor, "diff")
    if row.owner_kind == comparisons.DIRECT:  # two images compared directly: not a diff
        raise NotFound(f"no diff {diff_id!r} in this project", diff_id=diff_id)
    return row


def is_stale(s: Session, row: Comparison) -> bool:
    """The baseline this diff was compared with is no longer the one a new compare would use
    (and this diff's own acceptance or approval is not what replaced it)."""
    if row.registered or row.baseline_id is None or row.approved_at is not None:
        return False
    context = s.get(Context, row.context_id) if row.context_id else None
    now = baselines.current(s, row.project_id, row.name, row.variant, context)
    return now is None or (now.id != row.baseline_id and now.comparison_id != row.id)


def inherit_decision(s: Session, row: Comparison) -> None:
    """Within a pull request, a changed candidate byte for byte the same as one already decided
    on an earlier diff of the same name there takes that decision (the newest), and says so
    (``decision_from``): an agent that accepted a change and pushed a fix for something else
    does not see it again. Runs as a comparison's owners conclude it, before its row is
    written."""
    if comparisons.outcome(row) != "changed" or row.decision != "pending" or not row.context_id:
        return
    context = s.get(Context, row.context_id)
    if not baselines.uses_own_baselines(context):
        return
    sha = s.scalar(select(Image.sha256).where(Image.id == row.image_id))
    earlier = s.scalar(
        select(Comparison)
        .join(Image, Image.id == Comparison.image_id)
        .where(
            Comparison.project_id == row.project_id,
            Comparison.context_id == row.context_id,
            Comparison.name == row.name,
            Comparison.variant == row.variant,
            Comparison.id != row.id,
            Comparison.decision != "pending",
            Image.sha256 == sha,
        )
        .order_by(Comparison.decided_at.desc())
        .limit(1)
    )
    if earlier is None:
        return
    row.decision = earlier.decision
    row.decided_by = earlier.decided_by
    row.decided_at = utcnow()
    row.decision_from = earlier.decision_from or earlier.id


def became_baseline(s: Session, row: Comparison) -> Literal["shared", "context"] | None:
    """The baseline this diff's candidate became when it was accepted or approved (the pull
    request's own is ``context``), or None."""
    scope = s.scalar(
        select(Baseline.scope)
        .where(Baseline.comparison_id == row.id, Baseline.source.in_(("approved", "accepted")))
        .order_by(Baseline.created_at.desc())
        .limit(1)
    )
    return "shared" if scope == "shared" else "context" if scope == "context" else None


@dataclass(frozen=True)
class Facts:
    """What the rules of a diff depend on, read once."""

    outcome: str | None
    stale: bool
    closed: bool
    blockers: list[str]  # unresolved threads that block accepting, oldest first
    own_baselines: bool  # the diff's context (a pull request) keeps baselines of its own


def facts(s: Session, row: Comparison) -> Facts:
    context = s.get(Context, row.context_id) if row.context_id else None
    return Facts(
        outcome=comparisons.outcome(row),
        stale=is_stale(s, row),
        closed=context is not None and context.status == "closed",
        blockers=lifecycle.blocking(s, "diff", row.id),
        own_baselines=baselines.uses_own_baselines(context),
    )


def accept_moves_baseline(actor: Actor, f: Facts) -> bool:
    """Whether accepting makes the candidate the baseline it was compared with. An approver's
    accept does; within a pull request anyone who may review moves the PR's own baseline (the
    PR's next build then compares with what was accepted), while shared baselines change only
    through approval or the PR's merge."""
    return actor.can("approve") or (f.own_baselines and actor.can("review"))


def _threads_refusal(row: Comparison, f: Facts, verb: str) -> Conflict:
    return Conflict(
        f"cannot {verb} diff {row.id}: it has {len(f.blockers)} unresolved comment thread(s). "
        "Read them (list comments), address them and resolve them first; deny always works.",
        diff_id=row.id,
        blocked_by=f.blockers,
    )


def _approval_refusal(row: Comparison, f: Facts) -> ViewfinderError | None:
    """Why replacing the baseline with this diff's candidate is refused now, or None."""
    if f.closed:
        return Conflict(f"context is closed: diff {row.id} can no longer be approved")
    if f.stale:
        return Conflict(
            f"the baseline changed after diff {row.id} was computed: push (or upload) the "
            "screenshot again to compare with the current baseline, then approve that diff",
            diff_id=row.id,
        )
    return None


def refusal(actor: Actor, row: Comparison, f: Facts, action: Action) -> ViewfinderError | None:
    """Why ``action`` on this diff is refused for this actor now, or None when it is allowed.
    The one statement of the review rules: services raise it, records report it."""
    if action == "approve":
        forbidden = permissions.refusal(actor, "approve_diff")
        if forbidden is not None or row.approved_at is not None:
            return forbidden  # approving twice answers "already approved"
        if row.owner_kind == REPLAYED:
            return InvalidInput(
                f"diff {row.id} compares two replays of a session: there is no baseline to "
                "approve; accept, deny or ignore it instead"
            )
        if f.outcome is None:
            return Conflict(f"diff {row.id} is still computing: approve it once it is done")
        if row.registered:
            return InvalidInput(f"diff {row.id} registered the first baseline; nothing to approve")
        if row.state == "failed":
            return InvalidInput(f"diff {row.id} failed ({row.failure_reason}); nothing to approve")
        if f.blockers:
            return _threads_refusal(row, f, "approve")
        return _approval_refusal(row, f)
    forbidden = permissions.refusal(actor, "review_diff")
    if forbidden is not None:
        return forbidden
    if f.outcome is None:
        return Conflict(f"diff {row.id} is still computing: decide once it is done")
    if f.outcome not in REVIEWABLE:
        return InvalidInput(f"diff {row.id} has no change to review ({f.outcome})")
    if action == "accept" and row.state == "failed":
        return InvalidInput(f"diff {row.id} failed ({row.failure_reason}): deny or ignore it")
    if action != "deny" and f.blockers:
        return _threads_refusal(row, f, action)
    if action == "accept" and row.approved_at is None and accept_moves_baseline(actor, f):
        return _approval_refusal(row, f)  # such an accept replaces the baseline too
    return None


def found(row: Comparison) -> str:
    """What the comparison found, in one sentence."""
    result = comparisons.outcome(row)
    if result is None:
        return "Still computing."
    if result == "failed":
        return f"The comparison failed: {row.failure_reason}."
    if result == "registered":
        return "Registered as the baseline: there was none for this name."
    pixels = ""
    if row.changed_pixels is not None and row.compared_pixels:
        pixels = f" ({row.changed_pixels:,} of {row.compared_pixels:,} pixels)"
    share = f"{(row.diff_ratio or 0):.4%}"
    if result == "unchanged":
        why = ""
        if row.changed_pixels:
            noise = bool(row.analysis and row.analysis.get("noise"))
            why = (
                ", all rendering noise"
                if noise
                else f", within max_diff_ratio {row.max_diff_ratio:g}"
            )
        return f"Unchanged: {share} of pixels differ{pixels}{why}."
    regions = len(row.regions)
    return (
        f"Changed: {share} of pixels differ{pixels} in {regions} "
        f"region{'s' if regions != 1 else ''}."
    )


def _next_step(s: Session, row: Comparison, f: Facts) -> str:
    result = f.outcome
    if result is None:
        return "The comparison is still computing: ask again in a moment."
    if result == "failed":
        return f"The comparison failed ({row.failure_reason}): fix the image and push it again."
    if result == "registered":
        return "No baseline existed: this image is now the baseline. Nothing to review."
    if result == "unchanged":
        return "Nothing to review."
    if row.approved_at is not None:
        return "Approved: this image is the baseline now."
    if row.decision_from is not None:
        return (
            f"Already {row.decision} on an earlier build of this pull request (diff "
            f"{row.decision_from}, the same image): nothing to do unless that was wrong."
        )
    if row.decision == "accepted" and became_baseline(s, row) == "context":
        return (
            "Accepted: this image is the pull request's baseline now, so its next build "
            "compares with it; the shared baseline changes when the PR is merged."
        )
    if f.stale:
        return "The baseline changed after this comparison: push the screenshot again to compare."
    if f.closed:
        return "The context is closed; this diff can no longer be approved."
    if f.blockers:
        return f"Resolve the {len(f.blockers)} open comment thread(s), then accept or deny."
    return (
        "Look at the diff image; accept (or approve) if the change is intended, deny it and fix "
        "the code if not."
    )


def record(env: Env, s: Session, row: Comparison, viewer: Actor) -> DiffRecord:
    """The diff as ``viewer`` sees it: what was found, and what the viewer may do with it."""
    f = facts(s, row)
    baseline_sha, candidate_sha = comparisons.image_shas(s, row)
    story_id = s.scalar(select(Story.id).where(Story.comparison_id == row.id))
    return DiffRecord(
        id=row.id,
        image_id=row.image_id,
        build_id=row.build_id,
        story_id=story_id,
        context_id=row.context_id,
        name=row.name,
        variant=row.variant,
        outcome=f.outcome,
        found=found(row),
        baseline_id=row.baseline_id,
        baseline_image_id=row.base_image_id,
        baseline_scope=row.baseline_scope,
        **comparisons.result_fields(row),
        stale=f.stale,
        decision=row.decision if f.outcome in REVIEWABLE else None,
        decided_by=row.decided_by,
        decided_at=row.decided_at,
        decision_from=row.decision_from,
        became_baseline=became_baseline(s, row),
        approved_by=row.approved_by,
        approved_at=row.approved_at,
        open_threads=len(f.blockers),
        blocked_by=f.blockers,
        can_decide=refusal(viewer, row, f, "deny") is None,
        can_accept=refusal(viewer, row, f, "accept") is None,
        can_ignore=refusal(viewer, row, f, "ignore") is None,
        can_approve=refusal(viewer, row, f, "approve") is None and row.approved_at is None,
        urls=Urls(
            baseline=file_url(env, baseline_sha) if baseline_sha else None,
            candidate=file_url(env, candidate_sha) if candidate_sha else None,
            diff=file_url(env, row.diff_sha256) if row.diff_sha256 else None,
        ),
        next_step=_next_step(s, row, f),
    )


@short_read
def get_diff(env: Env, actor: Actor, diff_id: str) -> DiffRecord:
    with env.db.read() as s:
        return record(env, s, get_row(s, actor, diff_id), actor)


def find(
    env: Env,
    actor: Actor,
    *,
    diff_id: str | None = None,
    story_id: str | None = None,
    image_id: str | None = None,
    names: tuple[str, str, str] = ("diff_id", "story_id", "image_id"),
    selector: Mapping[str, Any] | None = None,
) -> tuple[StoryRecord | None, DiffRecord | None]:
    """The diff named by exactly one of its id, its story (any story: a removed one has no
    diff) or its pushed image (the newest diff of it), under the caller's ``names``; with the
    story when one was named. A build ``selector`` (build_id, commit_sha, pr_number, repo) sent
    beside it must name the item's build. Raises InvalidInput, NotFound."""
    from viewfinder.services import builds

    given = dict(zip(names, (diff_id, story_id, image_id), strict=True))
    which = selectors.exactly_one({k: v for k, v in given.items() if k})
    story: StoryRecord | None = None
    if which == names[0]:
        record: DiffRecord | None = get_diff(env, actor, diff_id or "")
    elif which == names[1]:
        story = builds.get_story(env, actor, story_id or "")
        record = get_diff(env, actor, story.diff_id) if story.diff_id else None
    else:
        record = latest_for_image(env, actor, image_id or "")
        if record is None:
            raise InvalidInput(f"image {image_id} was never compared: push it with compare")
    if selector:
        build_of = story.build_id if story is not None else record.build_id if record else None
        builds.confirm_selector(env, actor, build_of, f"{which} {given[which]}", **selector)
    return story, record


def latest_for_image(env: Env, actor: Actor, image_id: str) -> DiffRecord | None:
    """The newest diff of an image, or None when it was never compared."""
    from viewfinder.services.images import get_image_row

    with env.db.read() as s:
        get_image_row(s, actor, image_id)
        row = s.scalar(
            select(Comparison)
            .where(Comparison.image_id == image_id, Comparison.owner_kind != comparisons.DIRECT)
            .order_by(Comparison.id.desc())
            .limit(1)
        )
        return record(env, s, row, actor) if row is not None else None


def waiting(env: Env, actor: Actor, diff_id: str, *, timeout: float) -> Wait[DiffRecord]:
    """A wait for the diff to be computed (see services.waiting)."""
    return Wait(lambda: get_diff(env, actor, diff_id), comparisons.computed, timeout)
