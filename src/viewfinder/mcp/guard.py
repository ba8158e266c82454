"""What an MCP endpoint checks before the SDK reads a request: the Host and Origin (DNS
rebinding), the Content-Type, the body's size and the JSON-RPC id.

Refusals of the HTTP request itself use the one JSON error shape, like every other answer of
the server. Two refusals are JSON-RPC answers instead, because an MCP client must be able to
read them: a request whose id is not a string or an integer (the SDK would take it for a
notification and answer a silent 202), and a ``tools/call`` over the size limit, which the
agent sent and can fix (a smaller image), so it gets a tool error like any other refusal.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
import mcp_types.methods
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from viewfinder.errors import Forbidden, TooLarge
from viewfinder.plumbing.errorshape import error_of, error_response
from viewfinder.settings import Settings

# A checkup's screenshots arrive in one create_review call: room for five images at the push
# limit, base64-encoded, and the JSON around them.
IMAGES_PER_REQUEST = 5
JSON_ROOM = 1024 * 1024
LEGACY_VERSION = "2025-06-18"
# The envelope's members come before its params in every client we know; the id of an
# over-limit request is read from there rather than buffering a body we refuse.
_HEAD = 4096
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")\s*[,}]')
_TOOLS_CALL = re.compile(rb'"method"\s*:\s*"tools/call"')
_DRAIN = 4  # an over-limit body is read and dropped up to this many times the limit


def body_limit(settings: Settings) -> int:
    """The largest MCP request body accepted, in bytes."""
    encoded_image = -(-settings.push_max_bytes // 3) * 4
    return IMAGES_PER_REQUEST * encoded_image + JSON_ROOM


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


@dataclass(frozen=True)
class Allowed:
    """Hosts and origins a browser may reach the endpoint from; ``*`` as the port means any."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]

    @classmethod
    def for_url(cls, public_url: str) -> Allowed:
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "testserver"]
        origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
        parts = urlsplit(public_url)
        if parts.netloc and parts.netloc not in hosts:
            hosts.append(parts.netloc)
            origins.append(f"{parts.scheme}://{parts.netloc}")
        return cls(tuple(hosts), tuple(origins))

    @staticmethod
    def _matches(value: str, patterns: tuple[str, ...]) -> bool:
        return any(value == p or (p.endswith(":*") and value.startswith(p[:-1])) for p in patterns)

    def refusal(self, headers: Headers) -> Response | None:
        host = headers.get("host", "")
        if not self._matches(host, self.hosts):
            # 421: the request reached a server that does not answer for that name.
            return error_response(
                421,
                "misdirected",
                f"this MCP endpoint does not answer for the host {host!r}: reach it at an "
                "address the server knows (127.0.0.1, localhost, or VIEWFINDER_PUBLIC_URL)",
                {"host": host},
            )
        origin = headers.get("origin")
        if origin is not None and not self._matches(origin, self.origins):
            return error_of(
                Forbidden(
                    f"this MCP endpoint refuses requests from web pages of {origin!r} "
                    "(a page of another site must not drive an agent's tools)",
                    origin=origin,
                )
            )
        return None


class Guard:
    """Wraps one MCP endpoint's ASGI app."""

    def __init__(self, app: ASGIApp, allowed: Allowed, limit: int) -> None:
        self.app = app
        self.allowed = allowed
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        refused = self.allowed.refusal(headers)
        if refused is None and scope.get("method") == "POST":
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                refused = error_response(
                    415,
                    "unsupported_media_type",
                    "an MCP request is JSON-RPC: send it with Content-Type: application/json "
                    f"(got {media or 'none'!r})",
                )
        if refused is not None:
            await refused(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, complete, trailing = await self._read(receive, headers)
        if not complete:
            await self._too_large(body, headers)(scope, receive, send)
            return
        problem = _bad_id(body)
        if problem is not None:
            await problem(scope, receive, send)
            return
        pending: deque[Message] = deque([{"type": "http.request", "body": body}])
        if trailing is not None:
            pending.append(trailing)

        async def replay() -> Message:
            return pending.popleft() if pending else await receive()

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive, headers: Headers) -> tuple[bytes, bool, Message | None]:
        """The body, whether it was read whole within the limit, and a message that followed.
        An over-limit body is read on and dropped (up to a bound), keeping only its head: a
        client still sending would otherwise never read the answer."""
        declared = headers.get("content-length", "")
        over = declared.isdigit() and int(declared) > self.limit
        body = bytearray()
        drained = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return bytes(body[: _HEAD if over else None]), not over, message
            chunk = message.get("body", b"")
            drained += len(chunk)
            if over:
                body += chunk[: max(0, _HEAD - len(body))]
            else:
                body += chunk
                if len(body) > self.limit:
                    over = True
                    del body[_HEAD:]
            if not message.get("more_body", False) or (over and drained > _DRAIN * self.limit):
                return bytes(body), not over, None

    def _too_large(self, head: bytes, headers: Headers) -> Response:
        refusal = TooLarge(
            f"this request is over the MCP endpoint's limit of {_megabytes(self.limit)}: it "
            f"carries at most {IMAGES_PER_REQUEST} images of up to "
            f"{_megabytes((self.limit - JSON_ROOM) // IMAGES_PER_REQUEST * 3 // 4)} each "
            "(VIEWFINDER_PUSH_MAX_BYTES); send a smaller image (crop it, or a lower device scale)",
            limit_bytes=self.limit,
        )
        found = _ID.search(head[:_HEAD])
        if found is None or _TOOLS_CALL.search(head[:_HEAD]) is None:
            return error_of(refusal)
        request_id: Any = json.loads(found.group(1))
        text = types.TextContent(type="text", text=f"[{refusal.code}] {refusal.message}")
        result = types.CallToolResult(content=[text], is_error=True)
        data = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        version = headers.get("mcp-protocol-version", LEGACY_VERSION)
        try:  # each protocol era has its own shape of a result
            shaped = mcp_types.methods.serialize_server_result("tools/call", version, data)
        except (ValueError, KeyError):
            shaped = mcp_types.methods.serialize_server_result("tools/call", LEGACY_VERSION, data)
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": shaped})


def _bad_id(body: bytes) -> Response | None:
    """A JSON-RPC answer for a request whose id cannot be answered to; None when it can (or
    when the body is not a request at all: the SDK answers those itself)."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    request_id = message["id"]
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return None
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": f"Invalid Request: id must be a string or an integer, not "
                f"{json.dumps(request_id)}; leave id out only for a notification",
            },
        },
        status_code=400,
    )
