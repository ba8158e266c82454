"""The REST API under /api/v1: routes that parse a request, call one service and return its
record, with one JSON error shape for every failure."""

from __future__ import annotations

from fastapi import FastAPI


def install(app: FastAPI) -> None:
    """Add the API's routes and its error handlers to the app."""
    from viewfinder.api import errors, openapi
    from viewfinder.api.deps import CloseUnread
    from viewfinder.api.routes import (
        builds,
        checkups,
        comparisons,
        delivery,
        deployments,
        diffs,
        github,
        project,
        sessions,
        teams,
        testruns,
    )

    errors.install(app)
    # Outermost: it sees every answer, the last-line error answer included.
    app.add_middleware(CloseUnread)
    openapi.install(app)
    for router in (
        project.router,
        builds.router,
        diffs.router,
        comparisons.router,
        delivery.router,
        github.router,
        deployments.router,
        sessions.router,
        testruns.router,
        teams.router,
        checkups.router,
    ):
        app.include_router(router, prefix="/api/v1")
    app.include_router(project.public)
    app.include_router(deployments.public)
    app.include_router(sessions.public)
    app.include_router(checkups.person)
