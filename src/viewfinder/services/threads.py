"""Threads: what people and agents say about an image. A root (optionally anchored on the
image) and its replies, on a subject: one side of a diff, or one stored image (a checkup's
screenshot). Kinds and the moves between statuses are in lifecycle.py; unresolved comments and
marks hold a decision on their diff back until they are resolved."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import Field, TypeAdapter, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import Forbidden, InvalidInput
from viewfinder.ids import new_id
from viewfinder.services import builds, diffs, images, lifecycle, permissions, scoping
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import (
    Anchor,
    Author,
    Record,
    Side,
    Subject,
    ThreadStatus,
)
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_text
from viewfinder.store.models import Story, Thread, utcnow


class ThreadRecord(Record):
    id: str
    subject: Subject
    diff_id: str | None = Field(description="The diff, when the subject is one.")
    parent_id: str | None
    kind: Literal["comment", "mark", "finding"] = "comment"
    severity: str | None = Field(None, description="A mark's or a finding's severity.")
    body: str
    anchor: Anchor | None
    side: Side | None
    status: ThreadStatus
    unresolved: bool = Field(
        description="Still to be dealt with (open or in progress); such comments and marks "
        "block accepting their diff."
    )
    author: Author
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None
    can_edit: bool = Field(False, description="The viewer may change its text.")
    can_delete: bool = Field(False, description="The viewer may delete it.")
    moves: list[ThreadStatus] = Field(
        default_factory=list, description="The statuses the viewer may move the thread to."
    )
    replies: list[ThreadRecord] = Field(default_factory=list)


BODY_MAX = 4000
SUBJECT_TYPES = ("diff", "image")
_ANCHOR: TypeAdapter[Any] = TypeAdapter(Anchor)


def check_body(body: str) -> str:
    return check_text("a comment body", body, maximum=BODY_MAX)


def check_anchor(anchor: Any) -> dict[str, Any] | None:
    """A point, rect or path anchor in coordinates normalised 0..1, or None (the whole image)."""
    if anchor is None:
        return None
    try:
        parsed = _ANCHOR.validate_python(anchor, strict=False)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'anchor'}: {e['msg']}" for e in exc.errors()
        )
        shapes = "{type: point, x, y}, {type: rect, x, y, w, h} or {type: path, points, closed}"
        raise InvalidInput(
            f"invalid anchor (coordinates are 0 to 1; {shapes}): {problems}"
        ) from None
    dumped: dict[str, Any] = parsed.model_dump()
    if parsed.type == "rect":
        # A rectangle drawn past an edge is clipped to the image, as a drag past it would be.
        dumped["w"] = min(parsed.w, 1 - parsed.x)
        dumped["h"] = min(parsed.h, 1 - parsed.y)
    return dumped


@dataclass(frozen=True)
class On:
    """A thread's subject: ``On("diff", "dif_...", "after")`` or ``On("image", "img_...")``."""

    type: str
    id: str
    side: str | None = None


def _check_subject(s: Session, actor: Actor, on: On) -> On:
    """The subject as stored, once it exists in the actor's project. Raises NotFound,
    InvalidInput."""
    if on.type == "diff":
        diffs.get_row(s, actor, on.id)
        side = on.side or "after"
        if side not in ("after", "before"):
            raise InvalidInput("side is after (the candidate, default) or before (the baseline)")
        return On("diff", on.id, side)
    if on.type == "image":
        images.get_image_row(s, actor, on.id)
        if on.side is not None:
            raise InvalidInput("a thread on an image has no side: sides belong to diffs")
        return on
    raise InvalidInput(f"subject type is one of {', '.join(SUBJECT_TYPES)} (got {on.type!r})")


def _record(actor: Actor, row: Thread, replies: list[Thread] = ()) -> ThreadRecord:  # type: ignore[assignment]
    return ThreadRecord(
        id=row.id,
        subject=Subject(type=row.subject_type, id=row.subject_id, side=row.side),
        diff_id=row.subject_id if row.subject_type == "diff" else None,
        parent_id=row.parent_id,
        kind=row.kind,
        severity=row.severity,
        body=row.body,
        anchor=row.anchor,
        side=row.side,
        status=row.status,
        unresolved=lifecycle.is_unresolved(row.status),
        author=Author(key_id=row.author_key_id, name=row.author_name, is_agent=row.author_is_agent),
        created_at=row.created_at,
        updated_at=row.updated_at,
        resolved_at=row.resolved_at,
        resolved_by=row.resolved_by,
        can_edit=lifecycle.may_change(actor, row),
        can_delete=lifecycle.may_change(actor, row),
        moves=lifecycle.moves(actor, row) if row.parent_id is None else [],
        replies=[_record(actor, r) for r in replies],
    )


