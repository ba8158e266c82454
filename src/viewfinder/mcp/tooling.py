"""How a tool is declared once and served over MCP.

A ToolSpec names the tool, its input model (whose fields become the tool's flat arguments), its
output model (the outputSchema), its annotations and the function that runs it. The function
is synchronous service code: it gets a Call (the Env, the caller's Actor, what the transport
allows) and the validated input, and returns the output model (its compact JSON is the text
block), an ImageResult, or a TextResult (text blocks of the tool's own wording).

Every failure the caller can act on is a ViewfinderError; here it becomes an error result
whose text starts with ``[code]`` and which carries no structuredContent.
"""

from __future__ import annotations

import base64
import functools
import inspect
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, BeforeValidator, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from viewfinder.errors import Internal, InvalidInput, Unauthenticated, ViewfinderError
from viewfinder.mcp import lean
from viewfinder.plumbing.outages import outage
from viewfinder.services import oauth, permissions, projects
from viewfinder.services.env import Actor, Env

_ANNOTATED: Any = Annotated  # subscripted at run time with a tuple built from a model
log = logging.getLogger("viewfinder.mcp")
INLINE_LIMIT = 5 * 1024 * 1024  # bytes of PNG above which an image is linked, not inlined
PAGE_HINT = "ask for a smaller page with px_offset/px_height"


@dataclass(frozen=True)
class Call:
    """What a tool runs with."""

    env: Env
    actor: Actor
    local_files: bool  # stdio: the caller shares this machine, so paths may be read


@dataclass(frozen=True)
class Picture:
    label: str
    png: bytes
    note: str = ""
    link: str | None = None  # where to fetch it when it is too large to inline


@dataclass(frozen=True)
class ImageResult:
    """An image tool's answer: a note, the pictures, and the structured record."""

    note: str
    pictures: list[Picture]
    record: BaseModel
    large_hint: str = PAGE_HINT  # how else to get a picture too large to inline


@dataclass(frozen=True)
class TextResult:
    """An answer worded for its reader: each string (or Picture) becomes a content block, in
    order; the record is the structuredContent."""

    blocks: Sequence[str | Picture]
    record: BaseModel
    large_hint: str = PAGE_HINT


Result = BaseModel | ImageResult | TextResult


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    run: Callable[[Call, Any], Result]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    images: bool = False  # answers with image blocks (an ImageResult, or a TextResult's)
    file_args: tuple[str, ...] = ()  # arguments that may name a file on the caller's machine
    # Fills arguments from the caller's machine (its environment, its git checkout): run where
    # that machine is this one, i.e. over stdio, before the arguments are validated or sent on.
    local_args: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    title: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # The service operation the tool carries out (services/permissions.py): what it needs.
    operation: str = ""

    def __post_init__(self) -> None:
        if self.operation not in permissions.OPERATIONS:
            raise ValueError(f"tool {self.name} names no declared operation ({self.operation!r})")

    def annotations(self) -> types.ToolAnnotations:
        return types.ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive if not self.read_only else False,
            idempotent_hint=self.idempotent or self.read_only,
            open_world_hint=False,
        )


# How a server finds the Env and the caller's key for a call.
EnvSource = Callable[[], Env]
KeySource = Callable[[Context], str | None]

CONNECT_HINT = (
    "connect with your Viewfinder project key: send `Authorization: Bearer vf_proj_...` over "
    "HTTP (or sign in with OAuth), or set VIEWFINDER_KEY for `viewfinder mcp` over stdio"
)


