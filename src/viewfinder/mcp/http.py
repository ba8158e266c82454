"""Streamable HTTP: each profile's MCP server at its own path of the app, stateless, JSON
responses, no SSE (GET answers 405). initialize and tools/list need no key; every tool call
authenticates the Bearer key it carries."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from viewfinder.mcp.guard import Allowed, Guard, body_limit
from viewfinder.mcp.server import build_server, profiles
from viewfinder.mcp.tooling import LocalBackend, http_key
from viewfinder.plumbing.errorshape import error_response
from viewfinder.services.env import Env
from viewfinder.settings import Settings

BASE_PATH = "/mcp"


def path_of(profile: str) -> str:
    return BASE_PATH if profile == "default" else f"{BASE_PATH}/{profile}"


async def _no_stream(_: Request) -> Response:
    return error_response(
        405,
        "method_not_allowed",
        "this MCP endpoint answers POST only: it is stateless and offers no event stream",
        headers={"Allow": "POST"},
    )


def mount(app: FastAPI, env: Callable[[], Env], settings: Settings) -> list[MCPServer]:
    """Add every profile's endpoint to the app; returns the servers, whose session managers
    the app's lifespan must run (see ``running``)."""
    servers = []
    allowed = Allowed.for_url(settings.public_url)
    limit = body_limit(settings)
    for profile in profiles():
        backend = LocalBackend(env, http_key, local_files=False)
        server = build_server(profile, backend, public_url=settings.public_url)
        starlette_app = server.streamable_http_app(
            streamable_http_path=path_of(profile),
            stateless_http=True,
            json_response=True,
            # The guard checks hosts, origins, media type and size first (guard.py); the SDK's
            # own size check stays as a backstop at the same limit.
            max_request_body_size=limit,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        endpoint: Any = starlette_app.routes[0].endpoint  # type: ignore[attr-defined]
        guarded = Guard(endpoint, allowed, limit)
        app.router.routes.append(Route(path_of(profile), _no_stream, methods=["GET"]))
        app.router.routes.append(Route(path_of(profile), guarded, methods=["POST", "DELETE"]))
        servers.append(server)
    return servers


@contextlib.asynccontextmanager
async def running(servers: list[MCPServer]) -> AsyncIterator[None]:
    async with contextlib.AsyncExitStack() as stack:
        for server in servers:
            await stack.enter_async_context(server.session_manager.run())
        yield
