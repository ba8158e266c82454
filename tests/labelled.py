"""The render cache the labelled corpora share (tests/analysis_corpus.py, tests/style_corpus.py,
bench/heldout.py): pairs rendered once into a folder with their labels, and rendered again only
when what made them changed."""

from __future__ import annotations

import fcntl
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from viewfinder.fsutil import write_atomic

Pairs = list[dict[str, Any]]


def cached(out: Path, fingerprint: str, render: Callable[[], Pairs], what: str) -> Pairs:
    """The labelled pairs recorded in ``out``/labels.json under ``fingerprint`` (a digest of
    whatever made them), or those ``render`` writes into ``out`` when there are none."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "labels.json"
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
