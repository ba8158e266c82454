"""Prompts that walk an agent through Viewfinder's loops."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

# Tool names per profile, so each prompt speaks the vocabulary its client sees.
_NAMES = {
    "default": {
        "find": "get_build",
        "list": "list_build_stories",
        "diff": "get_diff",
        "render": "render_diff_image",
        "comments": "list_comments",
        "resolve": "resolve_comment",
        "review": "review_diff",
        "accept_all": "accept_build",
        "changeset": "get_pr_changeset",
        "selector": "commit_sha or pr_number",
        "id": "diff_id",
    },
    "uiverify": {
        "find": "get_build",
        "list": "list_build_stories",
        "diff": "get_diff",
        "render": "render_diff_image",
        "comments": "list_comments",
        "resolve": "resolve_comment",
        "review": "review_diff",
        "accept_all": "accept_build",
        "changeset": "get_pr_changeset",
        "selector": "commitSha or prNumber",
        "id": "diffResultId",
    },
}


def visual_review_loop(names: dict[str, str], selector: str) -> str:
    n = names
    return f"""Review the visual changes of {selector} with Viewfinder.

1. Call {n["find"]} with {n["selector"]} ({selector}). Read the verdict and the counts; the
   first page of changed and failed stories comes with it. If there are more, page them with
   {n["list"]} until next_cursor is null, so nothing slips past a page boundary.
2. For each changed story, call {n["diff"]} with its {n["id"]}: read the ratio, the changed
   regions, the open comment threads and the next step.
3. Look at the pixels with {n["render"]}: which "before_after" shows each changed region
   before and after side by side. When in doubt, render "before" and "after" whole and compare:
   the diff shows where pixels changed, not whether the result is right (contrast, clipping,
   overlap, missing content).
4. If a story has open comment threads, read them with {n["comments"]}, address them (fix the
   code, or answer), and resolve them with {n["resolve"]}. Accepting is refused while a thread
   is open.
5. Decide each story with {n["review"]}: accept intended changes, deny regressions (then fix the
   code and push again), ignore pure rendering noise. Use {n["accept_all"]} only once every
   change in the build is intended.
6. Before calling the PR done, check {n["changeset"]}: every story the whole PR changed,
   including removed ones, must be something the PR meant to do.

Report what you found in buckets: regressions (do not accept), intended changes, cosmetic
reflow, rendering noise, new stories.
"""


def register(server: MCPServer, profile: str) -> None:
    names = _NAMES.get(profile)
    if names is None:
        return

    @server.prompt(
        name="visual_review_loop",
        title="Visual review loop",
        description="Walk through a build's visual changes and decide each one.",
    )
    def _loop(build: str = "the latest build of this pull request") -> str:
        return visual_review_loop(names, build)
