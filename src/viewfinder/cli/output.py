"""How the CLI reports: errors on stderr with exit code 2, results as text or one JSON object.
Without typer, which `viewfinder diff` does not load (see cli/quick.py)."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

from viewfinder.errors import ViewfinderError

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_ERROR = 2


def echo(message: str, err: bool = False) -> None:
    """Print one line on stdout (stderr with ``err``), as typer.echo does for plain text."""
    print(message, file=sys.stderr if err else sys.stdout, flush=True)


def reader_gone() -> None:
    """Send the rest of stdout nowhere: whoever read it closed the pipe (``viewfinder diff ... |
    head -1``), and Python would otherwise fail again flushing it at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit 2."""
    echo(f"error: {message}", err=True)
    raise SystemExit(EXIT_ERROR)


def fail_on(exc: ViewfinderError) -> NoReturn:
    fail(f"[{exc.code}] {exc.message}")


def print_json(obj: Any) -> None:
    import json  # here: `viewfinder diff` prints text unless asked

    sys.stdout.write(json.dumps(obj, indent=2) + "\n")


def repo_for_pr(given: str | None) -> str:
    """The repository a --pr belongs to, or exit 2 asking for --repo."""
    from viewfinder.plumbing.gitinfo import resolve_repo

    repo = resolve_repo(given)
    if repo is None:
        fail(
            "--pr needs the repository: pass --repo owner/name (or set VIEWFINDER_REPO); it "
            "could not be read from GITHUB_REPOSITORY or a GitHub `origin` remote"
        )
    return repo
