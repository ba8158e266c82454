"""Baselines: the approved image of each name + variant, shared by the project or kept by one
PR context until the PR closes. A PR's own baseline is preferred to the shared one.

Rows are never deleted: ending a baseline records why (replaced, deleted, promoted, discarded),
by whom and when, which is the history a person reads.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field
from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session

from viewfinder.errors import NotFound
from viewfinder.ids import new_id
from viewfinder.services import permissions, scoping
from viewfinder.services.env import Actor, Env
from viewfinder.services.pagination import Cursor, page_limit
from viewfinder.services.records import (
    Page,
    Record,
)
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_text
from viewfinder.store.models import Baseline, Context, Image, utcnow


class BaselineRecord(Record):
    id: str
    name: str
    variant: str
    scope: Literal["shared", "context"]
    context_id: str | None
    image_id: str
    source: Literal["registered", "approved", "accepted", "promoted"] = Field(
        description="accepted: a reviewer accepted the change within its pull request."
    )
    comparison_id: str | None
    created_by: str
    created_at: datetime
    ended_at: datetime | None
    end_reason: str | None
    ended_by: str | None
    view_url: str | None


LIST_LIMIT = 200


def keeps_own_baselines(context_type: str) -> bool:
    """Only PR contexts keep baselines of their own; manual labels use the shared ones."""
    return context_type == "github_pr"


def uses_own_baselines(context: Context | None) -> bool:
    return context is not None and keeps_own_baselines(context.type)


def lock_name(s: Session, project_id: str, name: str, variant: str) -> None:
    """Row-lock the current baselines of a name (PostgreSQL), so that checking which one is
    current and replacing it happen as one step for concurrent approvals."""
    lock_names(s, project_id, {(name, variant)})


def lock_names(s: Session, project_id: str, keys: set[tuple[str, str]]) -> None:
    """lock_name for many names at once, in one order (by name) so that no two callers wait
    on each other."""
    if not keys:
        return
    s.execute(
        select(Baseline.id)
        .where(
            Baseline.project_id == project_id,
            tuple_(Baseline.name, Baseline.variant).in_(sorted(keys)),
            Baseline.ended_at.is_(None),
        )
        .order_by(Baseline.name, Baseline.variant, Baseline.id)
        .with_for_update()
    ).all()


def current(
    s: Session, project_id: str, name: str, variant: str, context: Context | None
) -> Baseline | None:
    """The baseline a new image of this name is compared with: the PR's, else the shared one."""
    if uses_own_baselines(context):
        assert context is not None
        own = s.scalar(
            select(Baseline).where(
                Baseline.project_id == project_id,
                Baseline.scope == "context",
                Baseline.context_id == context.id,
                Baseline.name == name,
                Baseline.variant == variant,
                Baseline.ended_at.is_(None),
            )
        )
        if own is not None:
            return own
    return s.scalar(
        select(Baseline).where(
            Baseline.project_id == project_id,
            Baseline.scope == "shared",
            Baseline.name == name,
            Baseline.variant == variant,
            Baseline.ended_at.is_(None),
        )
    )


Key = tuple[str, str]  # name, variant


def current_many(
    s: Session, project_id: str, keys: set[Key], context: Context | None
) -> dict[Key, tuple[Baseline, str]]:
    """current() for many names at once, with each baseline image's sha256."""
    if not keys:
        return {}
    found: dict[Key, tuple[Baseline, str]] = {}
    scopes: list[tuple[str, str | None]] = [("shared", None)]
    if uses_own_baselines(context):
        assert context is not None
        scopes.append(("context", context.id))  # applied last: the PR's own wins
    for scope, context_id in scopes:
        query = (
            select(Baseline, Image.sha256)
            .join(Image, Image.id == Baseline.image_id)
            .where(
                Baseline.project_id == project_id,
                Baseline.scope == scope,
                Baseline.ended_at.is_(None),
                tuple_(Baseline.name, Baseline.variant).in_(sorted(keys)),
            )
        )
        if context_id is not None:
            query = query.where(Baseline.context_id == context_id)
        for row, sha in s.execute(query).all():
            found[(row.name, row.variant)] = (row, sha)
    return found


def _end(row: Baseline, reason: str, actor: Actor) -> None:
    row.ended_at = utcnow()
    row.end_reason = reason
    row.ended_by = actor.key_id


def replace(
    s: Session,
    actor: Actor,
    *,
    name: str,
    variant: str,
    context: Context | None,
    image_id: str,
    source: str,
    comparison_id: str | None = None,
    none_current: bool = False,
) -> Baseline:
    """Make the image the current baseline of its scope (the PR's for a PR context, else
    shared), ending the one it replaces (``none_current``: the caller knows there is none)."""
    scope = "context" if uses_own_baselines(context) else "shared"
    context_id = context.id if scope == "context" and context is not None else None
    query = select(Baseline).where(
        Baseline.project_id == actor.project_id,
        Baseline.scope == scope,
        Baseline.name == name,
        Baseline.variant == variant,
        Baseline.ended_at.is_(None),
    )
    if context_id is not None:
        query = query.where(Baseline.context_id == context_id)
    if not none_current:
        for old in s.scalars(query.with_for_update()):
            _end(old, "replaced", actor)
        s.flush()  # the partial unique index must see the old row ended first
    row = Baseline(
        id=new_id("bas"),
        project_id=actor.project_id,
        name=name,
        variant=variant,
        scope=scope,
        context_id=context_id,
        image_id=image_id,
        source=source,
        comparison_id=comparison_id,
        created_by=actor.key_id,
    )
    s.add(row)
    s.flush()
    return row


