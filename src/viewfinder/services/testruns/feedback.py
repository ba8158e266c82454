"""Feedback agents and people send about Viewfinder (``submit_feedback``), kept for the
server's admins, who read it on the dashboard and with ``viewfinder feedback``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select

from viewfinder.errors import InvalidInput
from viewfinder.ids import new_id
from viewfinder.services import permissions
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.text import check_text
from viewfinder.store.replay_models import Feedback

OUTCOMES = ("helped", "neutral", "hindered")


class FeedbackRecord(Record):
    id: str
    message: str
    outcome: str | None
    test_run_id: str | None
    skill: str | None
    agent_name: str | None
    agent_model: str | None
    author: str
    is_agent: bool
    created_at: datetime


def _short(what: str, value: Any) -> str | None:
    if value is None:
        return None
    return check_text(what, value, maximum=100, multiline=False)


def submit_feedback(
    env: Env,
    actor: Actor,
    message: str,
    *,
    outcome: str | None = None,
    test_run_id: str | None = None,
    skill: str | None = None,
    agent_name: str | None = None,
    agent_model: str | None = None,
) -> dict[str, str]:
    permissions.require(actor, "submit_feedback")
    text = check_text("feedback", message, maximum=10_000)
    if outcome is not None and outcome not in OUTCOMES:
        raise InvalidInput(f"outcome is one of {', '.join(OUTCOMES)}", field="outcome")
    row = Feedback(
        id=new_id("fbk"),
        project_id=actor.project_id,
        key_id=actor.key_id,
        author_name=actor.name,
        is_agent=actor.is_agent,
        message=text,
        outcome=outcome,
        test_run_id=_short("testRunId", test_run_id),
        skill=_short("skill", skill),
        agent_name=_short("agentName", agent_name),
        agent_model=_short("agentModel", agent_model),
    )
    with env.db.write() as s:
        s.add(row)
    return {"feedbackId": row.id}


def list_feedback(env: Env, actor: Actor, *, limit: int = 100) -> list[FeedbackRecord]:
    """The project's feedback, newest first (admins only)."""
    permissions.require(actor, "list_feedback")
    with env.db.read() as s:
        rows = s.scalars(
            select(Feedback)
            .where(Feedback.project_id == actor.project_id)
            .order_by(Feedback.id.desc())
            .limit(max(1, min(limit, 1000)))
        )
        return [
            FeedbackRecord(
                id=r.id,
                message=r.message,
                outcome=r.outcome,
                test_run_id=r.test_run_id,
                skill=r.skill,
                agent_name=r.agent_name,
                agent_model=r.agent_model,
                author=r.author_name,
                is_agent=r.is_agent,
                created_at=r.created_at,
            )
            for r in rows
        ]
