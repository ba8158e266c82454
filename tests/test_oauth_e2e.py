"""The whole OAuth flow as an agent's client does it, against a real `viewfinder serve`: the MCP
SDK's own OAuth client (mcp.client.auth) discovers the server, registers, opens the
authorization URL (Playwright drives the sign-in and the consent page in Debian's Chromium),
exchanges the code, calls tools, refreshes, and the token is revoked; for an open profile
(started by a stale token's 401) and a protected one (started by the 401 of a request with no
token). The Inspector CLI connects with the token too."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from playwright.async_api import BrowserContext, async_playwright
from pydantic import AnyUrl

from tests.chromium import CHROMIUM, FLAGS
from tests.server import VIEWFINDER, Server, clean_environ, free_port, running_server

PASSWORD = "correct horse battery"
CLIENTS = Path(__file__).parent / ".npm"
INSPECTOR = CLIENTS / "node_modules" / ".bin" / "inspector"
STEP_TIMEOUT = 30_000  # ms for each browser step


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("oauth")
    with running_server("sqlite", root, VIEWFINDER_PROTECTED_PROFILES="miseru") as served:
        # The first start offers to make the first owner.
        assert "No owner yet: make yours" in (root / "serve.out").read_text()
        made = subprocess.run(
            [VIEWFINDER, "users", "create", "ada@example.com", "--name", "Ada", "--owner"]
            + ["--password-stdin", "--data-dir", str(served.data_dir)],
            input=PASSWORD + "\n",
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_environ(),
            check=False,
        )
        assert made.returncode == 0, made.stderr
        yield served


class Memory:
    """The SDK client's token storage, in memory."""

    def __init__(self, tokens: OAuthToken | None = None) -> None:
        self.tokens = tokens
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """The person at the browser: signs in when asked and allows the agent on the consent page;
    the client's redirect URI is caught by the browser and answered there."""

    def __init__(self, context: BrowserContext, callback: str) -> None:
        self.context = context
        self.callback = callback
        self.answer: str | None = None
        self.consent_seen = ""

    async def open(self, url: str) -> None:
        page = await self.context.new_page()
        page.set_default_timeout(STEP_TIMEOUT)
        await page.route(
            f"{self.callback}**", lambda route: route.fulfill(status=200, body="you can close this")
        )
        await page.goto(url)
        if "/login" in urlsplit(page.url).path:
            await page.fill("#email", "ada@example.com")
            await page.fill("#password", PASSWORD)
            await page.click("form[action='/login'] button.primary")
        await page.wait_for_url("**/oauth/consent?**")
        self.consent_seen = await page.inner_text("main")
        async with page.expect_request(lambda r: r.url.startswith(self.callback)) as caught:
            await page.click("button[value=allow]")
        self.answer = (await caught.value).url
        await page.close()

    async def code(self) -> AuthorizationCodeResult:
        assert self.answer is not None, "the browser never reached the redirect URI"
        query = parse_qs(urlsplit(self.answer).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])


def provider(url: str, person: Person, storage: Memory) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name="e2e agent",
        redirect_uris=[AnyUrl(person.callback)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.code,
    )


def structured(result: types.CallToolResult) -> dict[str, object]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def flow(
    server: Server, profile_path: str, storage: Memory, person: Person
) -> dict[str, str]:
    """Connect with the SDK's OAuth client, call tools, refresh, and return the tokens."""
    url = f"{server.url}{profile_path}"
    auth = provider(url, person, storage)
    async with (
        httpx2.AsyncClient(auth=auth, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        tools = {t.name for t in (await client.list_tools()).tools}
        first = storage.tokens
        assert first is not None and first.access_token.startswith("vf_oat_")
        if "whoami" in tools:
            me = structured(await client.call_tool("whoami", {}))
            assert (me["kind"], me["name"], me["acting_for"]) == ("agent", "agent for Ada", "Ada")
        else:
            listed = structured(await client.call_tool("miseru_list_baselines", {}))
            assert isinstance(listed, dict)
        # An hour later: the client refreshes by itself, and the refresh token rotated.
        auth.context.token_expiry_time = time.time() - 1
        await client.list_tools()
        second = storage.tokens
        assert second is not None and second.access_token != first.access_token
        assert second.refresh_token != first.refresh_token
    assert storage.client is not None and storage.client.client_id
    return {
        "access": second.access_token,
        "refresh": str(second.refresh_token),
        "client_id": str(storage.client.client_id),
    }


def revoke_and_check(server: Server, profile_path: str, tokens: dict[str, str]) -> None:
    done = httpx.post(
        f"{server.url}/revoke",
        data={"token": tokens["access"], "client_id": tokens["client_id"]},
        timeout=30,
    )
    assert done.status_code == 200
    after = httpx.post(
        f"{server.url}{profile_path}",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {tokens['access']}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )
    assert after.status_code == 401 and 'error="invalid_token"' in after.headers["www-authenticate"]
    refreshed = httpx.post(
        f"{server.url}/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh"],
            "client_id": tokens["client_id"],
        },
        timeout=30,
    )
    assert refreshed.status_code == 400 and "revoked" in refreshed.json()["error_description"]


def inspector_whoami(home: Path, url: str, token: str) -> dict[str, object]:
    done = subprocess.run(
        [str(INSPECTOR), "--cli", url, "--transport", "http", "--format", "json"]
        + ["--method", "tools/call", "--tool-name", "whoami"]
        + ["--header", f"Authorization: Bearer {token}"],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_environ() | {"HOME": str(home), "NO_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    envelope: dict[str, object] = json.loads(done.stdout)
    return envelope


def test_the_sdk_oauth_client_signs_in_through_the_browser_calls_tools_refreshes_and_is_revoked(
    server: Server, tmp_path: Path
) -> None:
    if not INSPECTOR.exists():
        pytest.fail(f"the MCP Inspector CLI is not installed in {CLIENTS}: run `make clients`")
    callback = f"http://127.0.0.1:{free_port()}/callback"

    async def run() -> tuple[dict[str, str], dict[str, str], str]:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
            try:
                context = await browser.new_context()
                person = Person(context, callback)
                # Open profile: initialize needs no token, so a stale one's 401 starts the flow.
                stale = OAuthToken(access_token="vf_oat_" + "x" * 32, expires_in=3600)
                open_tokens = await flow(server, "/mcp", Memory(stale), person)
                consent = person.consent_seen
                # Protected profile: the first request without a token gets 401.
                shut_tokens = await flow(server, "/mcp/miseru", Memory(), Person(context, callback))
            finally:
                await browser.close()
        return open_tokens, shut_tokens, consent

    open_tokens, shut_tokens, consent = anyio.run(run)
    assert "Allow e2e agent?" in consent and "/mcp" in consent

    envelope = inspector_whoami(tmp_path, f"{server.url}/mcp", open_tokens["access"])
    result = envelope["result"]
    assert isinstance(result, dict) and result["isError"] is False
    assert result["structuredContent"]["name"] == "agent for Ada"
    # The open profile's token is for /mcp only.
    elsewhere = httpx.post(
        f"{server.url}/mcp/uiverify",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {open_tokens['access']}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )
    assert elsewhere.status_code == 401 and "issued for" in elsewhere.json()["error"]["message"]

    revoke_and_check(server, "/mcp", open_tokens)
    revoke_and_check(server, "/mcp/miseru", shut_tokens)
