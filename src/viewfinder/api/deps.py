"""Request plumbing shared by the routes: the Env, the caller's Actor and bounded request
bodies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from viewfinder.errors import ImageTooLarge, InvalidInput, ViewfinderError
from viewfinder.plumbing.offloop import call
from viewfinder.plumbing.operations import operation
from viewfinder.services import oauth, permissions, projects
from viewfinder.services.env import Actor, Env


async def get_env(request: Request) -> Env:
    # async: FastAPI would run a plain function in a thread, a hop per request for nothing.
    env: Env = request.app.state.env
    return env


def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return request.headers.get("x-api-key")


async def get_actor(request: Request, env: Annotated[Env, Depends(get_env)]) -> Actor:
    key = bearer(request)
    if oauth.is_token(key):
        # A person's OAuth token, when it was issued for the REST API.
        resource = env.settings.public_url.rstrip("/") + "/api/v1"
        return await call(oauth.actor_for, env, str(key), resource)
    known = projects.known_actor(env, key)
    return known if known is not None else await call(projects.authenticate, env, key)


async def read_limited(
    request: Request, limit: int, refuse: Callable[[int | None], ViewfinderError]
) -> bytes:
    """The request body, refused once it passes ``limit`` bytes: before any of it is read when
    its declared length says so (``refuse`` gets that length), else as soon as it passes the
    limit (``refuse`` gets None). The rest of a body refused part way through is never read:
    the answer closes the connection (CloseUnread), or a body with no end (a client streaming
    /dev/zero) would be received forever."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise refuse(int(declared))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise refuse(None)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_body(request: Request, limit: int) -> bytes:
    """An image sent as the request body, at most ``limit`` bytes."""

    def refuse(declared: int | None) -> ViewfinderError:
        size = f"is {declared:,} bytes" if declared is not None else f"is over {limit:,} bytes"
        return ImageTooLarge(f"the upload {size}; at most {limit:,} are accepted")

    data = await read_limited(request, limit, refuse)
    if not data:
        raise InvalidInput("the request body is empty: send the image bytes as the body")
    return data


class CloseUnread:
    """An answer given before the request's body was read to its end (refused part way through
    by read_limited, or an unknown key, before any of it was read) closes the connection: the
    rest of the body is never read, so it cannot carry another request, and the server would
    otherwise go on receiving it, forever for a body with no end (a client streaming
    /dev/zero)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self.app(scope, receive, send)
            return
        ended = False

        async def receiving() -> Message:
            nonlocal ended
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                ended = True
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and not ended:
                message = {**message, "headers": [*message.get("headers", []), CLOSE]}
            await send(message)

        await self.app(scope, receiving, sending)


def _has_body(scope: Scope) -> bool:
    headers = dict(scope.get("headers", []))
    length = headers.get(b"content-length", b"").strip()
    return b"chunked" in headers.get(b"transfer-encoding", b"").lower() or (
        length.isdigit() and int(length) > 0
    )


CLOSE = (b"connection", b"close")


EnvDep = Annotated[Env, Depends(get_env)]
ActorDep = Annotated[Actor, Depends(get_actor)]


def raw_body(*media_types: str) -> dict[str, Any]:
    binary = {"schema": {"type": "string", "format": "binary"}}
    return {"requestBody": {"required": True, "content": dict.fromkeys(media_types, binary)}}


# A raw image as the request body, for the OpenAPI document: a story's PNG, a pushed image.
PNG_BODY = raw_body("image/png")
IMAGE_BODY = raw_body("image/png", "image/jpeg", "image/webp")


def op(name: str, openapi: dict[str, Any] | None = None) -> dict[str, Any]:
    """A route's operation (see plumbing.operations), with its role checked as soon as the key
    is known: before a large body is read, a key without the role is refused."""
    kwargs = operation(name, openapi)
    if permissions.needs(name).role is not None:

        async def check(actor: ActorDep) -> None:
            permissions.require(actor, name)

        kwargs["dependencies"] = [Depends(check)]
    return kwargs


async def read_form(request: Request, *, max_files: int, max_part: int) -> FormData:
    """A multipart body within limits. Raises InvalidInput for anything else."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise InvalidInput("send the stories as multipart/form-data, one `file` part each")
    try:
        return await request.form(max_files=max_files, max_fields=10, max_part_size=max_part)
    except (MultiPartException, HTTPException) as exc:
        detail = getattr(exc, "message", None) or getattr(exc, "detail", str(exc))
        raise InvalidInput(f"unreadable multipart body: {detail}") from None