def _bearer(ctx: Context) -> str | None:
    headers = ctx.headers
    if headers is None:
        return None
    value = headers.get("authorization") or headers.get("Authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def http_key(ctx: Context) -> str | None:
    return _bearer(ctx)


def tool_error(exc: ViewfinderError) -> types.CallToolResult:
    """A refusal the model can act on: an error result whose text starts with the [code]
    (raising the SDK's ToolError would prefix "Error executing tool ..." to it)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"[{exc.code}] {exc.message}")],
        is_error=True,
    )


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors():
        where = ".".join(str(p) for p in e["loc"]) or "arguments"
        parts.append(f"{where}: {e['msg']}")
    return "invalid arguments: " + "; ".join(parts[:6])


class ToolServer(MCPServer):
    """An MCPServer whose answer to arguments that do not fit a tool's inputSchema reads like
    every other refusal. The SDK checks them against the handler's signature before any of our
    code runs, and would answer "Error executing tool ...: 1 validation error for ..." with a
    pydantic link; here that becomes ``[invalid_input] invalid arguments: limit: ...``."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            return tool_error(InvalidInput(_validation_message(cause)))


def _content_result(
    blocks: Sequence[str | Picture], record: BaseModel, large_hint: str
) -> types.CallToolResult:
    content: list[Any] = []
    for block in blocks:
        if isinstance(block, str):
            content.append(types.TextContent(type="text", text=block))
            continue
        if len(block.png) > INLINE_LIMIT:
            where = f" Download it from {block.link}" if block.link else ""
            content.append(
                types.TextContent(
                    type="text",
                    text=f"{block.label}: {len(block.png):,} bytes, too large to show inline."
                    f"{where} (or {large_hint}).",
                )
            )
            continue
        content.append(types.TextContent(type="text", text=f"{block.label}: {block.note}"))
        content.append(
            types.ImageContent(
                type="image", data=base64.b64encode(block.png).decode(), mime_type="image/png"
            )
        )
    return types.CallToolResult(content=content, structured_content=record.model_dump(mode="json"))


class Backend(Protocol):
    """Where a tool call is carried out: here (LocalBackend) or by a remote server (the stdio
    proxy in stdio.py)."""

    async def call(self, ctx: Context, spec: ToolSpec, arguments: dict[str, Any]) -> Any: ...


@dataclass(frozen=True)
class LocalBackend:
    env: EnvSource
    key: KeySource
    local_files: bool
    # This endpoint's URL, which a person's OAuth token must have been issued for (HTTP only).
    resource: str | None = None

    def authenticate(self, environment: Env, secret: str) -> Actor:
        """The caller: a project key's Actor, or an agent acting with a person's token."""
        if self.resource is not None and oauth.is_token(secret):
            return oauth.actor_for(environment, secret, self.resource)
        return projects.authenticate(environment, secret, as_agent=True)

    async def call(self, ctx: Context, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        if self.local_files and spec.local_args is not None:
            try:
                arguments = await anyio.to_thread.run_sync(spec.local_args, arguments)
            except ViewfinderError as exc:
                return tool_error(exc)
        try:
            args = spec.input.model_validate(arguments)
        except ValidationError as exc:
            return tool_error(InvalidInput(_validation_message(exc)))
        secret = self.key(ctx)
        if not secret:
            return tool_error(Unauthenticated(CONNECT_HINT))
        try:
            environment = await anyio.to_thread.run_sync(self.env)
        except ViewfinderError as exc:  # a store that cannot be opened says why itself
            return tool_error(exc)
        try:
            actor = await anyio.to_thread.run_sync(
                functools.partial(self.authenticate, environment, secret)
            )
            call = Call(environment, actor, self.local_files)
            result = await anyio.to_thread.run_sync(functools.partial(spec.run, call, args))
        except Unauthenticated as exc:
            return tool_error(Unauthenticated(f"{exc.message}; {CONNECT_HINT}"))
        except ViewfinderError as exc:
            return tool_error(exc)
        except Exception as exc:
            if (answer := outage(exc)) is not None:
                return tool_error(answer)
            # Logged here, plainly, once; the SDK's own handler would render it slowly.
            request_id = uuid.uuid4().hex[:16]
            log.exception("tool %s failed (request %s)", spec.name, request_id)
            return tool_error(
                Internal(
                    f"{spec.name} failed unexpectedly (request {request_id}); the server log "
                    "has the details. Try again, or tell the server's admin the request id."
                )
            )
        if isinstance(result, ImageResult):
            return _content_result(
                [result.note, *result.pictures], result.record, result.large_hint
            )
        if isinstance(result, TextResult):
            return _content_result(result.blocks, result.record, result.large_hint)
        # Compact JSON in the text block: the same content as structuredContent, half the size.
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.model_dump_json())],
            structured_content=result.model_dump(mode="json"),
        )


@functools.cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)  # made on a tool's first call: listing tools stays quick


def _strictly(annotation: Any, value: Any) -> Any:
    """The argument as JSON would give it, checked in strict mode: a number is not a string
    and a boolean is not a number. Raises a validation error naming what was expected."""
    try:
        return _adapter(annotation).validate_json(json.dumps(value), strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PydanticCustomError("strict", str(first["msg"])) from None


def tool(spec: ToolSpec, backend: Backend) -> Tool:
    """The SDK's tool for the spec, with flat arguments taken from its input model, calling
    ``backend``. The SDK derives its schemas from the handler's signature with pydantic, some
    15 ms a tool and a second for every profile's tools: that is done once per process, and
    each server gets a copy that calls its own backend."""

    async def handler(ctx: Context, **arguments: Any) -> Any:
        return await backend.call(ctx, spec, arguments)

    prototype = _prototypes.get(id(spec))
    if prototype is None or prototype[0] is not spec:
        prototype = _prototypes[id(spec)] = (spec, _prototype(spec))
    return prototype[1].model_copy(update={"fn": handler})


# id(spec): (spec, its tool); the spec is kept so that its id is never another's.
_prototypes: dict[int, tuple[ToolSpec, Tool]] = {}


def _prototype(spec: ToolSpec) -> Tool:
    async def unbound(ctx: Context, **arguments: Any) -> Any:
        raise AssertionError("a prototype tool is copied with its server's handler, not called")

    parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)]
    annotations: dict[str, Any] = {"ctx": Context}
    for name, info in spec.input.model_fields.items():
        # The description and bounds travel; the default goes on the parameter itself. The
        # value is checked strictly first (no true for 1, no "5" for 5), as the REST API does.
        strict = BeforeValidator(functools.partial(_strictly, info.annotation))
        metadata = (*info.metadata, Field(description=info.description), strict)
        annotation = _ANNOTATED[(info.annotation, *metadata)]
        default = (
            inspect.Parameter.empty
            if info.is_required()
            else info.get_default(call_default_factory=True)
        )
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
        annotations[name] = annotation
    returns: Any = Annotated[types.CallToolResult, spec.output] if spec.images else spec.output
    annotations["return"] = returns
    unbound.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    unbound.__annotations__ = annotations
    unbound.__name__ = spec.name
    made = Tool.from_function(
        unbound,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=spec.annotations(),
        meta=spec.meta or None,
        structured_output=True,
    )
    # The SDK derives both schemas from the signature; what the list says is made lean here
    # (the SDK offers no hook for it, so the tool is adjusted in place).
    made.parameters = lean.untitled(made.parameters)
    if made.output_schema is not None:
        output = lean.untitled(made.output_schema)
        made.__dict__["output_schema"] = output if spec.read_only else lean.top_level(output)
    return made
