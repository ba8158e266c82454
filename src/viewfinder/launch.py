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
    from viewfinder.jobs.worker import Liveness
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
    from viewfinder.imaging import cores
    from viewfinder.services import people, projects
    from viewfinder.services.env import Env

    url = f"http://{host}:{port}"
    # The address links point at: where this server listens, unless set for a proxy in front.
    overrides: dict[str, object] = {}
    if not os.environ.get("VIEWFINDER_PUBLIC_URL"):
        overrides["public_url"] = url
    if workers is not None:
        overrides["workers"] = workers
    settings = settings_for(data_dir, **overrides)
    refuse_unshareable(settings)
    announce("api node", settings, f"{settings.workers} worker(s), listening on {url}")
    try:
        env = Env.open(settings)
        try:
            boot = projects.bootstrap(env)
            ownerless = not people.any_person(env)
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
        typer.echo(
            "This server's project exists: its keys were printed once, by the node that started "
            f"first. More keys: viewfinder keys create --role admin (with the same "
            f"VIEWFINDER_DATABASE_URL, here {database_name(settings)})."
        )
    if ownerless and not as_json:
        typer.echo(
            "No owner yet: make yours to sign in to the dashboard with an email and password "
            f"and to create projects: viewfinder users create YOU@EXAMPLE.COM --owner "
            f"--data-dir {data_dir}"
        )
    # Comparisons are the workers' (one a core): the odd one made here keeps to its thread.
    cores.keep_to_one()
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


def worker(
    data_dir: DataDirOption = Path(".viewfinder"),
    health_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            help="Answer GET /healthz on this port: 200 while the worker works, 503 when it is "
            "stuck.",
            show_default=False,
        ),
    ] = None,
    health_host: Annotated[str, typer.Option(help="Address of the health check.")] = "127.0.0.1",
) -> None:
    """Run one comparison worker against the server's database and blobs (to scale out)."""
    settings = settings_for(data_dir)
    refuse_unshareable(settings)
    health = (health_host, health_port) if health_port is not None else None
    run_worker(settings, health=health)


def mcp(
    profile: Annotated[
        str,
        typer.Option(
            help="Tool set: default, uiverify, miseru or meticulous (names as those products "
            "use them).",
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


def refuse_unshareable(settings: Settings) -> None:
    """Exit 2 when the settings would break a server of several nodes, naming each fix."""
    problems = settings.deployment_problems()
    if problems:
        fail("these settings would not work across nodes:\n  - " + "\n  - ".join(problems))


def announce(role: str, settings: Settings, extra: str = "") -> None:
    """The one line every process logs when it starts: what it is and what it works on."""
    import sys

    from viewfinder import __version__

    blobs = settings.blob_url or f"{settings.data_dir.resolve() / 'blobs'} (this machine)"
    line = (
        f"viewfinder {__version__} {role} (pid {os.getpid()}): database "
        f"{database_name(settings)}, blobs {blobs}" + (f", {extra}" if extra else "")
    )
    print(line, file=sys.stderr, flush=True)


def run_worker(
    settings: Settings, *, supervised: bool = False, health: tuple[str, int] | None = None
) -> None:
    """Work until SIGTERM or SIGINT; a supervised worker also stops when its server is gone,
    even if the server was killed outright. ``health`` serves GET /healthz there."""
    import logging
    import signal
    import threading

    from viewfinder.imaging import cores
    from viewfinder.jobs import worker
    from viewfinder.runtime import tune_allocator
    from viewfinder.services import background
    from viewfinder.services.env import Env

    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(message)s")
    announce("supervised worker" if supervised else "worker", settings)
    tune_allocator()
    cores.keep_to_one()  # one worker a core: its comparisons keep to one
    background.register()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    parent = os.getppid()
    # The server migrated before it started its workers; a worker of its own migrates first.
    env = Env.open(settings, migrate=not supervised)
    liveness = worker.Liveness()
    if health is not None:
        serve_health(health, liveness, stale_after=max(3.0 * settings.job_lease_seconds, 30.0))
    try:
        worker.run(
            env,
            stop=stop,
            alive=lambda: not supervised or os.getppid() == parent,
            liveness=liveness,
        )
    finally:
        env.close()


def serve_health(where: tuple[str, int], liveness: Liveness, *, stale_after: float) -> None:
    """Answer GET /healthz in a thread: 200 with what the worker did while it works, 503 once
    it has shown no sign of life for ``stale_after`` seconds."""
    import http.server
    import threading

    from viewfinder import __version__

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            if self.path.split("?")[0] != "/healthz":
                self.send_error(404)
                return
            age = liveness.age()
            ok = age < stale_after
            body = json.dumps(
                {
                    "status": "ok" if ok else "stuck",
                    "version": __version__,
                    "seconds_since_alive": round(age, 1),
                    "jobs_run": liveness.jobs_run,
                }
            ).encode()
            self.send_response(200 if ok else 503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:  # probes every few seconds: no log lines
            return

    server = http.server.ThreadingHTTPServer(where, Health)
    threading.Thread(target=server.serve_forever, name="health", daemon=True).start()


if __name__ == "__main__":
    import sys

    from viewfinder.settings import Settings

    run_worker(Settings(), supervised="--supervised" in sys.argv[1:])
