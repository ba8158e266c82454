"""Where test runs get their sessions and deployments: the recorder's services.

Test runs need five things of them: a session's recording, the chosen set of sessions, a
deployment's commit, the latest deployment of a commit, and a deployment served on loopback
for the time of a replay. They come through this one seam, so that the recorder's services
(services.sessions and services.deployments) and test runs can be built and tested apart:
``use(sources)`` installs an implementation; without one the recorder's services are used
(recorder.py). Tests install their own, serving generated apps from temp dirs."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from viewfinder.replay.recording import Recording
from viewfinder.services.env import Actor, Env


class Sources(Protocol):
    def recording(self, env: Env, actor: Actor, session_id: str) -> Recording:
        """The session's recording. Raises NotFound."""
        ...

    def chosen_sessions(self, env: Env, actor: Actor) -> list[str]:
        """The sessions a run replays when none are named, newest first."""
        ...

    def deployment_commit(self, env: Env, actor: Actor, deployment_id: str) -> str:
        """The commit a deployment was built from. Raises NotFound."""
        ...

    def deployment_for_commit(self, env: Env, actor: Actor, commit_sha: str) -> str | None:
        """The latest deployment of a commit (a full sha or a prefix), None without one."""
        ...

    def open(self, env: Env, deployment_id: str) -> AbstractContextManager[str]:
        """The deployment served for a replay: yields its base URL (scheme://host:port)."""
        ...


_installed: list[Sources] = []


def use(sources: Sources) -> None:
    """Install where sessions and deployments come from (replacing any before)."""
    _installed[:] = [sources]


def current() -> Sources:
    """The installed sources; the recorder's services when none were installed."""
    if not _installed:
        from viewfinder.services.testruns.recorder import RecorderSources

        return RecorderSources()
    return _installed[0]
