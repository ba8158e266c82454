"""OAuth 2.1 for agents, spoken by the MCP SDK's auth module (``mcp.server.auth``): RFC 8414
metadata, dynamic client registration, /authorize (PKCE S256 only), /token and /revoke are
the SDK's handlers; the provider below is ours, backed by services/oauth.py. The SDK's module
was chosen over authlib because it already is the MCP clients' counterpart (the same
discovery, resource indicators and PKCE rules the SDK's own client follows) and leaves the
storage and the consent page to us.

Each MCP endpoint (and the REST API) is a protected resource with its RFC 9728 metadata at
``/.well-known/oauth-protected-resource<path>``. ``Gate`` answers 401 with ``WWW-Authenticate:
Bearer resource_metadata=...`` to a presented token that is not valid here, and, on the
protected profiles, to any request without one, so a client given only the URL starts the
OAuth flow by itself.
"""

from __future__ import annotations

import functools
import hmac
import time
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.server.auth.routes import (
    REVOCATION_PATH,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from viewfinder.errors import Forbidden, Unauthenticated
from viewfinder.plumbing.errorshape import error_response
from viewfinder.services import oauth, projects
from viewfinder.services.env import Env

CONSENT_PATH = "/oauth/consent"
API_PATH = "/api/v1"


def _run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


class Provider:
    """The SDK's OAuthAuthorizationServerProvider, over our tables."""

    def __init__(self, env: Callable[[], Env], public_url: str, resources: list[str]) -> None:
        self._env = env
        self._public_url = public_url.rstrip("/")
        self._resources = {r.rstrip("/") for r in resources}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        found = await _run(oauth.get_client, self._env(), client_id)
        return None if found is None else OAuthClientInformationFull.model_validate(found)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if client_info.client_id is None:
            raise RegistrationError("invalid_client_metadata", "no client_id was assigned")
        for uri in client_info.redirect_uris or []:
            if uri.scheme not in ("http", "https") and "." not in (uri.scheme or ""):
                raise RegistrationError(
                    "invalid_redirect_uri",
                    f"redirect URI {uri} must be http(s) or a private scheme",
                )
        metadata = client_info.model_dump(mode="json", exclude_none=True)
        await _run(oauth.register_client, self._env(), client_info.client_id, metadata)

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        resource = (params.resource or "").rstrip("/")
        if not resource:
            raise AuthorizeError(
                "invalid_target",
                "name the resource the token is for (RFC 8707 `resource`: the MCP endpoint's URL)",
            )
        if resource not in self._resources:
            raise AuthorizeError(
                "invalid_target",
                f"{params.resource} is not one of this server's endpoints: use one of "
                + ", ".join(sorted(self._resources)),
            )
        request = oauth.ConsentRequest(
            client_id=str(client.client_id),
            client_name=client.client_name or str(client.client_id),
            redirect_uri=str(params.redirect_uri),
            redirect_uri_explicit=params.redirect_uri_provided_explicitly,
            code_challenge=params.code_challenge,
            state=params.state,
            scopes=list(params.scopes or []),
            resource=resource,
        )
        signed = oauth.sign_consent(self._env(), request)
        return f"{self._public_url}{CONSENT_PATH}?request={signed}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        grant = await _run(oauth.load_code, self._env(), authorization_code)
        if grant is None or grant.client_id != client.client_id:
            return None
        return AuthorizationCode(
            code=authorization_code,
            scopes=grant.scopes,
            expires_at=grant.expires_at.timestamp(),
            client_id=grant.client_id,
            code_challenge=grant.code_challenge or "",
            redirect_uri=AnyUrl(grant.redirect_uri or "http://invalid"),
            redirect_uri_provided_explicitly=True,
            resource=grant.resource,
            subject=grant.person_id,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        grant = await _run(oauth.load_code, self._env(), authorization_code.code)
        if grant is None:
            raise TokenError("invalid_grant", "authorization code does not exist")
        return await self._spend(oauth.exchange_code, grant)

    async def _spend(
        self, how: Callable[[Env, oauth.Grant], oauth.Tokens], grant: oauth.Grant
    ) -> OAuthToken:
        try:
            tokens = await _run(how, self._env(), grant)
        except oauth.OAuthRefused as exc:
            raise TokenError("invalid_grant", exc.description) from None
        return OAuthToken(
            access_token=tokens.access_token,
            expires_in=tokens.expires_in,
            refresh_token=tokens.refresh_token,
            scope=" ".join(tokens.scopes) or None,
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        grant = await _run(oauth.load_refresh, self._env(), refresh_token)
        if grant is None or grant.client_id != client.client_id:
            return None
        # Used and revoked ones are returned too: exchanging one is how reuse is detected.
        return RefreshToken(
            token=refresh_token,
            client_id=grant.client_id,
            scopes=grant.scopes,
            expires_at=int(grant.expires_at.timestamp()),
            resource=grant.resource,
            subject=grant.person_id,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        grant = await _run(oauth.load_refresh, self._env(), refresh_token.token)
        if grant is None:
            raise TokenError("invalid_grant", "refresh token does not exist")
        return await self._spend(oauth.rotate, grant)

    async def load_access_token(self, token: str) -> AccessToken | None:
        grant = await _run(oauth.load_access, self._env(), token)
        if grant is None or grant.revoked or grant.expires_at.timestamp() <= time.time():
            return None
        return AccessToken(
            token=token,
            client_id=grant.client_id,
            scopes=grant.scopes,
            expires_at=int(grant.expires_at.timestamp()),
            resource=grant.resource,
            subject=grant.person_id,
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        env = self._env()
        grant = await _run(oauth.load_access, env, token.token) or await _run(
            oauth.load_refresh, env, token.token
        )
        if grant is not None:
            await _run(oauth.revoke, env, grant)


async def _revoke(env: Callable[[], Env], request: Request) -> Response:
    """RFC 7009: revoke a token (and its sign-in) of the calling client. Unknown tokens, and
    tokens of other clients, are answered 200 as the RFC asks, and revoke nothing."""
    form = await request.form()
    token, client_id = form.get("token"), form.get("client_id")
    headers = {"Cache-Control": "no-store"}
    if not isinstance(token, str) or not isinstance(client_id, str) or not token or not client_id:
        return JSONResponse(
            {"error": "invalid_request", "error_description": "send token and client_id"},
            status_code=400,
            headers=headers,
        )
    client = await _run(oauth.get_client, env(), client_id)
    secret = (client or {}).get("client_secret")
    given = form.get("client_secret")
    if client is None or (
        secret and not (isinstance(given, str) and hmac.compare_digest(given, secret))
    ):
        return JSONResponse(
            {"error": "invalid_client", "error_description": "unknown client or wrong secret"},
            status_code=401,
            headers=headers,
        )
    grant = await _run(oauth.load_access, env(), token) or await _run(
        oauth.load_refresh, env(), token
    )
    if grant is not None and grant.client_id == client_id:
        await _run(oauth.revoke, env(), grant)
    return Response(status_code=200, headers=headers)


def metadata_url(public_url: str, path: str) -> str:
    """Where the RFC 9728 metadata of the resource at ``path`` is."""
    return f"{public_url.rstrip('/')}/.well-known/oauth-protected-resource{path}"


def install(app: FastAPI, env: Callable[[], Env], public_url: str, paths: list[str]) -> None:
    """The authorization server's routes and each resource's metadata. ``paths``: the MCP
    endpoints' paths (the REST API's is added)."""
    base = public_url.rstrip("/")
    resources = [base + p for p in [*paths, API_PATH]]
    provider = Provider(env, base, resources)
    routes = create_auth_routes(
        provider,  # type: ignore[arg-type]
        issuer_url=AnyHttpUrl(base),
        service_documentation_url=None,
        client_registration_options=ClientRegistrationOptions(enabled=True),
        revocation_options=RevocationOptions(enabled=True),
    )
    # The SDK's /revoke requires a client_secret field even of public clients (RFC 7009 does
    # not): ours takes the place of its route, and the metadata still names it.
    routes = [r for r in routes if getattr(r, "path", None) != REVOCATION_PATH]
    routes.append(Route(REVOCATION_PATH, functools.partial(_revoke, env), methods=["POST"]))
    for path in [*paths, API_PATH]:
        routes += create_protected_resource_routes(
            resource_url=AnyHttpUrl(base + path),
            authorization_servers=[AnyHttpUrl(base)],
            resource_name="Viewfinder" if path == API_PATH else f"Viewfinder MCP ({path})",
        )
    app.router.routes.extend(routes)


def _bearer(headers: Headers) -> str | None:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _quoted(text: str) -> str:
    return text.replace("\\", "").replace('"', "'")


class Gate:
    """Before an MCP endpoint: 401 with WWW-Authenticate to a token that is not valid here, and
    (``protected``) to any request without one. A valid project key or token goes on."""

    def __init__(
        self, app: ASGIApp, env: Callable[[], Env], resource: str, metadata: str, protected: bool
    ) -> None:
        self.app = app
        self.env = env
        self.resource = resource
        self.metadata = metadata
        self.protected = protected

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        token = _bearer(Headers(scope=scope))
        problem: str | None = None
        if token is None:
            if self.protected:
                problem = (
                    "this endpoint needs a token: sign in with OAuth (your client finds how at "
                    f"{self.metadata}) or send a project key as `Authorization: Bearer vf_proj_...`"
                )
        else:
            problem = await self._check(token)
        if problem is None:
            await self.app(scope, receive, send)
            return
        challenge = f'Bearer resource_metadata="{self.metadata}"'
        if token is not None:
            challenge += f', error="invalid_token", error_description="{_quoted(problem)}"'
        response = error_response(
            401, "unauthenticated", problem, headers={"WWW-Authenticate": challenge}
        )
        await response(scope, receive, send)

    async def _check(self, token: str) -> str | None:
        env = self.env()
        try:
            if oauth.is_token(token):
                await _run(oauth.verify, env, token, self.resource)
            elif projects.known_actor(env, token) is None:
                await _run(projects.authenticate, env, token)
        except Unauthenticated as exc:
            return exc.message
        except Forbidden:
            return None  # a valid key that may not do this (a record key): the tool says so
        return None
