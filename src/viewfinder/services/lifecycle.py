"""The lifecycle of what people and agents say about an image, stated once.

Kinds of thread: a ``comment`` (a question or remark), a ``mark`` (a person's "fix this", with a
severity) and a ``finding`` (a hint from a checklist, a model or an agent, which never blocks
anything). Statuses: open -> in_progress -> resolved -> verified, and back to open (reopened).

Who may move a thread where:
- comments: anyone who may comment resolves and reopens (a reply reopens too);
- marks: an agent may set in_progress and resolved only; a person may also verify a resolved
  mark or reopen it (approving and verifying stay with people);
- findings: dismissed (resolved) or reopened by anyone who may comment; a person turns one into
  a mark.

``UNRESOLVED`` is the one meaning of "unresolved" every rule uses (accepting a diff, a
checkup's outstanding marks); ``blocking`` lists the threads that hold a decision back.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, Forbidden, InvalidInput
from viewfinder.services import permissions
from viewfinder.services.env import Actor
from viewfinder.store.models import Thread

KINDS = ("comment", "mark", "finding")
STATUSES = ("open", "in_progress", "resolved", "verified")
UNRESOLVED = ("open", "in_progress")
# Findings are hints: they never hold a decision back.
BLOCKING_KINDS = ("comment", "mark")
MARK_SEVERITIES = (
    "must-fix",
    "nit",
    "question",
    "keep",
    "wording",
    "spacing",
    "size",
    "color",
    "alignment",
)
FINDING_SEVERITIES = ("suggestion", "a11y", "polish")

# (kind, from, to) -> who may: "anyone" (with the role to comment) or "person" (not an agent).
_MOVES: dict[tuple[str, str, str], str] = {
    ("comment", "open", "resolved"): "anyone",
    ("comment", "resolved", "open"): "anyone",
    ("mark", "open", "in_progress"): "anyone",
    ("mark", "open", "resolved"): "anyone",
    ("mark", "in_progress", "resolved"): "anyone",
    ("mark", "in_progress", "open"): "person",
    ("mark", "resolved", "verified"): "person",
    ("mark", "resolved", "open"): "person",
    ("mark", "verified", "open"): "person",
    ("finding", "open", "resolved"): "anyone",
    ("finding", "resolved", "open"): "anyone",
}


def is_unresolved(status: str) -> bool:
    return status in UNRESOLVED


def unresolved_clause() -> ColumnElement[bool]:
    """``is_unresolved`` for a query over root threads that can hold a decision back."""
    return (
        Thread.parent_id.is_(None) & Thread.status.in_(UNRESOLVED) & Thread.kind.in_(BLOCKING_KINDS)
    )


def blocking(s: Session, subject_type: str, subject_id: str) -> list[str]:
    """Ids of the unresolved threads on a subject that hold a decision on it back."""
    return list(
        s.scalars(
            select(Thread.id)
            .where(
                Thread.subject_type == subject_type,
                Thread.subject_id == subject_id,
                unresolved_clause(),
            )
            .order_by(Thread.id)
        )
    )


def moves(actor: Actor, row: Thread) -> list[str]:
    """The statuses this actor may move the thread to now."""
    return [to for to in STATUSES if to != row.status and refusal(actor, row, to) is None]


def refusal(actor: Actor, row: Thread, to: str) -> Forbidden | Conflict | InvalidInput | None:
    """Why moving the thread to ``to`` is refused for this actor, or None."""
    if to not in STATUSES:
        return InvalidInput(f"status is one of {', '.join(STATUSES)} (got {to!r})")
    forbidden = permissions.refusal(actor, "resolve_comment")
    if forbidden is not None:
        return forbidden
    who = _MOVES.get((row.kind, row.status, to))
    if who is None:
        allowed = [t for (k, f, t) in _MOVES if k == row.kind and f == row.status]
        return Conflict(
            f"a {row.kind} that is {row.status} cannot become {to}"
            + (f"; it can become {', '.join(allowed)}" if allowed else ""),
            thread_id=row.id,
        )
    if who == "person" and actor.is_agent:
        return Forbidden(
            f"only a person can make a {row.status} {row.kind} {to}: agents set in_progress "
            "and resolved, people verify and reopen",
            thread_id=row.id,
        )
    return None


def may_change(actor: Actor, row: Thread) -> bool:
    """Editing and deleting: the author, or an admin."""
    return actor.can("review") and (row.author_key_id == actor.key_id or actor.can("admin"))
