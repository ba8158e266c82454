"""Failures nobody expected (here: a database whose table was taken away under a running
server) answer the one error shape with a request id, are logged once, keep the connection
usable, and are logged plainly (a rich traceback rendered on the event loop stalled the whole
server); an MCP tool's answers the same way, as a tool error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import httpx

from tests.mcp_clients import connect, texts
from tests.server import running_server


def test_an_unexpected_failure_answers_json_with_a_request_id_and_keeps_the_connection(
    tmp_path: Path,
) -> None:
    with running_server("sqlite", tmp_path) as server:
        database = server.data_dir / "viewfinder.db"
        headers = {"Authorization": f"Bearer {server.keys['admin']}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
            assert client.get("/api/v1/builds").status_code == 200
            with sqlite3.connect(database) as db:
                db.execute("ALTER TABLE builds RENAME TO builds_gone")
            try:
                broken = client.get("/api/v1/builds")
                assert broken.status_code == 500
                error = broken.json()["error"]
                request_id = error["details"]["request_id"]
                assert error["code"] == "internal" and request_id in error["message"]
                assert broken.headers["x-request-id"] == request_id
                # The same kept-alive connection answers the next request.
                assert client.get("/healthz").status_code == 200

                async def tool() -> str:
                    url = f"{server.url}/mcp"
                    async with connect(url, key=server.keys["admin"]) as agent:
                        result = await agent.call_tool("list_builds", {})
                        return texts(result)[0]

                text = anyio.run(tool)
                assert text.startswith("[internal] list_builds failed unexpectedly (request ")
                tool_request = text.split("(request ", 1)[1].split(")", 1)[0]
            finally:
                with sqlite3.connect(database) as db:
                    db.execute("ALTER TABLE builds_gone RENAME TO builds")
            assert client.get("/api/v1/builds").status_code == 200
        log = (tmp_path / "serve.err").read_text()
        assert log.count(f"request {request_id} failed") == 1
        assert log.count(f"(request {tool_request})") == 1
        # Logged plainly: the MCP SDK's rich handler (whose boxed tracebacks took seconds to
        # render, on the event loop) never took over the root logger.
        assert "Traceback (most recent call last)" in log and "╭" not in log
