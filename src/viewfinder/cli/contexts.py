"""Contexts and the project: `close`, `expire`, `pr-comment`, `usage`."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from viewfinder.cli.client import (
    DEFAULT_URL,
    Client,
    JsonOption,
    KeyOption,
    UrlOption,
    segment,
)
from viewfinder.cli.output import fail, print_json, repo_for_pr
from viewfinder.cli.push import (
    ContextOption,
    ContextTypeOption,
    ImageArgument,
    PrOption,
    RepoOption,
    context_of,
)


def close(
    reason: Annotated[
        Literal["merged", "closed", "manual"],
        typer.Option(help="merged makes the PR's baselines shared; the others discard them."),
    ],
    pr: PrOption = None,
    repo: RepoOption = None,
    context: ContextOption = None,
    context_type: ContextTypeOption = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Close a PR or labelled context: settle its baselines and expire its images."""
    body = {**context_of(pr, repo, context, context_type), "reason": reason}
    with Client(url, key) as client:
        result = client.post("/contexts/close", body)
    if as_json:
        print_json(result)
        return
    ctx = result["context"]
    name = f"{ctx['type']} {ctx['key']}"
    if result["already_closed"]:
        typer.echo(f"{name} was closed already ({ctx['close_reason']}); nothing changed")
        return
    typer.echo(
        f"closed {name} ({reason}): {result['baselines_promoted']} baseline(s) promoted, "
        f"{result['baselines_discarded']} discarded, {result['images_expired']} image(s) expired"
    )


def expire(
    image_id: ImageArgument,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Stop delivering a pushed image: its link stops working."""
    with Client(url, key) as client:
        record = client.post(f"/images/{segment(image_id)}/expire")
    if as_json:
        print_json(record)
    else:
        typer.echo(f"expired {record['id']} ({record['name']})")


def pr_comment(
    pr: Annotated[int, typer.Option(metavar="N", help="The pull request.")],
    repo: RepoOption = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print one Markdown comment for a PR: its screenshots and its builds' changes."""
    owner, _, name = repo_for_pr(repo).partition("/")
    if not owner or not name:
        fail(f"--repo {repo!r} is not owner/name")
    with Client(url, key) as client:
        result = client.get(f"/prs/{segment(owner)}/{segment(name)}/{pr}/comment")
    if as_json:
        print_json(result)
    else:
        typer.echo(result["markdown"], nl=False)


def usage(url: UrlOption = DEFAULT_URL, key: KeyOption = None, as_json: JsonOption = False) -> None:
    """Show the project's storage use, images and baselines."""
    with Client(url, key) as client:
        record = client.get("/usage")
    if as_json:
        print_json(record)
        return
    quota = f" of {record['quota_bytes']:,}" if record["quota_bytes"] is not None else ""
    typer.echo(
        f"{record['used_bytes']:,}{quota} bytes used; {record['images']} live image(s), "
        f"{record['baselines']} current baseline(s)"
    )
