"""What the commands that work on this machine's data directory share (no API key involved):
the --data-dir option, settings read from the environment, and how the first start's keys are
shown."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from viewfinder.cli.output import fail

if TYPE_CHECKING:
    from viewfinder.services.projects import Bootstrap
    from viewfinder.settings import Settings

DataDirOption = Annotated[
    Path,
    typer.Option(
        "--data-dir",
        envvar="VIEWFINDER_DATA_DIR",
        metavar="DIR",
        help="Where the database (unless VIEWFINDER_DATABASE_URL is set), blobs and the "
        "signing secret live.",
    ),
]

# What each first-start key is for, in the words a person deciding which to hand out needs.
KEY_USES = {
    "admin": "everything: keys, approving baselines, reviews, uploads",
    "ci": "CI: upload builds and push screenshots",
    "agent": "agents: push screenshots, review diffs and comment",
}


def settings_for(data_dir: Path | None, **overrides: object) -> Settings:
    """Settings from VIEWFINDER_* variables, with the command line's values on top (a
    ``data_dir`` of None leaves the setting as the environment says). Exits 2 naming an
    invalid setting."""
    from pydantic import ValidationError

    from viewfinder.settings import Settings

    try:
        settings = Settings() if data_dir is None else Settings(data_dir=data_dir)
        return settings.model_copy(update=overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "_".join(str(p) for p in first["loc"]).upper()
        fail(f"invalid setting VIEWFINDER_{name}: {first['msg']}")


def database_name(settings: Settings) -> str:
    """The database URL for messages, without its password."""
    from sqlalchemy.engine import make_url

    return make_url(settings.resolved_database_url).render_as_string(hide_password=True)


def print_keys(boot: Bootstrap, url: str) -> None:
    typer.echo(
        f'First start: project "{boot.project.name}" and its API keys, shown only this once:'
    )
    for name, key in boot.keys.items():
        roles = ",".join(key.roles)
        typer.echo(f"  {name:<6} {key.key}  role {roles:<7} {KEY_USES.get(name, '')}")
    typer.echo("Point the CLI at this server:")
    typer.echo(f"  export VIEWFINDER_URL={url}")
    typer.echo("  export VIEWFINDER_KEY=<one of the keys above>")
    typer.echo("More keys later: viewfinder keys create --role upload|review|approve|admin")
    typer.echo("Connect an agent over MCP (the agent key is meant for this):")
    typer.echo(
        f"  Claude Code: claude mcp add --transport http viewfinder {url}/mcp "
        "--header 'Authorization: Bearer ${VIEWFINDER_KEY}'"
    )
    typer.echo(
        '  Cursor (.cursor/mcp.json): {"mcpServers": {"viewfinder": {"url": "'
        + url
        + '/mcp", "headers": {"Authorization": "Bearer <key>"}}}}'
    )
    typer.echo(f"  stdio: VIEWFINDER_URL={url} VIEWFINDER_KEY=<key> viewfinder mcp")
