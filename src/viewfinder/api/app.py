"""The ASGI application: `create_app(settings)` builds it with its own Env, runs migrations and
(unless told not to) the comparison workers for the app's lifetime."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from viewfinder import __version__, web
from viewfinder.api import errors
from viewfinder.api.routes import builds, delivery, diffs, project
from viewfinder.jobs.supervisor import Supervisor
from viewfinder.mcp import card as mcp_card
from viewfinder.mcp import http as mcp_http
from viewfinder.services.env import Env
from viewfinder.settings import Settings


def create_app(
    settings: Settings | None = None, *, env: Env | None = None, workers: int | None = None
) -> FastAPI:
    """The app. Pass ``env`` to share one (tests); ``workers`` overrides settings.workers."""
    settings = settings or (env.settings if env else Settings())

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = env is None
        app.state.env = env or Env.open(settings)
        count = settings.workers if workers is None else workers
        supervisor = Supervisor(app.state.env, count) if count else None
        if supervisor:
            supervisor.start()
        try:
            async with mcp_http.running(mcp_servers):
                yield
        finally:
            if supervisor:
                supervisor.stop()
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
    errors.install(app)
    mcp_card.install(app, settings.public_url)
    mcp_servers = mcp_http.mount(app, lambda: app.state.env, settings.public_url)
    for router in (project.router, builds.router, diffs.router, delivery.router):
        app.include_router(router, prefix="/api/v1")
    app.include_router(project.public)
    web.install(app)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    return app
