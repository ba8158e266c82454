"""Build an MCP server for one profile: its tools, its prompts, its instructions."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from viewfinder import __version__
from viewfinder.errors import InvalidInput
from viewfinder.mcp import default, prompts
from viewfinder.mcp.tooling import Backend, ToolSpec, register

INSTRUCTIONS = (
    "Viewfinder compares screenshots with approved baselines. Typical loop: find the build "
    "(list_builds, or get_build by commit_sha or pr_number), look at each changed story "
    "(get_diff, render_diff_image with before_after), read and resolve open comment threads, "
    "then accept intended changes and deny regressions. Tool errors start with a [code] and say "
    "what to do next."
)


def profiles() -> dict[str, list[ToolSpec]]:
    """Every profile's tools, by profile name."""
    return {"default": default.TOOLS}


def build_server(profile: str, backend: Backend) -> MCPServer:
    """An MCP server for a profile. Raises InvalidInput for an unknown profile."""
    known = profiles()
    if profile not in known:
        raise InvalidInput(f"unknown profile {profile!r}: choose one of {', '.join(known)}")
    server = MCPServer(
        name="viewfinder" if profile == "default" else f"viewfinder-{profile}",
        title="Viewfinder",
        description="Visual review: screenshots compared with baselines, reviewed by agents.",
        instructions=INSTRUCTIONS,
        website_url="https://github.com/viewfinder",
        version=__version__,
    )
    for spec in known[profile]:
        register(server, spec, backend)
    prompts.register(server, profile)
    return server