def _get(s: Session, actor: Actor, comment_id: str) -> Thread:
    return scoping.owned(s, Thread, comment_id, actor, "comment")


def _new(actor: Actor, on: On, body: str, **fields: Any) -> Thread:
    return Thread(
        id=new_id("cmt"),
        project_id=actor.project_id,
        subject_type=on.type,
        subject_id=on.id,
        side=on.side,
        body=body,
        author_key_id=actor.key_id,
        author_name=actor.name,
        author_is_agent=actor.is_agent,
        **fields,
    )


def _threads(actor: Actor, rows: list[Thread], status: str | None) -> list[ThreadRecord]:
    replies: dict[str, list[Thread]] = {}
    for r in rows:
        if r.parent_id:
            replies.setdefault(r.parent_id, []).append(r)
    roots = [r for r in rows if r.parent_id is None and status in (None, r.status)]
    return [_record(actor, r, replies.get(r.id, [])) for r in roots]


def _check_status_filter(status: str | None) -> None:
    if status is not None and status not in lifecycle.STATUSES:
        raise InvalidInput(f"status is one of {', '.join(lifecycle.STATUSES)}")


def list_threads(
    env: Env, actor: Actor, on: On, *, status: str | None = None
) -> list[ThreadRecord]:
    """The threads on a subject (both sides of a diff), oldest first, each with its replies."""
    _check_status_filter(status)
    with env.db.read() as s:
        _check_subject(s, actor, On(on.type, on.id))
        rows = list(
            s.scalars(
                select(Thread)
                .where(Thread.subject_type == on.type, Thread.subject_id == on.id)
                .order_by(Thread.id)
            )
        )
        return _threads(actor, rows, status)


@short_read
def list_comments(
    env: Env, actor: Actor, diff_id: str, *, status: str | None = None
) -> list[ThreadRecord]:
    """The threads of a diff, oldest first, each with its replies."""
    return list_threads(env, actor, On("diff", diff_id), status=status)


def list_build_comments(env: Env, actor: Actor, build_id: str) -> list[ThreadRecord]:
    """The threads of every diff of a build, oldest first, each with its replies."""
    with env.db.read() as s:
        builds.resolve_selector(s, actor, build_id=build_id)
        rows = list(
            s.scalars(
                select(Thread)
                .join(Story, Story.comparison_id == Thread.subject_id)
                .where(Thread.subject_type == "diff", Story.build_id == build_id)
                .order_by(Thread.id)
            )
        )
        return _threads(actor, rows, None)


def create_thread(
    env: Env,
    actor: Actor,
    on: On,
    body: str,
    *,
    anchor: Any = None,
    kind: str = "comment",
    severity: str | None = None,
) -> ThreadRecord:
    """Open a thread on a subject. Raises InvalidInput, Forbidden, NotFound."""
    with env.db.write() as s:
        row = open_thread(s, actor, on, body, anchor=anchor, kind=kind, severity=severity)
        return _record(actor, row)


def open_thread(
    s: Session,
    actor: Actor,
    on: On,
    body: str,
    *,
    anchor: Any = None,
    kind: str = "comment",
    severity: str | None = None,
) -> Thread:
    """``create_thread`` in the caller's transaction, for services that write more beside the
    thread (a checkup's mark). Raises InvalidInput, Forbidden, NotFound."""
    permissions.require(actor, "comment")
    body = check_body(body)
    anchor_value = check_anchor(anchor)
    if kind not in lifecycle.KINDS:
        raise InvalidInput(f"kind is one of {', '.join(lifecycle.KINDS)} (got {kind!r})")
    allowed = {"mark": lifecycle.MARK_SEVERITIES, "finding": lifecycle.FINDING_SEVERITIES}
    if kind in allowed and severity not in allowed[kind]:
        raise InvalidInput(f"a {kind}'s severity is one of {', '.join(allowed[kind])}")
    if kind == "comment" and severity is not None:
        raise InvalidInput("a comment has no severity: marks and findings do")
    subject = _check_subject(s, actor, on)
    row = _new(actor, subject, body, anchor=anchor_value, kind=kind, severity=severity)
    s.add(row)
    s.flush()
    return row


def create_comment(
    env: Env, actor: Actor, diff_id: str, body: str, *, anchor: Any = None, side: str = "after"
) -> ThreadRecord:
    """Open a comment thread on one side of a diff. Raises InvalidInput, Forbidden, NotFound."""
    return create_thread(env, actor, On("diff", diff_id, side), body, anchor=anchor)


