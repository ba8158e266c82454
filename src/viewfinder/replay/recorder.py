"""The recorder a web app embeds (recorder.js, served by the server at /recorder.js), and the
flag a replay sets so that the app, and the recorder, know the page is being replayed."""

from __future__ import annotations

import functools
from pathlib import Path

RECORDER_JS = Path(__file__).with_name("recorder.js")
_RATE_LINE = "var SAMPLE_RATE = 1; /* set by the server */"

# Run before any script of a replayed page (Playwright's add_init_script): the app reads
# `window.Viewfinder.isReplay`, and the recorder records nothing.
REPLAY_INIT_SCRIPT = (
    "Object.defineProperty(window, '__VIEWFINDER_REPLAY__', {value: true});"
    "window.Viewfinder = Object.assign(window.Viewfinder || {}, {isReplay: true});"
)


@functools.cache
def _source() -> str:
    text = RECORDER_JS.read_text(encoding="utf-8")
    assert _RATE_LINE in text, "recorder.js lost its SAMPLE_RATE line"
    return text


def recorder_script(sample_rate: float) -> str:
    """recorder.js with the share of sessions it records (0 to 1) filled in."""
    rate = min(1.0, max(0.0, float(sample_rate)))
    return _source().replace(_RATE_LINE, f"var SAMPLE_RATE = {rate!r}; /* set by the server */")
