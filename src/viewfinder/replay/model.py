"""What a replay returns: its screenshots (each with the normalised DOM and the JavaScript that
ran since the one before), its timeline and what the page did that the recording did not."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# Changes whenever a replay of the same session on the same deployment could come out
# differently (how events are played, the clock, what a screenshot waits for): a stored base
# replay is reused only when its engine version is this one.
ENGINE_VERSION = "1"

TimelineEvent = Literal["user", "screenshot", "network", "console", "urlChange", "error"]


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One thing that happened, at ``time_ms`` of the replay's virtual clock."""

    time_ms: int
    event: TimelineEvent
    description: str

    def to_json(self) -> dict[str, Any]:
        return {"timeMs": self.time_ms, "event": self.event, "description": self.description}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TimelineEntry:
        return cls(int(obj["timeMs"]), obj["event"], str(obj["description"]))


@dataclass(frozen=True, slots=True)
class FunctionCoverage:
    """A function that ran: its name (``(anonymous)`` when it has none), how often it was
    called and the lines (1-based, first and last) it spans in its file."""

    name: str
    count: int
    first_line: int
    last_line: int


@dataclass(frozen=True, slots=True)
class FileCoverage:
    """The JavaScript of one file that ran: ``path`` is the script's path on the deployment
    (``assets/app.js``), ``covered`` the lines that ran as (first, last) ranges, 1-based."""

    path: str
    executable_lines: int
    covered_lines: int
    covered: tuple[tuple[int, int], ...]
    functions: tuple[FunctionCoverage, ...]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> FileCoverage:
        return cls(
            path=obj["path"],
            executable_lines=int(obj["executable_lines"]),
            covered_lines=int(obj["covered_lines"]),
            covered=tuple((int(a), int(b)) for a, b in obj["covered"]),
            functions=tuple(FunctionCoverage(**f) for f in obj["functions"]),
        )


@dataclass(frozen=True)
class ReplayShot:
    """A screenshot: ``after-event-N`` (N counts events from 0) or ``end-state``."""

    name: str
    png: bytes
    width: int
    height: int
    time_ms: int
    dom: str
    coverage: tuple[FileCoverage, ...] = ()


@dataclass(frozen=True)
class ReplayResult:
    """A whole replay. ``unrecorded`` are the calls the recording had no answer for (each got
    a 404); ``failed_requests`` calls answered with an error status or not at all;
    ``console_errors`` and ``exceptions`` what the page reported. ``stopped_after`` is the
    number of events played when the replay was stopped early (out of its time), else None:
    it then has no ``end-state``."""

    shots: tuple[ReplayShot, ...]
    timeline: tuple[TimelineEntry, ...]
    unrecorded: tuple[str, ...] = ()
    failed_requests: tuple[str, ...] = ()
    console_errors: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    engine_version: str = ENGINE_VERSION
    steps: int = 0
    coverage: tuple[FileCoverage, ...] = field(default=())
    stopped_after: int | None = None

    def shot(self, name: str) -> ReplayShot | None:
        return next((s for s in self.shots if s.name == name), None)
