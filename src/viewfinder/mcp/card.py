"""The server card: what a directory or a client learns about this server before connecting,
generated from the live tool lists."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fastapi import FastAPI, Request, Response

from viewfinder import __version__
from viewfinder.mcp import prompts
from viewfinder.mcp.server import path_of, profiles

PROTOCOLS = ["2025-06-18", "2025-11-25", "2026-07-28"]
MEDIA_TYPE = "application/mcp-server-card+json"


def card(public_url: str) -> dict[str, Any]:
    remotes = [
        {
            "type": "streamable-http",
            "url": f"{public_url}{path_of(name)}",
            "headers": [
                {
                    "name": "Authorization",
                    "value": "Bearer {VIEWFINDER_KEY}",
                    "isRequired": True,
                    "description": "A Viewfinder project key (vf_proj_...). initialize and "
                    "tools/list work without one.",
                }
            ],
            "supportedProtocolVersions": PROTOCOLS,
            "_meta": {
                "profile": name,
                "tools": [spec.name for spec in tools],
                "prompts": prompts.names(name),
            },
        }
        for name, tools in profiles().items()
    ]
    return {
        "$schema": "https://static.modelcontextprotocol.io/schemas/server-card/draft.json",
        "name": "io.github.viewfinder/viewfinder",
        "title": "Viewfinder",
        "version": __version__,
        "description": "Self-hosted visual review: screenshots compared with approved baselines, "
        "changes explained, accepted or denied by agents and people.",
        "remotes": remotes,
        "_meta": {
            "stdio": {
                "command": "viewfinder",
                "args": ["mcp"],
                "env": ["VIEWFINDER_KEY", "VIEWFINDER_URL"],
            }
        },
    }


def llms_txt(public_url: str) -> str:
    """A short index of the server for agents: every MCP profile with its tools and prompts."""
    lines = [
        "# Viewfinder",
        "",
        "> Self-hosted visual review: screenshots compared with approved baselines, and design "
        "checkups where a person marks what is wrong and an agent fixes it pass by pass.",
        "",
        f"- REST API: {public_url}/api/v1 (OpenAPI at {public_url}/openapi.json)",
        f"- Server card: {public_url}/.well-known/mcp/server-card.json",
        "- Over stdio: `viewfinder mcp [--profile NAME]` with VIEWFINDER_URL and VIEWFINDER_KEY",
        "",
    ]
    for name, tools in profiles().items():
        lines += [f"## MCP profile `{name}`: {public_url}{path_of(name)}", ""]
        for spec in tools:
            first = spec.description.split(". ")[0].rstrip(".")
            lines.append(f"- tool `{spec.name}`: {first}.")
        for prompt in prompts.names(name):
            lines.append(f"- prompt `{prompt}`")
        lines.append("")
    return "\n".join(lines)


def _matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an If-None-Match header names this ETag. The comparison is weak (RFC 9110): a
    proxy that compresses the card turns the ETag into W/"..." and clients send that back."""
    if not if_none_match:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags


def install(app: FastAPI, public_url: str) -> None:
    body = json.dumps(card(public_url), indent=2).encode()
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {
        "Access-Control-Allow-Origin": "*",
        "Cache-Control": "public, max-age=3600",
        "ETag": etag,
    }

    async def serve(request: Request) -> Response:
        if _matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=MEDIA_TYPE, headers=headers)

    for path in ("/.well-known/mcp/server-card.json", f"{path_of('default')}/server-card"):
        app.add_api_route(path, serve, methods=["GET"], include_in_schema=False)
    index = llms_txt(public_url).encode()

    async def serve_llms(request: Request) -> Response:
        return Response(
            index,
            media_type="text/plain; charset=utf-8",
            headers={"Cache-Control": "public, max-age=3600"},
        )

    app.add_api_route("/llms.txt", serve_llms, methods=["GET"], include_in_schema=False)
