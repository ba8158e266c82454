"""Deciding on one diff: `review`, `approve`, `show-diff`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from viewfinder.cli.client import (
    DEFAULT_URL,
    Client,
    JsonOption,
    KeyOption,
    UrlOption,
    segment,
)
from viewfinder.cli.output import print_json
from viewfinder.cli.render import dash

DiffArgument = Annotated[str, typer.Argument(metavar="DIFF", help="The diff id (dif_...).")]


def review(
    diff_id: DiffArgument,
    decision: Annotated[
        Literal["accept", "deny", "ignore"],
        typer.Argument(metavar="DECISION", help="The decision on the change."),
    ],
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Accept, deny or ignore a change. Accepting with the approve role also updates the
    baseline; refused while the diff has unresolved comments (deny always works)."""
    with Client(url, key) as client:
        result = client.post(f"/diffs/{segment(diff_id)}/review", {"decision": decision})
    if as_json:
        print_json(result)
    else:
        typer.echo(result["message"])


def approve(
    diff_id: DiffArgument,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Make the diff's candidate the baseline (needs the approve role)."""
    with Client(url, key) as client:
        result = client.post(f"/diffs/{segment(diff_id)}/approve")
    if as_json:
        print_json(result)
        return
    typer.echo(result["message"])
    base = result["baseline"]
    typer.echo(f"  baseline {base['id']} ({base['scope']}, {base['source']})")


def describe(diff: dict[str, Any]) -> str:
    """One line: what the comparison found (the server's own sentence)."""
    return f"diff {diff['id']}: {diff['found']}"


def show_diff(
    diff_id: DiffArgument,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a diff: outcome, ratio, regions, decision and the next step."""
    with Client(url, key) as client:
        diff = client.get(f"/diffs/{segment(diff_id)}")
    if as_json:
        print_json(diff)
        return
    typer.echo(describe(diff))
    approved = ", approved" if diff["approved_at"] else ""
    typer.echo(
        f"  {diff['name']} ({dash(diff['variant'])}): decision {dash(diff['decision'])}{approved}, "
        f"{diff['open_threads']} open thread(s)" + (", stale" if diff["stale"] else "")
    )
    typer.echo(f"  next: {diff['next_step']}")
