"""The web dashboard for people: server-rendered pages (Jinja2) with small ES modules, served by
`viewfinder serve` itself. A thin adapter over services/, like the REST API and MCP."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


def install(app: FastAPI) -> None:
    """Mount the dashboard's pages, its JSON actions under /ui/api and its static files."""
    from viewfinder.web import (
        actions,
        auth,
        checkups,
        consent,
        library,
        media,
        pages,
        teams,
        testruns,
    )

    for module in (auth, consent, pages, library, media, actions, teams, testruns, checkups):
        app.include_router(module.router)
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
