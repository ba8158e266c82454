"""`viewfinder comments`: threads on a diff, optionally anchored on a point, rectangle or path
of the image (coordinates 0..1 of its width and height)."""

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
from viewfinder.cli.output import fail, print_json

app = typer.Typer(help="Comment threads on diffs.", no_args_is_help=True)

DiffArgument = Annotated[str, typer.Argument(metavar="DIFF", help="The diff id (dif_...).")]
CommentArgument = Annotated[
    str, typer.Argument(metavar="COMMENT", help="The comment id (cmt_...).")
]
BodyArgument = Annotated[str, typer.Argument(metavar="BODY", help="The text (1 to 4000 chars).")]


def _numbers(option: str, text: str, count: int | None) -> list[float]:
    """Comma-separated numbers; ``count`` of them, or an even number of at least 4 when None."""
    try:
        values = [float(p) for p in text.split(",")]
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not comma-separated numbers", param_hint=option
        ) from None
    if count is not None and len(values) != count:
        raise typer.BadParameter(f"{text!r} needs {count} numbers", param_hint=option)
    if count is None and (len(values) < 4 or len(values) % 2):
        raise typer.BadParameter(
            f"{text!r} needs pairs X1,Y1,X2,Y2,... (at least two points)", param_hint=option
        )
    return values


def anchor_of(
    point: str | None, rect: str | None, path: str | None, closed: bool
) -> dict[str, Any] | None:
    if sum(v is not None for v in (point, rect, path)) > 1:
        fail("give at most one of --point, --rect and --path")
    if closed and path is None:
        fail("--closed applies to --path only")
    if point is not None:
        x, y = _numbers("--point", point, 2)
        return {"type": "point", "x": x, "y": y}
    if rect is not None:
        x, y, w, h = _numbers("--rect", rect, 4)
        return {"type": "rect", "x": x, "y": y, "w": w, "h": h}
    if path is not None:
        v = _numbers("--path", path, None)
        points = [{"x": v[i], "y": v[i + 1]} for i in range(0, len(v), 2)]
        return {"type": "path", "points": points, "closed": closed}
    return None


def _where(anchor: dict[str, Any] | None) -> str:
    if anchor is None:
        return "whole image"
    if anchor["type"] == "point":
        return f"point {anchor['x']:g},{anchor['y']:g}"
    if anchor["type"] == "rect":
        return f"rect {anchor['x']:g},{anchor['y']:g} {anchor['w']:g}x{anchor['h']:g}"
    shape = "closed path" if anchor["closed"] else "path"
    return f"{shape} of {len(anchor['points'])} points"


def _author(thread: dict[str, Any]) -> str:
    author = thread["author"]
    return str(author["name"]) + (" (agent)" if author["is_agent"] else "")


def _body(text: str, indent: str) -> str:
    return ("\n" + indent).join(text.splitlines() or [""])


def print_thread(thread: dict[str, Any]) -> None:
    typer.echo(
        f"{thread['id']} [{thread['status']}] {thread['side']}, {_where(thread['anchor'])}, "
        f"by {_author(thread)}:"
    )
    typer.echo(f"    {_body(thread['body'], '    ')}")
    for reply in thread["replies"]:
        typer.echo(f"  reply {reply['id']} by {_author(reply)}:")
        typer.echo(f"      {_body(reply['body'], '      ')}")


@app.command("list")
def list_comments(
    diff_id: DiffArgument,
    status: Annotated[
        Literal["open", "resolved"] | None,
        typer.Option(help="Only open or only resolved threads.", show_default=False),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """List a diff's comment threads with their replies, oldest first."""
    with Client(url, key) as client:
        threads = client.get(f"/diffs/{segment(diff_id)}/comments", status=status)
    if as_json:
        print_json(threads)
        return
    if not threads:
        typer.echo("no comments")
    for thread in threads:
        print_thread(thread)


@app.command("add")
def add(
    diff_id: DiffArgument,
    body: BodyArgument,
    point: Annotated[
        str | None, typer.Option(metavar="X,Y", help="Anchor on a point.", show_default=False)
    ] = None,
    rect: Annotated[
        str | None,
        typer.Option(metavar="X,Y,W,H", help="Anchor on a rectangle.", show_default=False),
    ] = None,
    path: Annotated[
        str | None,
        typer.Option(
            metavar="X1,Y1,X2,Y2,...", help="Anchor on a path of points.", show_default=False
        ),
    ] = None,
    closed: Annotated[bool, typer.Option("--closed", help="The path is a closed shape.")] = False,
    side: Annotated[
        Literal["before", "after"],
        typer.Option(help="Which image the anchor is on: the baseline or the candidate."),
    ] = "after",
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Open a comment thread on a diff. Coordinates are 0 to 1 of the image's width and height.
    An open thread blocks accepting the diff until it is resolved."""
    anchor = anchor_of(point, rect, path, closed)
    with Client(url, key) as client:
        thread = client.post(
            f"/diffs/{segment(diff_id)}/comments", {"body": body, "anchor": anchor, "side": side}
        )
    if as_json:
        print_json(thread)
    else:
        typer.echo(f"comment {thread['id']} on {thread['diff_id']} ({_where(thread['anchor'])})")


def _act(
    method: str, path: str, url: str, key: str | None, as_json: bool, body: Any = None
) -> dict[str, Any]:
    with Client(url, key) as client:
        thread: dict[str, Any] = client.request(method, path, body=body)
    if as_json:
        print_json(thread)
    return thread


@app.command("reply")
def reply(
    comment_id: CommentArgument,
    body: BodyArgument,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Reply to a thread (a resolved thread opens again)."""
    path = f"/comments/{segment(comment_id)}/replies"
    thread = _act("POST", path, url, key, as_json, {"body": body})
    if not as_json:
        typer.echo(f"reply {thread['id']} in thread {thread['parent_id']}")


@app.command("update")
def update(
    comment_id: CommentArgument,
    body: BodyArgument,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change a comment's text (its author or an admin)."""
    thread = _act("PATCH", f"/comments/{segment(comment_id)}", url, key, as_json, {"body": body})
    if not as_json:
        typer.echo(f"updated {thread['id']}")


@app.command("resolve")
def resolve(
    comment_id: CommentArgument,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Resolve the thread a comment belongs to."""
    thread = _act("POST", f"/comments/{segment(comment_id)}/resolve", url, key, as_json)
    if not as_json:
        typer.echo(f"resolved thread {thread['id']}")


@app.command("delete")
def delete(
    comment_id: CommentArgument,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete a comment (its author or an admin); a thread's first comment takes its replies."""
    thread = _act("DELETE", f"/comments/{segment(comment_id)}", url, key, as_json)
    if not as_json:
        replies = len(thread["replies"])
        typer.echo(f"deleted {thread['id']}" + (f" and {replies} replies" if replies else ""))
