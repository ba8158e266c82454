"""Every object belongs to one project: another project's object, like one that never was,
reads as not found. This is that rule, once, for every lookup by id."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.orm import Session

from viewfinder.errors import NotFound
from viewfinder.ids import well_formed
from viewfinder.services.env import Actor

T = TypeVar("T")


def owned(
    s: Session,
    model: type[T],
    object_id: str,
    actor: Actor,
    what: str,
    *,
    lock: bool | dict[str, bool] = False,
) -> T:
    """The row of that id in the actor's project (``lock``: row-locked as Session.get would).
    Raises NotFound naming it, for a malformed id too (it can name nothing)."""
    row: Any = s.get(model, object_id, with_for_update=lock) if well_formed(object_id) else None
    if row is None or row.project_id != actor.project_id:
        raise NotFound(
            f"no {what} {object_id!r} in this project",
            **{f"{what.replace(' ', '_')}_id": object_id},
        )
    found: T = row
    return found
