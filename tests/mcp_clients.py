"""Shared pieces of the MCP tests: the real app in process, the official SDK client over
Streamable HTTP (in process or over a socket) in either protocol era, and checks every tool
result must pass."""

from __future__ import annotations

import base64
import contextlib
import functools
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

import httpx2
import jsonschema
import mcp_types as types
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from viewfinder.app import create_app
from viewfinder.services.env import Env

BASE = "http://127.0.0.1:8000"
Era = Literal["legacy", "auto"]
# legacy: the initialize handshake (2025-06-18 / 2025-11-25); auto: the SDK's default, the
# 2026-07-28 era (server/discover, no handshake).
ERAS: tuple[Era, ...] = ("legacy", "auto")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@contextlib.asynccontextmanager
async def serving(env: Env) -> AsyncIterator[FastAPI]:
    """The app on ``env`` with its lifespan running (the MCP session managers need it)."""
    app = create_app(env=env, workers=0)
    async with LifespanManager(app):
        yield app


@contextlib.asynccontextmanager
async def connect(
    url: str, *, key: str | None = None, mode: Era = "auto", app: FastAPI | None = None
) -> AsyncIterator[Client]:
    """The SDK client at ``url``: in process when ``app`` is given, else over the network. With
    ``key`` every request carries it as a Bearer token; without, none is sent."""
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    transport = httpx2.ASGITransport(app=app) if app is not None else None
    async with (
        httpx2.AsyncClient(transport=transport, headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def images(result: types.CallToolResult) -> list[bytes]:
    """The decoded image blocks, each checked to be a PNG."""
    found = []
    for block in result.content:
        if isinstance(block, types.ImageContent):
            assert block.mime_type == "image/png"
            data = base64.b64decode(block.data, validate=True)
            assert data.startswith(PNG_SIGNATURE)
            found.append(data)
    return found


def refusal(result: types.CallToolResult) -> str:
    """The text of an error result, after checking it is one the model can read: a single
    text block and no structured content."""
    assert result.is_error, result
    assert result.structured_content is None
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    return result.content[0].text


@functools.cache
def validator(schema: str) -> jsonschema.Draft202012Validator:
    """A validator of the JSON Schema text, itself checked against the 2020-12 metaschema (once
    per schema: that check costs more than validating a result)."""
    parsed = json.loads(schema)
    jsonschema.Draft202012Validator.check_schema(parsed)
    return jsonschema.Draft202012Validator(parsed)


def check_output(
    tool: types.Tool, result: types.CallToolResult, *, json_text: bool = True
) -> dict[str, Any]:
    """The structured content of a successful call, validated against the tool's declared
    outputSchema. With ``json_text`` (every tool but those answering with a note and images)
    the first text block must be the same JSON."""
    assert not result.is_error, texts(result)
    assert tool.output_schema is not None, f"{tool.name} declares no outputSchema"
    data = result.structured_content
    assert data is not None, f"{tool.name} answered without structuredContent"
    validator(json.dumps(tool.output_schema, sort_keys=True)).validate(data)
    if json_text:
        assert json.loads(texts(result)[0]) == data
    return data


def tool_dicts(listed: types.ListToolsResult) -> list[dict[str, Any]]:
    """The tools as they travel in a tools/list result (camelCase names, no nulls)."""
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]


async def tool_of(client: Client, name: str) -> types.Tool:
    listed = await client.list_tools()
    return next(tool for tool in listed.tools if tool.name == name)


def initialize(request_id: int, version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "viewfinder-tests", "version": "0"},
        },
    }
