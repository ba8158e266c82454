"""`viewfinder mcp`: the MCP server over stdio, for agents that start it as a subprocess.

With VIEWFINDER_URL set, tool calls go to that server's HTTP endpoint (files named in
arguments are read here, on the agent's machine, and sent up, and arguments a tool fills from
the agent's environment or git checkout are filled here); without it, they run against
the local embedded store, opened at the first call. The key is read from VIEWFINDER_KEY at
each call. The Miseru profile also reads Miseru's own names, MISERU_API and MISERU_TOKEN, so a
setup written for it works unchanged. stdout is the wire: logs go to stderr.
"""

from __future__ import annotations

import base64
import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context
from mcp.server.stdio import stdio_server

from viewfinder.errors import InvalidInput, Unauthenticated, Unavailable, ViewfinderError
from viewfinder.mcp.inflight import CountingWriter, DrainingReader, Owed
from viewfinder.mcp.server import build_server, path_of
from viewfinder.mcp.tooling import CONNECT_HINT, Backend, LocalBackend, ToolSpec, tool_error
from viewfinder.services.env import Env
from viewfinder.settings import Settings

_MEDIA = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


@dataclass(frozen=True)
class Names:
    """The environment variables a profile reads, Viewfinder's first."""

    url: tuple[str, ...] = ("VIEWFINDER_URL",)
    key: tuple[str, ...] = ("VIEWFINDER_KEY",)

    def first(self, names: tuple[str, ...]) -> str | None:
        return next((os.environ[n] for n in names if os.environ.get(n)), None)

    def read_key(self, _: Context | None = None) -> str | None:
        return self.first(self.key)


NAMES = {
    "miseru": Names(url=("VIEWFINDER_URL", "MISERU_API"), key=("VIEWFINDER_KEY", "MISERU_TOKEN"))
}


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
    names: Names

    async def call(self, ctx: Context, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        # The client side of MCP is imported by a proxy's first call, not by every start.
        import httpx2
        from mcp.client import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared.exceptions import MCPError

        key = self.names.read_key(ctx)
        if not key:
            return tool_error(Unauthenticated(CONNECT_HINT))
        try:
            if spec.local_args is not None:
                arguments = await anyio.to_thread.run_sync(spec.local_args, arguments)
            sent = {
                k: file_as_data_url(v) if k in spec.file_args else v for k, v in arguments.items()
            }
        except ViewfinderError as exc:
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


def _server_refusal(response: Any) -> ViewfinderError:
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


class LocalStore:
    """The embedded store, opened at the first call: starting the server stays quick, and a
    key meant for a server never makes an empty store appear in the working directory."""

    def __init__(self, settings: Settings, names: Names) -> None:
        self.settings = settings
        self.names = names
        self.env: Env | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Env:
        with self._lock:
            if self.env is None:
                self._refuse_a_servers_key()
                self.env = Env.open(self.settings)
            return self.env

    def _refuse_a_servers_key(self) -> None:
        local = self.settings.database_url is None
        if local and not (self.settings.data_dir / "viewfinder.db").exists():
            url = " or ".join(self.names.url)
            key = next((n for n in self.names.key if os.environ.get(n)), self.names.key[0])
            raise Unauthenticated(
                f"{key} is set but not {url}, and there is no local store in "
                f"{self.settings.data_dir.resolve()}: set {self.names.url[0]} to the Viewfinder "
                "server the key belongs to (or run `viewfinder serve` here first to make a local "
                "store and its keys)"
            )

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


def run(profile: str, settings: Settings) -> None:
    """Serve the profile over stdio until the client closes it, answering every request read."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    names = NAMES.get(profile, Names())
    remote = names.first(names.url)
    backend: Backend
    store: LocalStore | None = None
    if remote:
        backend = RemoteBackend(remote.rstrip("/") + path_of(profile), names)
    else:
        store = LocalStore(settings, names)
        backend = LocalBackend(store, names.read_key, local_files=True)
    server = build_server(profile, backend)

    async def serve() -> None:
        # MCPServer.run("stdio") with the streams wrapped; the SDK has no public hook for it.
        lowlevel = server._lowlevel_server
        owed = Owed()
        async with stdio_server() as (read, write):
            await lowlevel.run(
                DrainingReader(read, owed),
                CountingWriter(write, owed),
                lowlevel.create_initialization_options(),
            )

    try:
        anyio.run(serve)
    finally:
        if store is not None:
            store.close()
