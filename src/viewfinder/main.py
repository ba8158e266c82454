"""The `viewfinder` command: every command of the CLI adapter (cli/), and the commands that
start the server's processes (launch.py), in the order `viewfinder --help` lists them.

Each command's module is imported only when that command runs (or when the whole list is
shown): `viewfinder diff` never loads the HTTP client, the server or the capture engine, and
on a plain command line not even typer (see cli/quick.py), so it starts in a fraction of the
time."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
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


def build_app(names: Iterable[str] = COMMANDS) -> typer.Typer:
    """The `viewfinder` command with the given commands (all of them by default)."""
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
            app.add_typer(target, name=name)
        else:
            app.command(name)(typed(target))
    return app


# Commands run without typer's parsing when their command line is plain (see cli/quick.py).
QUICK = {"diff"}


def main() -> None:
    if sys.argv[1:2] and sys.argv[1] in QUICK:
        from viewfinder.cli import quick

        module, attribute = COMMANDS[sys.argv[1]].split(":")
        code = quick.run(getattr(importlib.import_module(module), attribute), sys.argv[2:])
        if code is not None:
            raise SystemExit(code)
    from viewfinder.cli.client import ClientError
    from viewfinder.cli.output import fail

    # `viewfinder NAME ...` needs only NAME; anything else (--help, a mistyped name) the list.
    wanted = sys.argv[1:2] if sys.argv[1:2] and sys.argv[1] in COMMANDS else COMMANDS
    try:
        build_app(wanted)()
    except ClientError as exc:
        # Raised by the API commands, possibly from upload threads, and reported once here.
        fail(exc.message)
