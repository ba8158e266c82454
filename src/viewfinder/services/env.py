"""What every service call runs with: the stores and settings (Env) and the caller (Actor)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from viewfinder.errors import Forbidden
from viewfinder.services.signing import Signer
from viewfinder.settings import Settings
from viewfinder.store.blobs import BlobStore, open_store
from viewfinder.store.db import Database

ROLES = ("upload", "review", "approve", "admin")
# The key a web page embeds for its recorder (public in the page): it can send recorded sessions
# and nothing else, no other role implies it, and it carries no other role.
RECORD = "record"
# A role grants the ones listed with it: an admin can do everything, an approver can review.
IMPLIED = {
    "admin": {"upload", "review", "approve", "admin"},
    "approve": {"review", "approve"},
    "review": {"review"},
    "upload": {"upload"},
    RECORD: {RECORD},
}
WHAT_ROLE_ALLOWS = {
    "upload": "upload screenshots",
    "review": "review diffs and comment",
    "approve": "change baselines",
    "admin": "manage keys",
    RECORD: "send recorded sessions from a web page",
}


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is calling, in one project, with its roles: a key (``key_id`` its id), or a person
    (``person_id`` set, and ``key_id`` the person's id too, so what they write is authored by
    them). ``is_agent`` is set by the front door (MCP calls are agents), by the key's kind, or
    for an agent acting with a person's OAuth token (``name`` then says for whom)."""

    project_id: str
    key_id: str
    name: str
    roles: frozenset[str]
    is_agent: bool = False
    person_id: str | None = None
    # The OAuth sign-in (its family of tokens) the call came with, if any.
    connection: str | None = None

    @property
    def records_only(self) -> bool:
        """A recorder's key: it may send sessions and do nothing else."""
        return self.roles == frozenset({RECORD})

    def can(self, role: str) -> bool:
        return any(role in IMPLIED[r] for r in self.roles)

    def refusal(self, role: str, action: str) -> Forbidden | None:
        """The Forbidden error naming the role to ask a person for, or None when it has it."""
        if self.can(role):
            return None
        if self.person_id is not None:
            return Forbidden(
                f"you cannot {action} in this project: that needs the '{role}' role "
                f"({WHAT_ROLE_ALLOWS[role]}). Ask one of the project's admins to give you "
                "that role, or to do it for you.",
                role=role,
            )
        return Forbidden(
            f"this key cannot {action}: that needs the '{role}' role "
            f"({WHAT_ROLE_ALLOWS[role]}). Ask a person with an admin key to {action}, or to "
            f"give you a key with that role (viewfinder keys create --role {role}).",
            role=role,
        )

    def require(self, role: str, action: str) -> None:
        """Raises Forbidden naming the role to ask a person for."""
        refused = self.refusal(role, action)
        if refused is not None:
            raise refused


@dataclass
class Env:
    settings: Settings
    db: Database
    blobs: BlobStore
    signer: Signer
    # Called after a commit that queued jobs, so idle workers start at once instead of polling.
    wake_workers: list[object] = field(default_factory=list)
    # Keys this process checked recently: hash -> (when, Actor); see projects.known_actor.
    trusted_keys: dict[str, tuple[float, Actor]] = field(default_factory=dict)

    @classmethod
    def open(cls, settings: Settings, *, migrate: bool = True) -> Env:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        db = Database(settings.resolved_database_url, pool_size=settings.db_pool_size)
        if migrate:
            db.migrate()
        return cls(
            settings=settings,
            db=db,
            blobs=open_store(settings.blob_url, settings.data_dir, settings.s3_endpoint),
            signer=Signer(settings.secret or _local_secret(settings.data_dir)),
        )

    def close(self) -> None:
        self.db.dispose()


def _local_secret(data_dir: Path) -> str:
    """The signing secret of an embedded install, made on first start and kept private."""
    path = data_dir / "secret"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    value = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(value)
    return value
