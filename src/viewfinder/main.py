"""The `viewfinder` command: every command of the CLI adapter (cli/), and the commands that
start the server's processes (launch.py), in the order `viewfinder --help` lists them.

Each command's module is imported only when that command runs: `viewfinder diff` never loads
the HTTP client, the server or the capture engine, and on a plain command line not even typer
(see cli/quick.py). The list of commands is written here, from each command's summary, without
importing any command or typer: typer alone takes ten times longer to import than a 1280x800
comparison takes to run."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

# name: ("module:attribute", summary). The attribute is a command function or a typer.Typer
# group of commands; the summary is its line in `viewfinder --help`, and fits one.
COMMANDS: dict[str, tuple[str, str]] = {
    "diff": ("viewfinder.cli.diff:diff", "Compare two screenshots (exit 0 unchanged, 1 changed)."),
    "serve": ("viewfinder.launch:serve", "Run the review server: the REST API and its workers."),
    "worker": ("viewfinder.launch:worker", "Run one comparison worker against a server's data."),
    "mcp": ("viewfinder.launch:mcp", "Serve MCP over stdio, on local data or through a server."),
    "keys": ("viewfinder.cli.keys:app", "Make and list API keys."),
    "users": ("viewfinder.cli.people:users", "Make accounts and reset their passwords."),
    "projects": (
        "viewfinder.cli.people:projects",
        "Make and list projects, and put people in them.",
    ),
    "upload": (
        "viewfinder.cli.upload:upload",
        "Upload a build's PNGs or Storybook to be compared.",
    ),
    "builds": ("viewfinder.cli.builds:builds", "List builds, newest first."),
    "build": ("viewfinder.cli.builds:build", "Show a build: status, verdict, review and stories."),
    "stories": (
        "viewfinder.cli.builds:stories",
        "List a build's stories in one state, a page at a time.",
    ),
    "accept-build": (
        "viewfinder.cli.builds:accept_build",
        "Accept every pending change of a build.",
    ),
    "review": ("viewfinder.cli.diffs:review", "Accept, deny or ignore a change."),
    "approve": (
        "viewfinder.cli.diffs:approve",
        "Make a diff's candidate the baseline (approve role).",
    ),
    "show-diff": (
        "viewfinder.cli.diffs:show_diff",
        "Show a diff: outcome, regions, decision, next step.",
    ),
    "comments": ("viewfinder.cli.comments:app", "Comment threads on diffs."),
    "baselines": ("viewfinder.cli.baselines:app", "List baselines or delete one."),
    "push": (
        "viewfinder.cli.push:push",
        "Push one screenshot into a PR or context; print its markdown.",
    ),
    "image": ("viewfinder.cli.push:image", "Show a pushed image and its newest comparison."),
    "close": (
        "viewfinder.cli.contexts:close",
        "Close a PR or context: settle baselines, expire images.",
    ),
    "expire": (
        "viewfinder.cli.contexts:expire",
        "Stop delivering a pushed image: its link stops working.",
    ),
    "pr-comment": (
        "viewfinder.cli.contexts:pr_comment",
        "Print a PR's Markdown comment: screenshots, changes.",
    ),
    "usage": (
        "viewfinder.cli.contexts:usage",
        "Show the project's storage use, images and baselines.",
    ),
    "capture": (
        "viewfinder.cli.capture:capture",
        "Capture a page, an email or a PDF with the server's engine.",
    ),
    "github": ("viewfinder.cli.github:app", "GitHub: commit statuses and the PR comment."),
    "deploy": (
        "viewfinder.cli.deploy:deploy",
        "Upload a static build or name a preview, for replays.",
    ),
    "sessions": ("viewfinder.cli.sessions:sessions", "List recorded sessions, newest first."),
    "session": (
        "viewfinder.cli.sessions:session",
        "Show a session's user flow and network summary.",
    ),
    "test-run": (
        "viewfinder.cli.testruns:app",
        "Session replays: test runs and their differences.",
    ),
    "feedback": (
        "viewfinder.cli.testruns:feedback",
        "Read the feedback agents and people sent (admin key).",
    ),
    "checkup": (
        "viewfinder.cli.checkups:app",
        "Design checkups: a person marks, the agent fixes, pass by pass.",
    ),
}
HELP = "Compare screenshots with approved baselines and review the changes."


def listing() -> str:
    """What `viewfinder --help` prints: the commands, each with its summary."""
    width = max(map(len, COMMANDS)) + 2
    rows = "".join(f"  {name:<{width}}{summary}\n" for name, (_, summary) in COMMANDS.items())
    return (
        f"Usage: viewfinder [OPTIONS] COMMAND [ARGS]...\n\n  {HELP}\n\n"
        f"Options:\n  --help  Show this message and exit.\n\nCommands:\n{rows}"
    )


def _root() -> None:
    """`viewfinder` itself takes no option but --help."""


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
        module, attribute = COMMANDS[name][0].split(":")
        target = getattr(importlib.import_module(module), attribute)
        if isinstance(target, typer.Typer):
            app.add_typer(target, name=name)
        else:
            app.command(name)(typed(target))
    return app


# Commands run without typer's parsing when their command line is plain (see cli/quick.py).
QUICK = {"diff"}


def main() -> None:
    # numpy's OpenBLAS starts a thread a core when numpy is imported (`viewfinder diff` about
    # 10% slower for it, bench/cli.py) for matrix products this program never makes large enough
    # to share; its processes (a diff, the server's workers, one a core already) use one. A
    # setting of the caller's own is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sys.argv[1:] in ([], ["--help"]):
        # As typer does: asked for, the list goes to stdout; a bare `viewfinder` is a usage
        # error, with the list on stderr.
        asked = bool(sys.argv[1:])
        (sys.stdout if asked else sys.stderr).write(listing())
        raise SystemExit(0 if asked else 2)
    if sys.argv[1:2] and sys.argv[1] in QUICK:
        from viewfinder.cli import quick

        module, attribute = COMMANDS[sys.argv[1]][0].split(":")
        code = quick.run(getattr(importlib.import_module(module), attribute), sys.argv[2:])
        if code is not None:
            raise SystemExit(code)
    from viewfinder.cli.client import ClientError
    from viewfinder.cli.output import fail

    # `viewfinder NAME ...` needs only NAME; anything else (a mistyped name, an unknown option)
    # gets all of them, for typer to judge.
    app = build_app(sys.argv[1:2] if sys.argv[1] in COMMANDS else COMMANDS)
    try:
        app()
    except ClientError as exc:
        # Raised by the API commands, possibly from upload threads, and reported once here.
        fail(exc.message)
