"""Streamable HTTP: each profile's MCP server at its own path of the app, stateless, JSON
responses, no SSE (GET answers 405). initialize and tools/list need no key; every tool call
authenticates the Bearer key it carries."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route

from viewfinder.mcp.server import build_server, profiles
from viewfinder.mcp.tooling import LocalBackend, http_key
from viewfinder.services.env import Env

BASE_PATH = "/mcp"


def path_of(profile: str) -> str:
    return BASE_PATH if profile == "default" else f"{BASE_PATH}/{profile}"


def _security(public_url: str) -> TransportSecuritySettings:
    host = urlsplit(public_url).netloc
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "testserver"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if host and host not in hosts:
        hosts.append(host)
        origins.append(f"{urlsplit(public_url).scheme}://{host}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


async def _no_stream(_: Request) -> JSONResponse:
    return JSONResponse(
        {
            "error": {
                "code": "method_not_allowed",
                "message": "this MCP endpoint answers POST "
                "only: it is stateless and offers no event stream",
                "details": None,
            }
        },
        status_code=405,
        headers={"Allow": "POST"},
    )


def mount(app: FastAPI, env: Callable[[], Env], public_url: str) -> list[MCPServer]:
    """Add every profile's endpoint to the app; returns the servers, whose session managers
    the app's lifespan must run (see ``running``)."""
    servers = []
    for profile in profiles():
        server = build_server(profile, LocalBackend(env, http_key, local_files=False))
        starlette_app = server.streamable_http_app(
            streamable_http_path=path_of(profile),
            stateless_http=True,
            json_response=True,
            transport_security=_security(public_url),
        )
        endpoint: Any = starlette_app.routes[0].endpoint  # type: ignore[attr-defined]
        app.router.routes.append(Route(path_of(profile), _no_stream, methods=["GET"]))
        app.router.routes.append(Route(path_of(profile), endpoint, methods=["POST", "DELETE"]))
        servers.append(server)
    return servers


@contextlib.asynccontextmanager
async def running(servers: list[MCPServer]) -> AsyncIterator[None]:
    async with contextlib.AsyncExitStack() as stack:
        for server in servers:
            await stack.enter_async_context(server.session_manager.run())
        yield
