"""The `viewfinder` command line: a thin adapter over the engine and (later) the services."""

from __future__ import annotations

import typer

from viewfinder.cli import diff
from viewfinder.runtime import tune_allocator

app = typer.Typer(
    name="viewfinder",
    help="Viewfinder: compare screenshots with approved baselines and review the changes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command("diff")(diff.diff)


@app.callback()
def _root() -> None:
    """Viewfinder: compare screenshots with approved baselines and review the changes."""


def main() -> None:
    tune_allocator()
    app()
