"""Kinds of background work, registered by the services that own them: what runs a job of a
kind, what gives up on its subject, how long it may take, and which errors retrying cannot fix.
Periodic tasks (sweeps) register here too. The queue and the workers know only this registry,
never the services, so the dependency points one way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A job's runner gets the runtime (services' Env), the job's subject id and the job's id, and
# returns True when it marked the job done itself, in the transaction that stored its result.
Runner = Callable[[Any, str, int], bool]
# Called once a job will not be tried again, with the reason, so its subject is settled too.
GiveUp = Callable[[Any, str, str], None]


@dataclass(frozen=True)
class Kind:
    name: str
    run: Runner
    give_up: GiveUp
    time_limit: float = 120.0  # seconds; a job running longer is stopped and retried
    final: tuple[type[BaseException], ...] = ()  # errors that a retry cannot fix


@dataclass(frozen=True)
class Periodic:
    name: str
    every: float  # seconds
    run: Callable[[Any], object]


KINDS: dict[str, Kind] = {}
PERIODIC: dict[str, Periodic] = {}


def register(kind: Kind) -> Kind:
    """Add a kind of job. Registering the same name again replaces it (module reloads)."""
    KINDS[kind.name] = kind
    return kind


def register_periodic(task: Periodic) -> Periodic:
    PERIODIC[task.name] = task
    return task
