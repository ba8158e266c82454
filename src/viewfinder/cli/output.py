"""How the CLI reports: errors on stderr with exit code 2, results as text or one JSON object."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

from viewfinder.errors import ViewfinderError

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_ERROR = 2


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(EXIT_ERROR)


def fail_on(exc: ViewfinderError) -> NoReturn:
    fail(f"[{exc.code}] {exc.message}")


def print_json(obj: Any) -> None:
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
