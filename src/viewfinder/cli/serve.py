"""`viewfinder serve` and `viewfinder worker`: the processes of a server, run on this machine
from the data directory (no API key involved)."""

from __future__ import annotations

import json
import os
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


def settings_for(data_dir: Path, **overrides: object) -> Settings:
    """Settings from VIEWFINDER_* variables, with the command line's values on top."""
    from pydantic import ValidationError

    from viewfinder.settings import Settings

    try:
        return Settings(data_dir=data_dir).model_copy(update=overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "_".join(str(p) for p in first["loc"]).upper()
        fail(f"invalid setting VIEWFINDER_{name}: {first['msg']}")


def database_name(settings: Settings) -> str:
    """The database URL for messages, without its password."""
    from sqlalchemy.engine import make_url

    return make_url(settings.resolved_database_url).render_as_string(hide_password=True)


def _print_keys(boot: Bootstrap, url: str) -> None:
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


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8000,
    data_dir: DataDirOption = Path(".viewfinder"),
    workers: Annotated[
        int | None,
        typer.Option(
            help="Comparison worker processes (default: VIEWFINDER_WORKERS, else 2).",
            min=0,
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the first start's keys as one JSON line before serving."
        ),
    ] = False,
) -> None:
    """Run the review server: REST API under /api/v1 and comparison workers.

    On the first start it makes a project and prints its admin, CI and agent keys, once.
    """
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from viewfinder.api.app import create_app
    from viewfinder.services import projects
    from viewfinder.services.env import Env

    url = f"http://{host}:{port}"
    # The address links point at: where this server listens, unless set for a proxy in front.
    overrides: dict[str, object] = {}
    if not os.environ.get("VIEWFINDER_PUBLIC_URL"):
        overrides["public_url"] = url
    if workers is not None:
        overrides["workers"] = workers
    settings = settings_for(data_dir, **overrides)
    try:
        env = Env.open(settings)
        try:
            boot = projects.bootstrap(env)
        finally:
            env.close()
    except SQLAlchemyError as exc:
        fail(f"cannot open the database {database_name(settings)}: {exc.__cause__ or exc}")
    if as_json:
        keys = {n: k.model_dump(mode="json") for n, k in boot.keys.items()} if boot else {}
        project = boot.project.model_dump(mode="json") if boot else None
        typer.echo(json.dumps({"url": url, "project": project, "keys": keys}))
    elif boot is not None:
        _print_keys(boot, url)
    else:
        typer.echo(f"Data in {settings.data_dir}; the API keys were printed on the first start.")
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


def worker(data_dir: DataDirOption = Path(".viewfinder")) -> None:
    """Run one comparison worker against the server's database and blobs (to scale out)."""
    import logging

    from viewfinder.jobs.worker import run

    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(message)s")
    run(settings_for(data_dir))


def mcp(
    profile: Annotated[
        str,
        typer.Option(
            help="Tool set: default, uiverify or miseru (names as those products use them).",
        ),
    ] = "default",
    data_dir: DataDirOption = Path(".viewfinder"),
) -> None:
    """Serve MCP over stdio. The key comes from VIEWFINDER_KEY; with VIEWFINDER_URL the tools
    call that server, otherwise the local data directory."""
    from viewfinder.errors import ViewfinderError
    from viewfinder.mcp.server import profiles
    from viewfinder.mcp.stdio import run

    if profile not in profiles():
        fail(f"unknown profile {profile!r}: choose one of {', '.join(profiles())}")
    try:
        run(profile, settings_for(data_dir))
    except ViewfinderError as exc:
        fail(f"[{exc.code}] {exc.message}")
