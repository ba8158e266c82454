"""Sessions and deployments for test-run tests, as the recorder's services would give them:
recordings kept in memory, deployments as generated builds in temp dirs, each served on
127.0.0.1 for the time of a replay."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.replay_app import serving, write_app
from viewfinder.errors import NotFound
from viewfinder.ids import new_id
from viewfinder.replay.recording import Recording
from viewfinder.services.env import Actor, Env


@dataclass
class LocalSources:
    root: Path
    recordings: dict[str, Recording] = field(default_factory=dict)
    builds: dict[str, tuple[str, Path]] = field(default_factory=dict)  # id -> (commit, dir)
    opened: list[str] = field(default_factory=list)
    unreachable: set[str] = field(default_factory=set)  # served nowhere: nothing listens

    def add_session(self, recording: Recording) -> str:
        session_id = new_id("ses")
        self.recordings[session_id] = recording
        return session_id

    def deploy(self, commit: str, variant: str = "base") -> str:
        deployment_id = new_id("dep")
        self.builds[deployment_id] = (commit, write_app(self.root / deployment_id, variant))
        return deployment_id

    def recording(self, env: Env, actor: Actor, session_id: str) -> Recording:
        if session_id not in self.recordings:
            raise NotFound(f"no session {session_id!r} in this project")
        return self.recordings[session_id]

    def chosen_sessions(self, env: Env, actor: Actor) -> list[str]:
        return list(reversed(self.recordings))

    def deployment_commit(self, env: Env, actor: Actor, deployment_id: str) -> str:
        if deployment_id not in self.builds:
            raise NotFound(f"no deployment {deployment_id!r} in this project")
        return self.builds[deployment_id][0]

    def deployment_for_commit(self, env: Env, actor: Actor, commit_sha: str) -> str | None:
        found = [d for d, (c, _) in self.builds.items() if c.startswith(commit_sha)]
        return found[-1] if found else None

    @contextmanager
    def open(self, env: Env, deployment_id: str) -> Iterator[str]:
        self.opened.append(deployment_id)
        if deployment_id in self.unreachable:
            yield "http://127.0.0.1:9"  # the discard port: connections are refused
            return
        with serving(self.builds[deployment_id][1]) as url:
            yield url
