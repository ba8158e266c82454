"""Streamable HTTP: each profile's MCP server at its own path of the app, stateless, JSON
responses, no SSE (GET answers 405). On the open profiles initialize and tools/list need no
key; every tool call authenticates the Bearer key or OAuth token it carries. The protected
profiles answer 401 to any request without one (mcp/oauth.py)."""

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
from viewfinder.mcp.oauth import Gate, metadata_url
from viewfinder.mcp.server import build_server, path_of, profiles, protected
from viewfinder.mcp.tooling import LocalBackend, http_key
from viewfinder.plumbing.errorshape import error_response
from viewfinder.services.env import Env
from viewfinder.settings import Settings


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
    shut = protected(settings)
    base = settings.public_url.rstrip("/")
    for profile in profiles():
        resource = base + path_of(profile)
        backend = LocalBackend(env, http_key, local_files=False, resource=resource)
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
        gate = Gate(
            endpoint,
            env,
            resource,
            metadata_url(base, path_of(profile)),
            protected=profile in shut,
        )
        guarded = Guard(gate, allowed, limit)
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
