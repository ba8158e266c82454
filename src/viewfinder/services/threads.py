"""Comment threads on diffs: a root comment (optionally anchored on the before or after image)
and its replies. A thread stays open until resolved; open threads block accepting the diff."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import Forbidden, InvalidInput, NotFound
from viewfinder.ids import new_id
from viewfinder.services import builds, comparisons
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Anchor, Author, ThreadRecord
from viewfinder.store.models import Story, Thread, utcnow

BODY_MAX = 4000
_ANCHOR: TypeAdapter[Any] = TypeAdapter(Anchor)


def check_body(body: str) -> str:
    if not isinstance(body, str) or not body.strip():
        raise InvalidInput("a comment body is 1 to 4000 characters; this one is empty")
    if len(body) > BODY_MAX:
        raise InvalidInput(f"a comment body is 1 to 4000 characters; this one has {len(body)}")
    return body


def check_anchor(anchor: Any) -> dict[str, Any] | None:
    """A point, rect or path anchor in coordinates normalised 0..1, or None (the whole image)."""
    if anchor is None:
        return None
    try:
        parsed = _ANCHOR.validate_python(anchor)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'anchor'}: {e['msg']}" for e in exc.errors()
        )
        shapes = "{type: point, x, y}, {type: rect, x, y, w, h} or {type: path, points, closed}"
        raise InvalidInput(
            f"invalid anchor (coordinates are 0 to 1; {shapes}): {problems}"
        ) from None
    if parsed.type == "rect" and (parsed.x + parsed.w > 1 + 1e-9 or parsed.y + parsed.h > 1 + 1e-9):
        raise InvalidInput("invalid anchor: a rect must fit in the image (x + w <= 1, y + h <= 1)")
    dumped: dict[str, Any] = parsed.model_dump()
    return dumped


def _record(row: Thread, replies: list[Thread] = ()) -> ThreadRecord:  # type: ignore[assignment]
    return ThreadRecord(
        id=row.id,
        diff_id=row.comparison_id,
        parent_id=row.parent_id,
        body=row.body,
        anchor=row.anchor,
        side=row.side,
        status=row.status,
        author=Author(key_id=row.author_key_id, name=row.author_name, is_agent=row.author_is_agent),
        created_at=row.created_at,
        updated_at=row.updated_at,
        resolved_at=row.resolved_at,
        resolved_by=row.resolved_by,
        replies=[_record(r) for r in replies],
    )


def _get(s: Session, actor: Actor, comment_id: str) -> Thread:
    row = s.get(Thread, comment_id)
    if row is None or row.project_id != actor.project_id:
        raise NotFound(f"no comment {comment_id!r} in this project")
    return row


def _new(actor: Actor, diff_id: str, body: str, **fields: Any) -> Thread:
    return Thread(
        id=new_id("cmt"),
        project_id=actor.project_id,
        comparison_id=diff_id,
        body=body,
        author_key_id=actor.key_id,
        author_name=actor.name,
        author_is_agent=actor.is_agent,
        **fields,
    )


def list_comments(
    env: Env, actor: Actor, diff_id: str, *, status: str | None = None
) -> list[ThreadRecord]:
    """The threads of a diff, oldest first, each with its replies."""
    if status not in (None, "open", "resolved"):
        raise InvalidInput("status is open or resolved")
    with env.db.read() as s:
        comparisons.get_row(s, actor, diff_id)
        rows = list(
            s.scalars(select(Thread).where(Thread.comparison_id == diff_id).order_by(Thread.id))
        )
        return _threads(rows, status)


def list_build_comments(env: Env, actor: Actor, build_id: str) -> list[ThreadRecord]:
    """The threads of every diff of a build, oldest first, each with its replies."""
    with env.db.read() as s:
        builds.resolve_selector(s, actor, build_id=build_id)
        rows = list(
            s.scalars(
                select(Thread)
                .join(Story, Story.comparison_id == Thread.comparison_id)
                .where(Story.build_id == build_id)
                .order_by(Thread.id)
            )
        )
        return _threads(rows, None)


def _threads(rows: list[Thread], status: str | None) -> list[ThreadRecord]:
    replies: dict[str, list[Thread]] = {}
    for r in rows:
        if r.parent_id:
            replies.setdefault(r.parent_id, []).append(r)
    roots = [r for r in rows if r.parent_id is None and status in (None, r.status)]
    return [_record(r, replies.get(r.id, [])) for r in roots]


def create_comment(
    env: Env, actor: Actor, diff_id: str, body: str, *, anchor: Any = None, side: str = "after"
) -> ThreadRecord:
    """Open a thread on a diff. Raises InvalidInput, Forbidden, NotFound."""
    actor.require("review", "comment on diffs")
    body = check_body(body)
    anchor_value = check_anchor(anchor)
    if side not in ("after", "before"):
        raise InvalidInput("side is after (the candidate, default) or before (the baseline)")
    with env.db.write() as s:
        comparisons.get_row(s, actor, diff_id)
        row = _new(actor, diff_id, body, anchor=anchor_value, side=side)
        s.add(row)
        s.flush()
        return _record(row)


def reply(env: Env, actor: Actor, comment_id: str, body: str) -> ThreadRecord:
    """Reply to a thread; the reply takes the thread's side and has no anchor. Replying to a
    resolved thread reopens it."""
    actor.require("review", "comment on diffs")
    body = check_body(body)
    with env.db.write() as s:
        target = _get(s, actor, comment_id)
        root = _get(s, actor, target.parent_id) if target.parent_id else target
        row = _new(actor, root.comparison_id, body, parent_id=root.id, side=root.side)
        if root.status == "resolved":
            root.status, root.resolved_at, root.resolved_by = "open", None, None
        s.add(row)
        s.flush()
        return _record(row)


def _require_author(actor: Actor, row: Thread, what: str) -> None:
    if row.author_key_id != actor.key_id and not actor.can("admin"):
        raise Forbidden(f"only the author of a comment (or an admin) can {what} it")


def update_comment(env: Env, actor: Actor, comment_id: str, body: str) -> ThreadRecord:
    actor.require("review", "comment on diffs")
    body = check_body(body)
    with env.db.write() as s:
        row = _get(s, actor, comment_id)
        _require_author(actor, row, "edit")
        row.body = body
        row.updated_at = utcnow()
        return _record(row)


def resolve_comment(
    env: Env, actor: Actor, comment_id: str, *, resolved: bool = True
) -> ThreadRecord:
    """Resolve (or, with ``resolved=False``, reopen) the thread the comment belongs to.
    Idempotent."""
    actor.require("review", "resolve comments")
    with env.db.write() as s:
        row = _get(s, actor, comment_id)
        root = _get(s, actor, row.parent_id) if row.parent_id else row
        if resolved and root.status != "resolved":
            root.status = "resolved"
            root.resolved_at = utcnow()
            root.resolved_by = actor.key_id
        elif not resolved and root.status != "open":
            root.status, root.resolved_at, root.resolved_by = "open", None, None
        replies = list(s.scalars(select(Thread).where(Thread.parent_id == root.id)))
        return _record(root, replies)


def delete_comment(env: Env, actor: Actor, comment_id: str) -> ThreadRecord:
    """Delete a comment; deleting a thread's first comment deletes its replies."""
    actor.require("review", "delete comments")
    with env.db.write() as s:
        row = _get(s, actor, comment_id)
        _require_author(actor, row, "delete")
        replies = list(s.scalars(select(Thread).where(Thread.parent_id == row.id)))
        record = _record(row, replies)
        for r in replies:
            s.delete(r)
        s.flush()
        s.delete(row)
        return record
