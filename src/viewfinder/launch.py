"""The processes of a server, started from the command line: `viewfinder serve` (the ASGI app
and its workers), `viewfinder worker` (one more worker, to scale out) and `viewfinder mcp`
(the stdio MCP server). Part of the composition root: it may start every front door.

`python -m viewfinder.launch --supervised` is what `viewfinder serve` runs for each worker."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from viewfinder.cli.local import DataDirOption, database_name, print_keys, settings_for
from viewfinder.cli.output import fail

if TYPE_CHECKING:
    from viewfinder.settings import Settings


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

    from viewfinder.app import create_app
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
        print_keys(boot, url)
    else:
        typer.echo(f"Data in {settings.data_dir}; the API keys were printed on the first start.")
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


def worker(data_dir: DataDirOption = Path(".viewfinder")) -> None:
    """Run one comparison worker against the server's database and blobs (to scale out)."""
    run_worker(settings_for(data_dir))


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


def run_worker(settings: Settings, *, supervised: bool = False) -> None:
    """Work until SIGTERM or SIGINT; a supervised worker also stops when its server is gone,
    even if the server was killed outright."""
    import logging
    import signal
    import threading

    from viewfinder.jobs import worker
    from viewfinder.runtime import tune_allocator
    from viewfinder.services import background
    from viewfinder.services.env import Env

    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(message)s")
    tune_allocator()
    background.register()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    parent = os.getppid()
    env = Env.open(settings, migrate=False)
    try:
        worker.run(env, stop=stop, alive=lambda: not supervised or os.getppid() == parent)
    finally:
        env.close()


if __name__ == "__main__":
    import sys

    from viewfinder.settings import Settings

    run_worker(Settings(), supervised="--supervised" in sys.argv[1:])
