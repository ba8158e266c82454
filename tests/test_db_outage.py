"""The database goes away and comes back (a restart, a failover, a cut link) under a real
`viewfinder serve`: while it is gone every front door answers "unavailable" with a time to retry
(REST 503 with Retry-After, MCP `[unavailable]`), the log says so in a line rather than a
traceback per request, and once it is back the same server answers again without a restart."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import psycopg
import pytest

from tests.mcp_clients import connect, refusal
from tests.pngs import make_png
from tests.server import PG_ADMIN, Server, free_port, launch, stop
from tests.tcp_link import Link, link_to


@pytest.fixture
def database() -> Iterator[str]:
    name = f"vf_outage_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield name
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def call_tool(url: str, key: str, name: str) -> str | None:
    """The refusal text of an MCP tool call over the network, or None when it succeeded."""

    async def run() -> str | None:
        async with connect(f"{url}/mcp", key=key) as client:
            result = await client.call_tool(name, {})
            return refusal(result) if result.is_error else None

    return asyncio.run(run())


def test_a_database_outage_answers_unavailable_and_the_server_recovers(
    database: str, tmp_path: Path
) -> None:
    with link_to(("127.0.0.1", 5432)) as link:
        server = Server(
            f"http://127.0.0.1:{free_port()}",
            tmp_path / "data",
            f"postgresql+psycopg://postgres@127.0.0.1:{link.port}/{database}",
        )
        proc = launch(server, tmp_path, workers=1)
        try:
            check_outage(server, link)
        finally:
            stop(proc)
    log = (tmp_path / "serve.err").read_text()
    assert "the database cannot be reached" in log
    assert "Traceback" not in log, log[-3000:]


def check_outage(server: Server, link: Link) -> None:
    with httpx.Client(
        base_url=f"{server.url}/api/v1",
        headers={"Authorization": f"Bearer {server.keys['admin']}"},
        timeout=30,
    ) as api:
        check_with(server, link, api)


def finished_build(api: httpx.Client, shade: int) -> dict[str, object]:
    """A build of one story, finalized and compared by the server's worker."""
    build = api.post("/builds", json={"commit_sha": "abcd1234"}).json()["id"]
    pixels = np.full((40, 60, 3), shade, np.uint8)
    stored = api.put(
        f"/builds/{build}/stories",
        params={"name": "home"},
        content=make_png(pixels),
        headers={"Content-Type": "image/png"},
    )
    assert stored.status_code in (200, 201), stored.text
    assert api.post(f"/builds/{build}/finalize").status_code == 200
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        record: dict[str, object] = api.get(f"/builds/{build}").json()
        if record["status"] == "done":
            return record
        time.sleep(0.1)
    raise AssertionError(f"build {build} was not compared: {record}")


def check_with(server: Server, link: Link, api: httpx.Client) -> None:
    assert finished_build(api, 200)["verdict"] == "unchanged"
    assert call_tool(server.url, server.keys["agent"], "list_builds") is None

    link.cut()
    for answer in (api.get("/builds"), api.post("/builds", json={"commit_sha": "abcd1234"})):
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"] == "5"
        error = answer.json()["error"]
        assert error["code"] == "unavailable"
        assert "database cannot be reached" in error["message"]
    refused = call_tool(server.url, server.keys["agent"], "list_builds")
    assert refused is not None and "[unavailable]" in refused, refused
    assert httpx.get(f"{server.url}/healthz").status_code == 200  # the server itself is up
    time.sleep(2)  # the worker looks for jobs meanwhile, and finds no database

    link.restore()
    # The pools' dead connections are found and replaced: no request fails on them.
    assert api.get("/builds").status_code == 200
    created = api.post("/builds", json={"commit_sha": "abcd1234"})
    assert created.status_code == 201, created.text
    assert call_tool(server.url, server.keys["agent"], "list_builds") is None
    # The worker came through too: the next build is compared.
    assert finished_build(api, 90)["verdict"] == "changed"
