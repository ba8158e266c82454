"""The recorder's services as test runs' sources of sessions and deployments (the default;
see sources.py)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from viewfinder.errors import NotFound, Unavailable
from viewfinder.replay.recording import Recording
from viewfinder.services import deployments
from viewfinder.services.env import Actor, Env

CHOSEN = 100  # sessions replayed when a run names none and the project has chosen none


def _sessions() -> Any:
    # The sessions service arrives with the recorder's ingest; until it is there, runs that
    # need recorded sessions say so instead of failing at import.
    try:
        return importlib.import_module("viewfinder.services.sessions")
    except ImportError:
        raise Unavailable(
            "this server has no recorded sessions service yet: sessions cannot be replayed"
        ) from None


class RecorderSources:
    def recording(self, env: Env, actor: Actor, session_id: str) -> Recording:
        found: Recording = _sessions().get_recording(env, actor, session_id)
        return found

    def chosen_sessions(self, env: Env, actor: Actor) -> list[str]:
        module = _sessions()
        if hasattr(module, "chosen_sessions"):
            return list(module.chosen_sessions(env, actor))
        return [s.id for s in module.list_sessions(env, actor, limit=CHOSEN).sessions]

    def deployment_commit(self, env: Env, actor: Actor, deployment_id: str) -> str:
        return deployments.get_deployment(env, actor, deployment_id).commit_sha

    def deployment_for_commit(self, env: Env, actor: Actor, commit_sha: str) -> str | None:
        try:
            return deployments.latest_for_commit(env, actor, commit_sha).id
        except NotFound:
            return None

    @contextmanager
    def open(self, env: Env, deployment_id: str) -> Iterator[str]:
        with deployments.open_deployment(env, deployment_id) as url:
            yield url
