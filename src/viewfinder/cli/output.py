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
