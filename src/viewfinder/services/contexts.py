"""Delivery contexts: a GitHub PR (`owner/repo#N`) or a manual label, the unit pushed images are
grouped in, expire with, and (for PRs) keep their own baselines in until closed."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.ids import new_id
from viewfinder.jobs import registry
from viewfinder.services import baselines, permissions, scoping
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    Record,
)
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_text
from viewfinder.store.models import Context, Image, utcnow


class ContextRecord(Record):
    id: str
    type: Literal["github_pr", "manual"]
    key: str
    label: str | None
    repo: str | None
    pr_number: int | None
    status: Literal["open", "closed"]
    close_reason: Literal["merged", "closed", "manual"] | None
    closed_at: datetime | None
    expire_policy: Literal["on_close", "ttl", "never"]
    ttl_seconds: int | None = None
    created_at: datetime


class CloseResult(Record):
    context: ContextRecord
    already_closed: bool
    baselines_promoted: int
    baselines_discarded: int
    images_expired: int


REPO_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
PR_MAX = 2**31 - 1
_REPO = re.compile(REPO_PATTERN)
_PR_KEY = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#([1-9][0-9]{0,9})$")
TYPES = ("github_pr", "manual")
REASONS = ("merged", "closed", "manual")


def check_repo(repo: str | None) -> str | None:
    if repo is None or repo == "":
        return None
    if not _REPO.match(repo):
        raise InvalidInput(f"repo {repo!r} is not owner/name")
    return repo


def check_pr(pr_number: int | None) -> int | None:
    if pr_number is None:
        return None
    if isinstance(pr_number, bool) or not isinstance(pr_number, int):
        raise InvalidInput(f"pr_number must be a positive integer below 2^31 (got {pr_number!r})")
    if not 1 <= pr_number <= PR_MAX:
        raise InvalidInput(f"pr_number must be a positive integer below 2^31 (got {pr_number!r})")
    return pr_number


def pr_key(repo: str | None, pr_number: int) -> str:
    if repo is None:
        raise InvalidInput(
            "a PR needs its repository: pass repo as owner/name together with pr_number"
        )
    return f"{repo}#{pr_number}"


def parse_selector(
    *,
    context_key: str | None,
    context_type: str | None,
    pr_number: int | None,
    repo: str | None,
) -> tuple[str, str, str | None, int | None]:
    """(type, key, repo, pr_number) from exactly one of context_key and pr_number."""
    if (context_key is None) == (pr_number is None):
        raise InvalidInput("give exactly one of context_key and pr_number")
    repo = check_repo(repo)
    if pr_number is not None:
        if context_type not in (None, "github_pr"):
            raise InvalidInput("pr_number means context_type github_pr")
        number = check_pr(pr_number)
        assert number is not None
        return "github_pr", pr_key(repo, number), repo, number
    key = check_text("context_key", context_key, maximum=300, multiline=False).strip()
    ctype = context_type or "manual"
    if ctype not in TYPES:
        raise InvalidInput(f"context_type must be github_pr or manual (got {ctype!r})")
    if ctype == "github_pr":
        match = _PR_KEY.match(key)
        if not match:
            raise InvalidInput(f"a github_pr context_key is owner/repo#N (got {key!r})")
        return ctype, key, match.group(1), int(match.group(2))
    return ctype, key, None, None


def context_record(c: Context) -> ContextRecord:
    return ContextRecord(
        id=c.id,
        type=c.type,
        key=c.key,
        label=c.label,
        repo=c.repo,
        pr_number=c.pr_number,
        status=c.status,
        close_reason=c.close_reason,
        closed_at=c.closed_at,
        expire_policy=c.expire_policy,
        ttl_seconds=c.ttl_seconds,
        created_at=c.created_at,
    )


def find_context(s: Session, project_id: str, ctype: str, key: str) -> Context | None:
    return s.scalar(
        select(Context).where(
            Context.project_id == project_id, Context.type == ctype, Context.key == key
        )
    )


def get_or_create(
    s: Session,
    project_id: str,
    ctype: str,
    key: str,
    *,
    repo: str | None = None,
    pr_number: int | None = None,
    label: str | None = None,
) -> Context:
    found = find_context(s, project_id, ctype, key)
    if found is not None:
        if label and not found.label:
            found.label = check_text("context_label", label, maximum=300, multiline=False)
        return found
    context = Context(
        id=new_id("ctx"),
        project_id=project_id,
        type=ctype,
        key=key,
        repo=repo,
        pr_number=pr_number,
        label=check_text("context_label", label, maximum=300, multiline=False) if label else None,
    )
    s.add(context)
    s.flush()
    return context


def get_context_row(s: Session, actor: Actor, context_id: str) -> Context:
    return scoping.owned(s, Context, context_id, actor, "context")


@short_read
def list_contexts(env: Env, actor: Actor, *, status: str | None = None) -> list[ContextRecord]:
    with env.db.read() as s:
        query = select(Context).where(Context.project_id == actor.project_id)
        if status is not None:
            query = query.where(Context.status == status)
        return [context_record(c) for c in s.scalars(query.order_by(Context.id.desc()))]


def close_context(
    env: Env,
    actor: Actor,
    *,
    context_key: str | None = None,
    context_type: str | None = None,
    pr_number: int | None = None,
    repo: str | None = None,
    reason: str = "manual",
) -> CloseResult:
    """Close a context and apply its policies. ``merged`` promotes the PR's baselines to shared;
    ``closed`` and ``manual`` discard them. Images expire when the policy is on_close.
    Idempotent: closing a closed context changes nothing. Closing a PR context needs the
    approve role (its baselines change); a manual one, upload. Raises InvalidInput, NotFound,
    Forbidden."""
    permissions.require(actor, "close_context")
    if reason not in REASONS:
        raise InvalidInput(f"reason must be merged, closed or manual (got {reason!r})")
    ctype, key, _, _ = parse_selector(
        context_key=context_key, context_type=context_type, pr_number=pr_number, repo=repo
    )
    if baselines.keeps_own_baselines(ctype):
        # A PR's own baselines become shared (merged) or are thrown away: a baseline change.
        permissions.require(actor, "settle_baselines")
    with env.db.write() as s:
        context = find_context(s, actor.project_id, ctype, key)
        if context is None:
            raise NotFound(f"no {ctype} context {key!r} in this project", context_key=key)
        if context.status == "closed":
            return CloseResult(
                context=context_record(context),
                already_closed=True,
                baselines_promoted=0,
                baselines_discarded=0,
                images_expired=0,
            )
        promoted, discarded = baselines.settle_context(s, actor, context, merged=reason == "merged")
        expired = 0
        if context.expire_policy == "on_close":
            for image in s.scalars(
                select(Image).where(Image.context_id == context.id, Image.expired_at.is_(None))
            ):
                image.expired_at = utcnow()
                image.expired_reason = "context_closed"
                expired += 1
        context.status = "closed"
        context.close_reason = reason
        context.closed_at = utcnow()
        return CloseResult(
            context=context_record(context),
            already_closed=False,
            baselines_promoted=promoted,
            baselines_discarded=discarded,
            images_expired=expired,
        )


POLICIES = ("on_close", "ttl", "never")


def set_policy(
    env: Env,
    actor: Actor,
    *,
    expire_policy: str,
    ttl_seconds: int | None = None,
    context_key: str | None = None,
    context_type: str | None = None,
    pr_number: int | None = None,
    repo: str | None = None,
) -> ContextRecord:
    """Choose when a context's images expire: on_close (the default), ttl (``ttl_seconds``
    after each push) or never. Creates the context when it does not exist yet."""
    permissions.require(actor, "set_policy")
    if expire_policy not in POLICIES:
        raise InvalidInput(f"expire_policy must be one of {', '.join(POLICIES)}")
    if (expire_policy == "ttl") != (ttl_seconds is not None):
        raise InvalidInput("ttl_seconds is required with expire_policy ttl, and only with it")
    if ttl_seconds is not None and not 60 <= ttl_seconds <= 10 * 365 * 86400:
        raise InvalidInput("ttl_seconds is from 60 (a minute) to 315360000 (ten years)")
    ctype, key, ctx_repo, ctx_pr = parse_selector(
        context_key=context_key, context_type=context_type, pr_number=pr_number, repo=repo
    )
    with env.db.write() as s:
        context = get_or_create(s, actor.project_id, ctype, key, repo=ctx_repo, pr_number=ctx_pr)
        context.expire_policy = expire_policy
        context.ttl_seconds = ttl_seconds
        return context_record(context)


def expire_by_ttl(env: Env) -> int:
    """Expire images of ttl contexts once they are older than the context's ttl. Run
    periodically by the workers; returns how many images expired."""
    now = utcnow()
    expired = 0
    with env.db.write() as s:
        for context in s.scalars(select(Context).where(Context.expire_policy == "ttl")):
            if context.ttl_seconds is None:
                continue
            cutoff = now - timedelta(seconds=context.ttl_seconds)
            for image in s.scalars(
                select(Image).where(
                    Image.context_id == context.id,
                    Image.expired_at.is_(None),
                    Image.created_at < cutoff,
                )
            ):
                image.expired_at = now
                image.expired_reason = "ttl"
                expired += 1
    return expired


registry.register_periodic(registry.Periodic("expire-by-ttl", 60.0, expire_by_ttl))
