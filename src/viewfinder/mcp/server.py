"""Build an MCP server for one profile: its tools, its prompts, its instructions."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from viewfinder import __version__
from viewfinder.errors import InvalidInput
from viewfinder.mcp import default, meticulous, miseru, prompts, review_app, revisemy, uiverify
from viewfinder.mcp.tooling import Backend, ToolServer, ToolSpec, tool
from viewfinder.settings import Settings

# Profiles whose products are OAuth protected resources: any request without a token gets 401
# with the resource metadata, so a client given only the URL signs in by itself. The others
# keep open discovery (initialize and tools/list without credentials).
# VIEWFINDER_PROTECTED_PROFILES changes the set.
PROTECTED = frozenset({"meticulous", "revisemy"})

BASE_PATH = "/mcp"


def path_of(profile: str) -> str:
    """Where a profile is served over HTTP."""
    return BASE_PATH if profile == "default" else f"{BASE_PATH}/{profile}"


INSTRUCTIONS = {
    "default": (
        "Viewfinder compares screenshots with approved baselines. Typical loop: find the build "
        "(list_builds, or get_build by commit_sha or pr_number), look at each changed story "
        "(get_diff, render_diff_image with before_after), read and resolve open comment "
        "threads, then accept intended changes and deny regressions. Tool errors start with a "
        "[code] and say what to do next."
    ),
    "uiverify": (
        "Visual review of UI builds (UI Verify's tools, served by Viewfinder). Typical loop: "
        "find the build (list_builds, or get_build by commitSha or prNumber), look at each "
        "changed story (get_diff, render_diff_image with which before_after), read and resolve "
        "open comments (list_comments, resolve_comment), then review_diff: accept intended "
        "changes, deny regressions. Tool errors start with a [code] and say what to do next."
    ),
    "miseru": (
        "Screenshots for pull requests (Miseru's tools, served by Viewfinder): miseru_push "
        "uploads one and returns Markdown to paste; with compare: true it is compared with its "
        "baseline. Look at a change with miseru_diff, approve an intended one with "
        "miseru_approve, and close a merged PR with miseru_close_context reason merged so its "
        "baselines become the shared ones. Tool errors start with a [code]."
    ),
    "meticulous": (
        "Session replays (Meticulous's tools, served by Viewfinder): recorded user sessions "
        "replayed on each deployment and compared screenshot by screenshot with the base "
        "commit's. Review a run: get_test_run_diffs (poll while it answers processing), then "
        "get_image_urls, get_dom_diff and get_timeline_diff for each row; reject_diff a "
        "regression, ignore_diff noise (a comment only). Drive a change to zero diffs: "
        "request_asset_upload, PUT the zip, register_asset_build, trigger_test_run, "
        "get_test_run_diffs. Tool errors start with a [code]."
    ),
    "revisemy": (
        "Design checkups (ReviseMy's tools, served by Viewfinder): create_review from exactly "
        "one source, paste review_url to the human, poll get_review and follow next_action: "
        "wait, fix the marks and report them with resolve_marks, open the next pass with "
        "parent_id, stop when approved. Approving and verifying stay with the human. Tool "
        "errors start with a [code]."
    ),
}


def profiles() -> dict[str, list[ToolSpec]]:
    """Every profile's tools, by profile name."""
    return {
        "default": default.TOOLS,
        "uiverify": uiverify.TOOLS,
        "miseru": miseru.TOOLS,
        "meticulous": meticulous.TOOLS,
        "revisemy": revisemy.TOOLS,
    }


def protected(settings: Settings) -> frozenset[str]:
    """The protected profiles: the setting's, else PROTECTED."""
    if settings.protected_profiles is None:
        return PROTECTED
    return frozenset(p.strip() for p in settings.protected_profiles.split(",") if p.strip())


# Profiles whose tools render the review app (MCP Apps) in hosts that have Apps.
WITH_APPS = ("revisemy",)


def build_server(profile: str, backend: Backend, *, public_url: str | None = None) -> MCPServer:
    """An MCP server for a profile. Raises InvalidInput for an unknown profile. ``public_url``
    is where the review app's screenshots come from."""
    known = profiles()
    if profile not in known:
        raise InvalidInput(f"unknown profile {profile!r}: choose one of {', '.join(known)}")
    server = ToolServer(
        name="viewfinder" if profile == "default" else f"viewfinder-{profile}",
        title="Viewfinder",
        description="Visual review: screenshots compared with baselines, reviewed by agents.",
        instructions=INSTRUCTIONS[profile],
        website_url="https://github.com/viewfinder",
        version=__version__,
        extensions=[review_app.extension(public_url)] if profile in WITH_APPS else [],
        tools=[tool(spec, backend) for spec in known[profile]],
    )
    prompts.register(server, profile)
    return server
