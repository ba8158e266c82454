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


# The checkup loop's tools, per profile that has them.
_CHECKUP_NAMES = {
    "revisemy": {
        "create": "create_review",
        "get": "get_review",
        "resolve": "resolve_marks",
        "add": "add_screenshot",
        "findings": "add_findings",
        "billing": "get_billing",
    },
    "default": {
        "create": "open_checkup",
        "get": "get_checkup",
        "resolve": "resolve_checkup_marks",
        "add": "add_to_checkup (image)",
        "findings": "add_to_checkup (findings)",
        "billing": "get_checkup (without id)",
    },
}


def design_checkup_loop(n: dict[str, str], what: str) -> str:
    return f"""Run a design checkup of {what} with a person, pass by pass.

1. Capture: for a public page call {n["create"]} with capture_url: true and page_url (tell the
   person you are capturing first); for an app on localhost send images as data URLs (1-5,
   desktop and mobile); an email as html; a deck as pdf. Give a title and, each pass, a fresh
   context saying what to look at.
2. If the capture failed (the reply says so, screenshots have meta.origin capture_failed), add
   the page yourself with {n["add"]}, desktop and mobile, before sharing.
3. Paste review_url to the person. Always: it is their only way in.
4. Poll {n["get"]} about every 30 s (or wait for the webhook) and follow next_action:
   - wait_for_human: keep waiting;
   - apply_pins_then_next_pass: fix must-fix marks first, then nits and tweaks; leave keeps
     alone; ask the person before answering a question. Report each fix with {n["resolve"]}
     (status resolved, a short note, and after_image: a screenshot of the fixed area);
   - open_next_pass: call {n["create"]} with parent_id and fresh screenshots of the same
     screens, so each resolved mark shows whether its area changed;
   - done: stop; expired: open a new review only if the person still wants one.
5. Never verify or approve: those are the person's, on the review page.
6. Hints in work_packets.second_opinion are suggestions; you may add your own with
   {n["findings"]} (suggestion, a11y or polish, never must-fix). On [insufficient_credits]
   call {n["billing"]}.
"""


def check_page(n: dict[str, str], url: str, focus: str | None) -> str:
    looking = f", looking especially at {focus}" if focus else ""
    return f"""Check the page {url}{looking}.

Call {n["create"]} with capture_url: true, page_url "{url}", type website and a short title
(say you are capturing it first; it takes a few seconds). Read the second-opinion hints in
work_packets.second_opinion: each has an area on its screenshot (contrast measured from the
pixels, text size, tap targets, above the fold, axe-core). Paste review_url to the person and
tell them in two or three sentences what the hints point at; then follow next_action with
{n["get"]} as in design_checkup_loop.
"""


def _register_checkups(server: MCPServer, profile: str) -> None:
    names = _CHECKUP_NAMES.get(profile)
    if names is None:
        return

    @server.prompt(
        name="design_checkup_loop",
        title="Design checkup loop",
        description="Capture, create the review, share the link, poll and follow next_action.",
    )
    def _loop(what: str = "the screens you changed") -> str:
        return design_checkup_loop(names, what)

    @server.prompt(
        name="check_page",
        title="Check a page",
        description="Capture a page at desktop and mobile size and open a checkup of it.",
    )
    def _check(url: str, focus: str | None = None) -> str:
        return check_page(names, url, focus)


def register(server: MCPServer, profile: str) -> None:
    _register_checkups(server, profile)
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


def names(profile: str) -> list[str]:
    """The prompts a profile offers, as register adds them."""
    listed = ["design_checkup_loop", "check_page"] if profile in _CHECKUP_NAMES else []
    return listed + (["visual_review_loop"] if profile in _NAMES else [])
