"""The `viewfinder` command: every command of the CLI adapter (cli/), and the commands that
start the server's processes (launch.py), in the order `viewfinder --help` lists them."""

from __future__ import annotations

import typer

from viewfinder import launch
from viewfinder.cli import (
    baselines,
    builds,
    capture,
    checkups,
    comments,
    contexts,
    deploy,
    diff,
    diffs,
    github,
    keys,
    people,
    push,
    sessions,
    testruns,
    upload,
)
from viewfinder.cli.client import ClientError
from viewfinder.cli.output import EXIT_ERROR

app = typer.Typer(
    name="viewfinder",
    help="Viewfinder: compare screenshots with approved baselines and review the changes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command("diff")(diff.diff)
app.command("serve")(launch.serve)
app.command("worker")(launch.worker)
app.command("mcp")(launch.mcp)
app.add_typer(keys.app, name="keys")
app.add_typer(people.users, name="users")
app.add_typer(people.projects, name="projects")
app.command("upload")(upload.upload)
app.command("builds")(builds.builds)
app.command("build")(builds.build)
app.command("stories")(builds.stories)
app.command("accept-build")(builds.accept_build)
app.command("review")(diffs.review)
app.command("approve")(diffs.approve)
app.command("show-diff")(diffs.show_diff)
app.add_typer(comments.app, name="comments")
app.add_typer(baselines.app, name="baselines")
app.command("push")(push.push)
app.command("image")(push.image)
app.command("close")(contexts.close)
app.command("expire")(contexts.expire)
app.command("pr-comment")(contexts.pr_comment)
app.command("usage")(contexts.usage)
app.command("capture")(capture.capture)
app.add_typer(github.app, name="github")
app.command("deploy")(deploy.deploy)
app.command("sessions")(sessions.sessions)
app.command("session")(sessions.session)
app.add_typer(testruns.app, name="test-run")
app.command("feedback")(testruns.feedback)
app.add_typer(checkups.app, name="checkup")


@app.callback()
def _root() -> None:
    """Viewfinder: compare screenshots with approved baselines and review the changes."""


def main() -> None:
    try:
        app()
    except ClientError as exc:
        # Raised by the API commands, possibly from upload threads, and reported once here.
        typer.echo(f"error: {exc.message}", err=True)
        raise SystemExit(EXIT_ERROR) from None
