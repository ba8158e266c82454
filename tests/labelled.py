"""The render cache the labelled corpora share (tests/analysis_corpus.py, tests/style_corpus.py,
bench/heldout.py): pairs rendered once into a folder with their labels, and rendered again only
when what made them changed, the browser included.

The tests' corpora live in the user's cache (``$VIEWFINDER_TEST_CACHE``, else
``$XDG_CACHE_HOME/viewfinder-tests``, else ``~/.cache/viewfinder-tests``), not in the checkout:
a fresh clone on the same machine, as CI makes for every run, finds them rendered (over a
minute of Chromium saved), and the fingerprint keeps it from using renders of other pages or
of another Chromium."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.chromium import CHROMIUM
from viewfinder.fsutil import write_atomic

Pairs = list[dict[str, Any]]
CACHE = Path(
    os.environ.get("VIEWFINDER_TEST_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "viewfinder-tests"
)


@functools.cache
def browser() -> str:
    """What renders the pairs, as the browser names itself."""
    done = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def cached(out: Path, fingerprint: str, render: Callable[[], Pairs], what: str) -> Pairs:
    """The labelled pairs recorded in ``out``/labels.json under ``fingerprint`` (a digest of
    whatever made them), or those ``render`` writes into ``out`` when there are none."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "labels.json"
    fingerprint = f"{fingerprint} {browser()}"
    # Test workers start together: one renders while the others wait, then all read.
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if manifest.exists():
            data = json.loads(manifest.read_text())
            if data.get("fingerprint") == fingerprint:
                return list(data["pairs"])
        print(f"rendering {what} into {out} with Chromium...", file=sys.stderr)
        pairs = render()
        record = {"fingerprint": fingerprint, "pairs": pairs}
        write_atomic(manifest, json.dumps(record, indent=1).encode())
        return pairs
