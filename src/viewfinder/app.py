"""The composition root: the one place that knows every front door. `create_app(settings)`
builds the ASGI application (REST API, MCP endpoints and dashboard over one Env), runs the
migrations and, unless told not to, keeps the worker processes running for its lifetime."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator

from fastapi import FastAPI

from viewfinder import __version__, api, web
from viewfinder.jobs.supervisor import Supervisor
from viewfinder.mcp import card as mcp_card
from viewfinder.mcp import http as mcp_http
from viewfinder.mcp import oauth as mcp_oauth
from viewfinder.mcp.server import path_of, profiles
from viewfinder.plumbing.operations import operation
from viewfinder.services.env import Env
from viewfinder.settings import Settings

# What a supervised worker process runs (see viewfinder.launch).
WORKER_COMMAND = (sys.executable, "-m", "viewfinder.launch", "--supervised")


def plain_logging() -> None:
    """Log plainly to stderr unless the process already set logging up. Done before the MCP
    servers are built: the MCP SDK would otherwise install a rich handler on the root logger
    whose tracebacks take seconds to render, on the event loop."""
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )


def create_app(
    settings: Settings | None = None, *, env: Env | None = None, workers: int | None = None
) -> FastAPI:
    """The app. Pass ``env`` to share one (tests); ``workers`` overrides settings.workers."""
    settings = settings or (env.settings if env else Settings())
    plain_logging()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = env is None
        app.state.env = env or Env.open(settings)
        count = settings.workers if workers is None else workers
        supervisor = Supervisor(app.state.env, count, WORKER_COMMAND) if count else None
        if supervisor:
            supervisor.start()
        try:
            async with mcp_http.running(mcp_servers):
                yield
        finally:
            if supervisor:
                supervisor.stop()
            # The loop's own database connections end with the loop (store.loopreads).
            await app.state.env.db.loop_reads.close()
            if own:
                app.state.env.close()

    app = FastAPI(
        title="Viewfinder",
        version=__version__,
        description="Visual review server: screenshots compared with baselines, reviewed.",
        lifespan=lifespan,
    )
    if env is not None:
        app.state.env = env
    api.install(app)
    mcp_card.install(app, settings.public_url)
    mcp_servers = mcp_http.mount(app, lambda: app.state.env, settings)
    mcp_oauth.install(
        app,
        lambda: app.state.env,
        settings.public_url,
        [path_of(p) for p in profiles()],
    )
    web.install(app)

    @app.get("/healthz", tags=["health"], **operation("health"))
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    return app
