"""The `viewfinder` command: every command of the CLI adapter (cli/), and the commands that
start the server's processes (launch.py), in the order `viewfinder --help` lists them.

Each command's module is imported only when that command runs (or when the whole list is
shown): `viewfinder diff` never loads the HTTP client, the server or the capture engine, and
on a plain command line not even typer (see cli/quick.py), so it starts in a fraction of the
time. The list alone is built without the commands' parameters."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

# name: "module:attribute", a command function or a typer.Typer group of commands.
COMMANDS = {
    "diff": "viewfinder.cli.diff:diff",
    "serve": "viewfinder.launch:serve",
    "worker": "viewfinder.launch:worker",
    "mcp": "viewfinder.launch:mcp",
    "keys": "viewfinder.cli.keys:app",
    "users": "viewfinder.cli.people:users",
    "projects": "viewfinder.cli.people:projects",
    "upload": "viewfinder.cli.upload:upload",
    "builds": "viewfinder.cli.builds:builds",
    "build": "viewfinder.cli.builds:build",
    "stories": "viewfinder.cli.builds:stories",
    "accept-build": "viewfinder.cli.builds:accept_build",
    "review": "viewfinder.cli.diffs:review",
    "approve": "viewfinder.cli.diffs:approve",
    "show-diff": "viewfinder.cli.diffs:show_diff",
    "comments": "viewfinder.cli.comments:app",
    "baselines": "viewfinder.cli.baselines:app",
    "push": "viewfinder.cli.push:push",
    "image": "viewfinder.cli.push:image",
    "close": "viewfinder.cli.contexts:close",
    "expire": "viewfinder.cli.contexts:expire",
    "pr-comment": "viewfinder.cli.contexts:pr_comment",
    "usage": "viewfinder.cli.contexts:usage",
    "capture": "viewfinder.cli.capture:capture",
    "github": "viewfinder.cli.github:app",
    "deploy": "viewfinder.cli.deploy:deploy",
    "sessions": "viewfinder.cli.sessions:sessions",
    "session": "viewfinder.cli.sessions:session",
    "test-run": "viewfinder.cli.testruns:app",
    "feedback": "viewfinder.cli.testruns:feedback",
    "checkup": "viewfinder.cli.checkups:app",
}
HELP = "Viewfinder: compare screenshots with approved baselines and review the changes."


def _root() -> None:
    """Viewfinder: compare screenshots with approved baselines and review the changes."""


def build_app(names: Iterable[str] = COMMANDS, *, listing: bool = False) -> typer.Typer:
    """The `viewfinder` command with the given commands (all of them by default). A ``listing``
    only lists them: every command keeps its name and help but has no parameters, which typer
    would otherwise read from each signature, a third of the time `viewfinder --help` takes."""
    import typer

    from viewfinder.cli.params import typed

    app = typer.Typer(
        name="viewfinder",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    # The callback keeps `viewfinder NAME` a group even when it holds a single command.
    app.callback()(_root)
    for name in names:
        module, attribute = COMMANDS[name].split(":")
        target = getattr(importlib.import_module(module), attribute)
        if isinstance(target, typer.Typer):
            app.add_typer(_listed_group(target) if listing else target, name=name)
        else:
            app.command(name)(_listed(target) if listing else typed(target))
    return app


def _listed(command: Callable[..., object]) -> Callable[[], None]:
    def listed() -> None:
        raise AssertionError("a listing runs no command")

    listed.__doc__ = command.__doc__
    return listed


def _listed_group(group: typer.Typer) -> typer.Typer:
    import copy  # here: a command-line diff never lists commands

    listed = copy.copy(group)  # its help and callback, without its commands
    listed.registered_commands, listed.registered_groups = [], []
    return listed


# Commands run without typer's parsing when their command line is plain (see cli/quick.py).
QUICK = {"diff"}


def main() -> None:
    # numpy's OpenBLAS starts a thread a core when numpy is imported (`viewfinder diff` about
    # 10% slower for it, bench/cli.py) for matrix products this program never makes large enough
    # to share; its processes (a diff, the server's workers, one a core already) use one. A
    # setting of the caller's own is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sys.argv[1:2] and sys.argv[1] in QUICK:
        from viewfinder.cli import quick

        module, attribute = COMMANDS[sys.argv[1]].split(":")
        code = quick.run(getattr(importlib.import_module(module), attribute), sys.argv[2:])
        if code is not None:
            raise SystemExit(code)
    from viewfinder.cli.client import ClientError
    from viewfinder.cli.output import fail

    # `viewfinder NAME ...` needs only NAME; `viewfinder` and `viewfinder --help` only list the
    # commands; anything else (a mistyped name) gets all of them, for typer to judge.
    if sys.argv[1:2] and sys.argv[1] in COMMANDS:
        app = build_app(sys.argv[1:2])
    else:
        app = build_app(listing=sys.argv[1:] in ([], ["--help"]))
    try:
        app()
    except ClientError as exc:
        # Raised by the API commands, possibly from upload threads, and reported once here.
        fail(exc.message)