def register_many(
    s: Session, actor: Actor, items: list[tuple[str, str, str, str]], context: Context | None
) -> None:
    """First baselines of names that have none (the caller checked, under lock_names): each
    item is (name, variant, image_id, comparison_id)."""
    scope = "context" if uses_own_baselines(context) else "shared"
    context_id = context.id if scope == "context" and context is not None else None
    s.add_all(
        Baseline(
            id=new_id("bas"),
            project_id=actor.project_id,
            name=name,
            variant=variant,
            scope=scope,
            context_id=context_id,
            image_id=image_id,
            source="registered",
            comparison_id=comparison_id,
            created_by=actor.key_id,
        )
        for name, variant, image_id, comparison_id in items
    )
    s.flush()


def settle_context(s: Session, actor: Actor, context: Context, *, merged: bool) -> tuple[int, int]:
    """On closing a PR: promote its baselines to shared (merged) or discard them.
    Returns (promoted, discarded)."""
    rows = list(
        s.scalars(
            select(Baseline).where(
                Baseline.project_id == actor.project_id,
                Baseline.scope == "context",
                Baseline.context_id == context.id,
                Baseline.ended_at.is_(None),
            )
        )
    )
    for row in rows:
        _end(row, "promoted" if merged else "discarded", actor)
        if merged:
            s.flush()
            replace(
                s,
                actor,
                name=row.name,
                variant=row.variant,
                context=None,
                image_id=row.image_id,
                source="promoted",
                comparison_id=row.comparison_id,
            )
    return (len(rows), 0) if merged else (0, len(rows))


def record(env: Env, row: Baseline, image: Image | None = None) -> BaselineRecord:
    from viewfinder.services.images import view_url

    return BaselineRecord(
        id=row.id,
        name=row.name,
        variant=row.variant,
        scope=row.scope,
        context_id=row.context_id,
        image_id=row.image_id,
        source=row.source,
        comparison_id=row.comparison_id,
        created_by=row.created_by,
        created_at=row.created_at,
        ended_at=row.ended_at,
        end_reason=row.end_reason,
        ended_by=row.ended_by,
        view_url=view_url(env, image) if image is not None else None,
    )


@short_read
def list_baselines(
    env: Env,
    actor: Actor,
    *,
    cursor: str | None = None,
    limit: int | None = None,
    name: str | None = None,
    history: bool = False,
) -> Page[BaselineRecord]:
    """Current baselines (shared and per PR), by name, a page of up to 200 at a time.
    With ``history``, ended ones too, newest first within a name."""
    size = page_limit(limit, default=LIST_LIMIT, maximum=LIST_LIMIT)
    if name is not None:
        name = check_text("name", name, maximum=200, multiline=False)
    # The filters are part of the cursor's list: a cursor of one list cannot page another.
    scope = f"baselines:{name}:{history}" if name is not None or history else "baselines"
    after = Cursor.read(env, cursor, scope)
    with env.db.read() as s:
        query = (
            select(Baseline, Image)
            .join(Image, Image.id == Baseline.image_id)
            .where(Baseline.project_id == actor.project_id)
        )
        if not history:
            query = query.where(Baseline.ended_at.is_(None))
        if name is not None:
            query = query.where(Baseline.name == name)
        if after is not None:
            query = query.where(tuple_(Baseline.name, Baseline.variant, Baseline.id) > tuple(after))
        rows = s.execute(
            query.order_by(Baseline.name, Baseline.variant, Baseline.id).limit(size + 1)
        ).all()
        items = [record(env, b, i) for b, i in rows[:size]]
        last = rows[size - 1][0] if len(rows) > size else None
        return Page[BaselineRecord](
            items=items,
            next_cursor=Cursor.make(env, scope, [last.name, last.variant, last.id])
            if last
            else None,
        )


def delete_baseline(env: Env, actor: Actor, baseline_id: str) -> BaselineRecord:
    """End a current baseline: the next compare of its name registers a new one. Needs the
    approve role. Raises Forbidden, NotFound."""
    permissions.require(actor, "delete_baseline")
    with env.db.write() as s:
        row = scoping.owned(s, Baseline, baseline_id, actor, "baseline")
        if row.ended_at is not None:
            raise NotFound(
                f"baseline {baseline_id!r} ended already ({row.end_reason})",
                baseline_id=baseline_id,
            )
        _end(row, "deleted", actor)
        return record(env, row)
