"""The replay engine: recorded user sessions played back on a deployment, deterministically.

Like ``viewfinder.capture`` it knows nothing of the database or the server: a ``Recording``
and a base URL in, screenshots, normalised DOM, a timeline and JS coverage out. It imports
only ``viewfinder.capture`` (the warm Chromium camera), ``viewfinder.imaging`` and
``viewfinder.errors``.

``recording.py`` holds the recording format shared with the recorder and the ingest.

Use::

    replay(recording, base_url, chromium="/usr/bin/chromium", seconds=120, stop_after=None)
        -> ReplayResult: screenshots after-event-N and end-state (PNG, normalised DOM,
        coverage each), the timeline and what the page did that the recording did not;
        past stop_after seconds no further event is played (stopped_after says how many were)
    dom_diff(base_dom, head_dom, context=3)          "[diff N]" hunks, indentation stripped
    timeline_diff(base, head)                        rows diff/timeMs/event/description
    coverage.diff(base_files, head_files)            rows keyed by file and function
"""

from __future__ import annotations

from viewfinder.capture.camera import camera
from viewfinder.capture.policy import CHROMIUM
from viewfinder.replay.diffs import dom_diff, timeline_diff
from viewfinder.replay.model import (
    ENGINE_VERSION,
    FileCoverage,
    ReplayResult,
    ReplayShot,
    TimelineEntry,
)
from viewfinder.replay.player import runner
from viewfinder.replay.recording import Recording

__all__ = [
    "ENGINE_VERSION",
    "FileCoverage",
    "Recording",
    "ReplayResult",
    "ReplayShot",
    "TimelineEntry",
    "dom_diff",
    "replay",
    "timeline_diff",
]


def replay(
    recording: Recording,
    base_url: str,
    *,
    chromium: str = CHROMIUM,
    seconds: float = 120.0,
    stop_after: float | None = None,
) -> ReplayResult:
    """Play ``recording`` on the deployment served at ``base_url`` in this process's warm
    Chromium. After ``stop_after`` seconds no further event is played: the result keeps the
    screenshots taken and says how far it got (``stopped_after``). Raises CaptureFailed when
    the browser fails or the replay outlives ``seconds``."""
    return camera(chromium).run(runner(recording, base_url, seconds, stop_after), seconds=seconds)
