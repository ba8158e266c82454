"""`viewfinder baselines`: the approved images new screenshots are compared with."""

from __future__ import annotations

from typing import Annotated

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
from viewfinder.cli.render import table

app = typer.Typer(
    help="List baselines (without a subcommand) or delete one.", invoke_without_command=True
)


@app.callback()
def list_baselines(
    ctx: typer.Context,
    name: Annotated[
        str | None, typer.Option(help="Only baselines of this name.", show_default=False)
    ] = None,
    history: Annotated[
        bool, typer.Option("--history", help="Ended baselines too, with why they ended.")
    ] = False,
    cursor: Annotated[
        str | None, typer.Option(help="next_cursor of the previous page.", show_default=False)
    ] = None,
    limit: Annotated[
        int | None, typer.Option(metavar="N", help="Items per page (1 to 200).", show_default=False)
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the current baselines (shared and per PR) by name."""
    if ctx.invoked_subcommand is not None:
        return
    with Client(url, key) as client:
        page = client.get("/baselines", name=name, history=history, cursor=cursor, limit=limit)
    if as_json:
        print_json(page)
        return
    rows = [
        [
            b["id"],
            b["name"],
            b["variant"],
            b["scope"],
            b["source"],
            b["created_at"][:19],
            f"{b['end_reason']} {b['ended_at'][:19]}" if b["ended_at"] else "",
        ]
        for b in page["items"]
    ]
    if rows:
        table(("ID", "NAME", "VARIANT", "SCOPE", "SOURCE", "CREATED", "ENDED"), rows)
    else:
        typer.echo("no baselines")
    if page["next_cursor"]:
        typer.echo(f"next page: viewfinder baselines --cursor {page['next_cursor']}")


@app.command("delete")
def delete(
    baseline_id: Annotated[str, typer.Argument(metavar="BASELINE_ID", help="The baseline.")],
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """End a baseline (approve role): the next compare of its name registers a new one."""
    with Client(url, key) as client:
        base = client.request("DELETE", f"/baselines/{segment(baseline_id)}")
    if as_json:
        print_json(base)
        return
    variant = f" ({base['variant']})" if base["variant"] else ""
    typer.echo(f"deleted baseline {base['id']} of {base['name']}{variant}")
