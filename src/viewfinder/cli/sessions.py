"""`viewfinder sessions` and `viewfinder session ID`: recorded sessions, newest first, and one
session's user flow and network summary (or its whole recording)."""

from __future__ import annotations

from typing import Annotated

import typer

from viewfinder.cli.client import DEFAULT_URL, Client, JsonOption, KeyOption, UrlOption, segment
from viewfinder.cli.output import print_json
from viewfinder.cli.render import dash, table

COLUMNS = ["start_url", "number_user_events", "duration_seconds", "abandoned_reason"]


def sessions(
    limit: Annotated[int, typer.Option(metavar="N", help="How many (1 to 1000).")] = 20,
    offset: Annotated[int, typer.Option(metavar="N", help="Skip the newest N.")] = 0,
    recorded_by: Annotated[
        str | None,
        typer.Option(metavar="WHO", help="Only sessions of this visitor.", show_default=False),
    ] = None,
    visited: Annotated[
        str | None,
        typer.Option(
            metavar="GLOB",
            help="Only sessions that visited a URL matching GLOB (* matches anything).",
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(metavar="TIME", help="Recorded since (ISO-8601).", show_default=False),
    ] = None,
    exclude_synthetic: Annotated[
        bool, typer.Option(help="Leave out sessions recorded by automated browsers.")
    ] = False,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """List recorded sessions, newest first."""
    with Client(url, key) as client:
        listed = client.get(
            "/sessions",
            limit=limit,
            offset=offset,
            recorded_by=recorded_by,
            visited_url_filter=visited,
            recorded_since=since,
            exclude_synthetic=exclude_synthetic or None,
            include=COLUMNS,
        )
    if as_json:
        print_json(listed)
        return
    if not listed["sessions"]:
        typer.echo(f"no recorded sessions in project {listed['project']}")
        return
    rows = [
        [
            s["id"],
            s["recorded_at"][:19].replace("T", " "),
            s["status"],
            s["number_user_events"],
            f"{s['duration_seconds']:.0f} s",
            dash(s["recorded_by"]),
            s["start_url"],
        ]
        for s in listed["sessions"]
    ]
    table(("ID", "RECORDED", "STATUS", "EVENTS", "LENGTH", "BY", "START"), rows)


def session(
    session_id: Annotated[str, typer.Argument(metavar="SESSION_ID", help="The session.")],
    recording: Annotated[
        bool, typer.Option("--recording", help="Print the whole recording (JSON).")
    ] = False,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """A session's user flow and network summary."""
    with Client(url, key) as client:
        if recording:
            print_json(client.get(f"/sessions/{segment(session_id)}/recording"))
            return
        data = client.get(f"/sessions/{segment(session_id)}")
    if as_json:
        print_json(data)
        return
    typer.echo(f"session {data['id']} ({data['status']}, {data['duration_seconds']:.0f} s)")
    typer.echo(f"  started at {data['start_url']}")
    typer.echo("user flow:")
    for n, step in enumerate(data["user_flow"], 1):
        typer.echo(f"  {n}. {step}")
    typer.echo("network:")
    for line in data["network"] or ["(no calls)"]:
        typer.echo(f"  {line}")