def reply(
    env: Env, actor: Actor, comment_id: str, body: str, *, anchor: Any = None
) -> ThreadRecord:
    """Reply to a thread; the reply takes the thread's subject and side and has no anchor.
    Replying to a resolved comment thread reopens it. Raises InvalidInput for an anchor."""
    permissions.require(actor, "comment")
    if anchor is not None:
        raise InvalidInput("a reply has no anchor: it belongs to its thread's place")
    body = check_body(body)
    with env.db.write() as s:
        target = _get(s, actor, comment_id)
        root = _get(s, actor, target.parent_id) if target.parent_id else target
        on = On(root.subject_type, root.subject_id, root.side)
        row = _new(actor, on, body, parent_id=root.id, kind=root.kind)
        if root.kind == "comment" and root.status == "resolved":
            _move(root, "open", actor)
        s.add(row)
        s.flush()
        return _record(actor, row)


def post_comment(
    env: Env,
    actor: Actor,
    body: str,
    *,
    diff_id: str | None = None,
    parent_id: str | None = None,
    anchor: Any = None,
    side: str = "after",
) -> ThreadRecord:
    """A new thread on a diff (``diff_id``), or a reply to a thread (``parent_id``; a diff_id
    given with it must be that thread's). Raises InvalidInput, Forbidden, NotFound."""
    permissions.require(actor, "comment")
    if parent_id is None:
        if diff_id is None:
            raise InvalidInput("give the diff to open a thread on, or the thread to reply to")
        return create_comment(env, actor, diff_id, body, anchor=anchor, side=side)
    if diff_id is not None:
        with env.db.read() as s:
            target = _get(s, actor, parent_id)
            if target.subject_type != "diff" or target.subject_id != diff_id:
                raise InvalidInput(
                    f"comment {parent_id} is not on diff {diff_id}: reply with the thread alone"
                )
    return reply(env, actor, parent_id, body, anchor=anchor)


def _require_author(actor: Actor, row: Thread, what: str) -> None:
    if not lifecycle.may_change(actor, row):
        raise Forbidden(
            f"only the author of a comment (or an admin) can {what} it", comment_id=row.id
        )


def update_comment(env: Env, actor: Actor, comment_id: str, body: str) -> ThreadRecord:
    permissions.require(actor, "comment")
    body = check_body(body)
    with env.db.write() as s:
        row = _get(s, actor, comment_id)
        _require_author(actor, row, "edit")
        row.body = body
        row.updated_at = utcnow()
        return _record(actor, row)


def _move(root: Thread, to: str, actor: Actor) -> None:
    root.status = to
    if to in ("resolved", "verified"):
        root.resolved_at = utcnow()
        root.resolved_by = actor.key_id
    elif lifecycle.is_unresolved(to):
        root.resolved_at, root.resolved_by = None, None
    root.updated_at = utcnow()


def move_in(s: Session, actor: Actor, root: Thread, status: str) -> None:
    """Move a root thread in the caller's transaction, as set_status does. Raises
    InvalidInput, Conflict, Forbidden."""
    if root.status != status:
        refused = lifecycle.refusal(actor, root, status)
        if refused is not None:
            raise refused
        _move(root, status, actor)


def set_status(env: Env, actor: Actor, comment_id: str, status: str) -> ThreadRecord:
    """Move the thread a comment belongs to (see lifecycle.py for who may move what where).
    Idempotent. Raises InvalidInput, Conflict, Forbidden, NotFound."""
    permissions.require(actor, "resolve_comment")
    with env.db.write() as s:
        row = _get(s, actor, comment_id)
        root = _get(s, actor, row.parent_id) if row.parent_id else row
        if root.status != status:
            refused = lifecycle.refusal(actor, root, status)
            if refused is not None:
                raise refused
            _move(root, status, actor)
        replies = list(s.scalars(select(Thread).where(Thread.parent_id == root.id)))
        return _record(actor, root, replies)


def resolve_comment(
    env: Env, actor: Actor, comment_id: str, *, resolved: bool = True
) -> ThreadRecord:
    """Resolve (or, with ``resolved=False``, reopen) the thread the comment belongs to.
    Idempotent."""
    return set_status(env, actor, comment_id, "resolved" if resolved else "open")


def delete_comment(env: Env, actor: Actor, comment_id: str) -> ThreadRecord:
    """Delete a comment; deleting a thread's first comment deletes its replies."""
    permissions.require(actor, "delete_comment")
    with env.db.write() as s:
        row = _get(s, actor, comment_id)
        _require_author(actor, row, "delete")
        replies = list(s.scalars(select(Thread).where(Thread.parent_id == row.id)))
        record = _record(actor, row, replies)
        for r in replies:
            s.delete(r)
        s.flush()
        s.delete(row)
        return record
