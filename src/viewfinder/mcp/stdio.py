"""`viewfinder mcp`: the MCP server over stdio, for agents that start it as a subprocess.

With VIEWFINDER_URL set, tool calls go to that server's HTTP endpoint (files named in
arguments are read here, on the agent's machine, and sent up, and arguments a tool fills from
the agent's environment or git checkout are filled here); without it, they run against
the local embedded store. The key is read from VIEWFINDER_KEY at each call. stdout is the wire:
logs go to stderr.
"""

from __future__ import annotations

import base64
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx2
import mcp_types as types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError

from viewfinder.errors import InvalidInput, Unauthenticated, Unavailable, ViewfinderError
from viewfinder.mcp.http import path_of
from viewfinder.mcp.server import build_server
from viewfinder.mcp.tooling import CONNECT_HINT, Backend, LocalBackend, ToolSpec, tool_error
from viewfinder.services.env import Env
from viewfinder.settings import Settings

KEY_VARIABLE = "VIEWFINDER_KEY"
_MEDIA = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def env_key(_: Context) -> str | None:
    return os.environ.get(KEY_VARIABLE) or None


def file_as_data_url(value: Any) -> Any:
    """A path on this machine becomes a data: URL; anything else is left as it is."""
    if not isinstance(value, str) or Path(value).suffix.lower() not in _MEDIA:
        return value
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise InvalidInput(f"{value!r} must be an absolute path")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    media = _MEDIA[path.suffix.lower()]
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


@dataclass(frozen=True)
class RemoteBackend:
    """Carries each call to the server at ``url`` with the caller's key."""

    url: str

    async def call(self, ctx: Context, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        key = env_key(ctx)
        if not key:
            return tool_error(Unauthenticated(CONNECT_HINT))
        if spec.local_args is not None:
            arguments = await anyio.to_thread.run_sync(spec.local_args, arguments)
        try:
            sent = {
                k: file_as_data_url(v) if k in spec.file_args else v for k, v in arguments.items()
            }
        except InvalidInput as exc:
            return tool_error(exc)
        headers = {"Authorization": f"Bearer {key}"}
        refusals: list[ViewfinderError] = []

        async def keep_refusal(response: httpx2.Response) -> None:
            # The server's own refusals of a request (size, host) come in the JSON error shape,
            # which the SDK client reduces to "Server returned an error response".
            if response.status_code >= 400:
                await response.aread()
                refusals.append(_server_refusal(response))

        try:
            async with (
                httpx2.AsyncClient(
                    headers=headers, timeout=120, event_hooks={"response": [keep_refusal]}
                ) as http,
                Client(streamable_http_client(self.url, http_client=http)) as client,
            ):
                result: types.CallToolResult = await client.call_tool(spec.name, sent)
        except Exception as exc:  # the transport reports failures in many shapes
            if refusals:
                return tool_error(refusals[-1])
            if isinstance(exc, MCPError):
                return tool_error(
                    Unavailable(f"Viewfinder at {self.url} answered an error: {exc.error.message}")
                )
            return tool_error(
                Unavailable(f"cannot reach Viewfinder at {self.url} ({exc}); is it running?")
            )
        return result


def _server_refusal(response: httpx2.Response) -> ViewfinderError:
    """The error a server's answer carries, in the one JSON error shape or as JSON-RPC."""
    try:
        body = response.json()
    except ValueError:
        body = None
    shaped = body.get("error") if isinstance(body, dict) else None
    if isinstance(shaped, dict) and isinstance(shaped.get("message"), str):
        refusal = ViewfinderError(shaped["message"])
        refusal.code = str(shaped.get("code") or "error")
        return refusal
    return Unavailable(
        f"Viewfinder answered HTTP {response.status_code} to this call; the server's log says why"
    )


def run(profile: str, settings: Settings) -> None:
    """Serve the profile over stdio until the client closes it."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    remote = os.environ.get("VIEWFINDER_URL")
    backend: Backend
    env: Env | None = None
    if remote:
        backend = RemoteBackend(remote.rstrip("/") + path_of(profile))
    else:
        env = Env.open(settings)
        opened = env
        backend = LocalBackend(lambda: opened, env_key, local_files=True)
    try:
        build_server(profile, backend).run("stdio")
    finally:
        if env is not None:
            env.close()
