"""What an MCP endpoint refuses before a request reaches the MCP SDK, and how: hosts, origins
and media types in the one JSON error shape; requests whose id cannot be answered to, as
JSON-RPC errors (never a silent 202); a tools/call over the size limit as a tool error the agent
can act on, in either protocol era. And a push near the limit goes through: over a real socket
with the SDK client, and through the stdio proxy, which reports the server's refusal of a larger
one in the server's words."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import numpy as np
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from PIL import Image

from tests.mcp_clients import BASE, ERAS, check_output, connect, refusal, serving, tool_of
from tests.server import VIEWFINDER, running_server
from viewfinder.mcp.guard import body_limit
from viewfinder.services.env import Env
from viewfinder.settings import Settings

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


def noisy_png(side: int, seed: int = 1) -> bytes:
    """A PNG that barely compresses: ``side`` x ``side`` random RGBA pixels."""
    pixels = np.random.default_rng(seed).integers(0, 256, (side, side, 4), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG", compress_level=1)
    return out.getvalue()


def post(env: Env, body: bytes | str, headers: dict[str, str] | None = None) -> httpx2.Response:
    """One raw POST to /mcp of the app on ``env``."""

    async def send() -> httpx2.Response:
        async with (
            serving(env) as app,
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as http,
        ):
            return await http.post("/mcp", content=body, headers=headers or HEADERS)

    return anyio.run(send)


def error_shape(response: httpx2.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str)
    return str(error["message"])


LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def test_hosts_origins_and_media_types_are_refused_in_the_one_error_shape(env: Env) -> None:
    message = error_shape(post(env, LIST, HEADERS | {"Host": "evil.example"}), 421, "misdirected")
    assert "'evil.example'" in message and "VIEWFINDER_PUBLIC_URL" in message
    origin = HEADERS | {"Origin": "https://evil.example"}
    assert "https://evil.example" in error_shape(post(env, LIST, origin), 403, "forbidden")
    plain = HEADERS | {"Content-Type": "text/plain"}
    message = error_shape(post(env, LIST, plain), 415, "unsupported_media_type")
    assert "Content-Type: application/json" in message and "'text/plain'" in message
    # The server's own address and the loopback names stay open.
    assert post(env, LIST, HEADERS | {"Origin": "http://localhost:5173"}).status_code == 200


@pytest.mark.parametrize("request_id", [{"x": 1}, None, True, 1.5, [1]])
def test_a_request_whose_id_cannot_be_answered_to_gets_a_json_rpc_error(
    env: Env, request_id: Any
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
    response = post(env, body)
    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert "id must be a string or an integer" in answer["error"]["message"]


def test_a_notification_without_an_id_is_still_accepted(env: Env) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert post(env, body).status_code == 202


@pytest.fixture
def small_env(tmp_path: Path) -> Iterator[Env]:
    """An embedded server whose push limit is 100 kB (an MCP body limit of about 1.7 MB)."""
    settings = Settings(data_dir=tmp_path / "data", workers=0, secret="t", push_max_bytes=100_000)
    opened = Env.open(settings)
    yield opened
    opened.close()


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_a_tool_call_over_the_size_limit_is_a_tool_error_naming_the_limit(
    small_env: Env, version: str
) -> None:
    limit = body_limit(small_env.settings)
    image = "A" * (limit + 1)
    call = {"name": "push_screenshot", "arguments": {"image": image, "name": "big"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call})
    response = post(small_env, body, HEADERS | {"MCP-Protocol-Version": version})
    assert response.status_code == 200
    answer = response.json()
    assert answer["id"] == 7
    [block] = answer["result"]["content"]
    assert answer["result"]["isError"] is True
    # Each era's own shape of a result: the newest one tags it.
    assert answer["result"].get("resultType") == ("complete" if version >= "2026" else None)
    assert block["text"].startswith(
        f"[too_large] this request is over the MCP endpoint's limit of {limit / 2**20:.1f} MB"
    )
    assert "at most 5 images of up to 0.1 MB each (VIEWFINDER_PUSH_MAX_BYTES)" in block["text"]


def test_any_other_request_over_the_size_limit_is_a_413_in_the_error_shape(
    small_env: Env,
) -> None:
    padding = "x" * (body_limit(small_env.settings) + 1)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"p": padding}})
    assert "over the MCP endpoint's limit" in error_shape(post(small_env, body), 413, "too_large")


def test_a_push_near_the_limit_goes_through_and_the_proxy_relays_the_refusal_of_a_larger_one(
    tmp_path: Path,
) -> None:
    near = noisy_png(150)  # about 90 kB: under the 100 kB push limit, base64 about 120 kB
    over = noisy_png(700)  # about 1.9 MB: over the MCP body limit of about 1.7 MB
    assert len(near) < 100_000 < len(over)
    (tmp_path / "over.png").write_bytes(over)
    (tmp_path / "server").mkdir()
    with running_server(
        "sqlite", tmp_path / "server", VIEWFINDER_PUSH_MAX_BYTES="100000"
    ) as server:

        async def check() -> None:
            for era in ERAS:
                async with connect(f"{server.url}/mcp", key=server.keys["ci"], mode=era) as c:
                    arguments = {"image": base64.b64encode(near).decode(), "name": f"near-{era}"}
                    result = await c.call_tool("push_screenshot", arguments | {"context_key": "x"})
                    assert check_output(await tool_of(c, "push_screenshot"), result)["image_id"]
            proxy = StdioServerParameters(
                command=VIEWFINDER,
                args=["mcp"],
                env={"VIEWFINDER_URL": server.url, "VIEWFINDER_KEY": server.keys["ci"]},
                cwd=tmp_path,
            )
            async with Client(proxy) as client:
                arguments = {"image": str(tmp_path / "over.png"), "name": "over"}
                result = await client.call_tool("push_screenshot", arguments | {"context_key": "x"})
                text = refusal(result)
                assert text.startswith("[too_large] this request is over the MCP endpoint's limit")
                assert "cannot reach" not in text

        anyio.run(check)


def test_the_mcp_body_limit_holds_five_images_at_the_push_limit(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, push_max_bytes=5 * 1024 * 1024)
    assert body_limit(settings) > 5 * len(base64.b64encode(bytes(5 * 1024 * 1024)))
