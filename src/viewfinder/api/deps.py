"""Request plumbing shared by the routes: the Env, the caller's Actor and bounded request
bodies."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException

from viewfinder.errors import ImageTooLarge, InvalidInput
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


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused once it passes ``limit`` bytes (before it is all read)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ImageTooLarge(
            f"the upload is {int(declared):,} bytes; at most {limit:,} are accepted"
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ImageTooLarge(
                f"the upload is over {limit:,} bytes; at most {limit:,} are accepted"
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    if not data:
        raise InvalidInput("the request body is empty: send the image bytes as the body")
    return data


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
