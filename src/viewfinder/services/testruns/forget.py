"""Forgetting a recorded session in test runs too: what its replays kept of the visitor (the
screenshots, the DOM, the timeline with what was typed and fetched) is wiped, while the runs
keep their outcomes and decisions."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.services import images
from viewfinder.store.models import Image
from viewfinder.store.replay_models import Replay, ReplayScreenshot

REASON = "forgotten"


def forget_session(s: Session, project_id: str, session_id: str) -> int:
    """In the caller's transaction: every replay of the session loses its timeline, facts,
    coverage and screenshots' DOM, and its screenshots expire (their files are swept once
    nothing else holds them). Returns how many replays were wiped."""
    replays = list(
        s.scalars(
            select(Replay).where(Replay.project_id == project_id, Replay.session_id == session_id)
        )
    )
    for replay in replays:
        replay.timeline, replay.facts, replay.coverage = [], {}, []
        for shot in s.scalars(
            select(ReplayScreenshot).where(ReplayScreenshot.replay_id == replay.id)
        ):
            shot.dom, shot.coverage = "", []
            image = s.get(Image, shot.image_id)
            if image is not None:
                images.expire_row(image, REASON)
    return len(replays)
