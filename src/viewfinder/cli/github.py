"""`viewfinder github`: the project's GitHub token (for commit statuses, kept by the server)
and the one PR comment a workflow keeps up to date (posted from the workflow, with its own
GITHUB_TOKEN)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from viewfinder.cli.client import DEFAULT_URL, Client, JsonOption, KeyOption, UrlOption, segment
from viewfinder.cli.output import fail, print_json, repo_for_pr

if TYPE_CHECKING:
    import httpx

app = typer.Typer(help="GitHub: commit statuses and the PR comment.", no_args_is_help=True)

# The hidden first line by which the comment is found again and edited, never duplicated.
MARKER = "<!-- viewfinder:pr-comment -->"
TOKEN_VARIABLE = "VIEWFINDER_GITHUB_TOKEN"


@app.command("token")
def token(
    clear: Annotated[bool, typer.Option("--clear", help="Forget the token.")] = False,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Give the project a GitHub token (admin key): from then on every build of a repository
    gets a commit status. The token is read from VIEWFINDER_GITHUB_TOKEN or standard input,
    never from the command line (where other users of the machine could read it), and the
    server never shows it again."""
    with Client(url, key) as client:
        if clear:
            record = client.request("DELETE", "/project/github")
        else:
            secret = os.environ.get(TOKEN_VARIABLE) or (
                "" if sys.stdin.isatty() else sys.stdin.read()
            )
            secret = secret.strip()
            if not secret:
                fail(f"no token: set {TOKEN_VARIABLE}, or pipe the token to standard input")
            record = client.request("PUT", "/project/github", body={"token": secret})
    if as_json:
        print_json(record)
    elif record["configured"]:
        typer.echo(f"GitHub token kept; commit statuses go to {record['api_url']}")
    else:
        typer.echo("GitHub token forgotten: no more commit statuses")


def _github(api: str, github_token: str) -> httpx.Client:
    import httpx  # only the commands that talk to a server load the HTTP client

    return httpx.Client(
        base_url=api.rstrip("/"),
        headers={
            "Authorization": f"Bearer {github_token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        },
        timeout=30,
        follow_redirects=False,
    )


def _answer(response: httpx.Response, what: str) -> Any:
    if not response.is_success:
        fail(f"GitHub refused to {what} ({response.status_code}): {response.text[:300]}")
    return response.json()


def upsert_comment(gh: httpx.Client, repo: str, pr: int, body: str) -> tuple[str, str]:
    """Edit the PR's comment that starts with MARKER, or make it: ("created" | "updated", its
    URL)."""
    page = 1
    while True:
        found = _answer(
            gh.get(f"/repos/{repo}/issues/{pr}/comments", params={"per_page": 100, "page": page}),
            f"list the comments of {repo}#{pr}",
        )
        for comment in found:
            if str(comment.get("body", "")).startswith(MARKER):
                edited = _answer(
                    gh.patch(f"/repos/{repo}/issues/comments/{comment['id']}", json={"body": body}),
                    f"edit comment {comment['id']}",
                )
                return "updated", edited["html_url"]
        if len(found) < 100:
            break
        page += 1
    made = _answer(
        gh.post(f"/repos/{repo}/issues/{pr}/comments", json={"body": body}),
        f"comment on {repo}#{pr}",
    )
    return "created", made["html_url"]


@app.command("comment")
def comment(
    pr: Annotated[int, typer.Option(metavar="N", help="The pull request.", min=1)],
    repo: Annotated[
        str | None,
        typer.Option(
            metavar="OWNER/NAME",
            help="The repository; default VIEWFINDER_REPO, GITHUB_REPOSITORY or the origin remote.",
            show_default=False,
        ),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Post the PR's screenshots and changes as one comment, or edit the one posted before
    (found by a hidden marker). GitHub is reached with GITHUB_TOKEN at GITHUB_API_URL (both set
    in GitHub Actions)."""
    repo = repo_for_pr(repo)
    owner, _, name = repo.partition("/")
    github_token = os.environ.get("GITHUB_TOKEN")
    if not github_token:
        fail("no GITHUB_TOKEN: pass the workflow's token (env: GITHUB_TOKEN: ${{ github.token }})")
    with Client(url, key) as client:
        markdown = client.get(f"/prs/{segment(owner)}/{segment(name)}/{pr}/comment")["markdown"]
    api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
    import httpx

    try:
        with _github(api, github_token) as gh:
            done, link = upsert_comment(gh, repo, pr, f"{MARKER}\n{markdown}")
    except httpx.HTTPError as exc:
        fail(f"cannot reach GitHub at {api}: {exc}")
    if as_json:
        print_json({"comment": done, "url": link})
    else:
        typer.echo(f"PR comment {done}: {link}")
