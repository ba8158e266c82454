"""Test helpers for the MCP profiles: the real app in process, an official MCP SDK client per
key talking Streamable HTTP to it, and a comparison worker thread for calls that wait."""

from __future__ import annotations

import contextlib
import io
import json
import threading
import zipfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Keys, drain
from tests.replay_app import shopping_json
from viewfinder.app import create_app
from viewfinder.mcp.server import path_of
from viewfinder.services import projects, sessions
from viewfinder.services.env import Env

BASE = "http://127.0.0.1:8000"


@contextlib.asynccontextmanager
async def serving(env: Env) -> AsyncIterator[FastAPI]:
    app = create_app(env=env, workers=0)
    async with LifespanManager(app):
        yield app


@contextlib.asynccontextmanager
async def connect(app: FastAPI, key: str, profile: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url=BASE, headers=headers
        ) as http,
        Client(
            streamable_http_client(f"{BASE}{path_of(profile)}", http_client=http), mode="legacy"
        ) as client,
    ):
        yield client


def texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def text(result: types.CallToolResult) -> str:
    return texts(result)[0]


def data(result: types.CallToolResult) -> Any:
    """The structured content of a successful call (which also checks it succeeded)."""
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def size(result: types.CallToolResult) -> int:
    """What a call costs an agent's context: its text blocks and its structured content."""
    return sum(len(t) for t in texts(result)) + len(json.dumps(result.structured_content))


@contextlib.contextmanager
def worker(env: Env) -> Iterator[None]:
    """Run comparisons in a thread while the test waits on calls that wait for them."""
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            if not drain(env):
                stop.wait(0.01)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def record_shopping(env: Env, keys: Keys) -> str:
    """The shopping session, sent by a record key as recorder.js sends it: one batch."""
    key = projects.create_key(env, keys.admin, roles=["record"], label="shop", kind="ci").key
    whole = shopping_json()
    batch = {
        "session": "shopper-0001",
        "seq": 0,
        "start": {k: whole[k] for k in ("startUrl", "viewport", "userAgent", "storage")},
        "events": whole["events"],
        "network": whole["network"],
        "urls": whole["urls"],
    }
    recorder = projects.authenticate(env, key, recording=True)
    stored = sessions.ingest(env, recorder, json.dumps(batch).encode())
    return stored.session_id


def zipped(root: Path) -> bytes:
    """A static build's folder as the zip a deployment is uploaded as."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()
