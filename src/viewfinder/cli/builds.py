"""Reading builds and accepting them: `builds`, `build`, `stories`, `accept-build`."""

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
from viewfinder.cli.output import EXIT_CHANGED, fail, print_json
from viewfinder.cli.render import (
    STORY_HEADERS,
    build_title,
    counts_line,
    story_rows,
    table,
)

LISTED = ("changed", "new", "removed", "failed")

BuildIdArgument = Annotated[
    str | None,
    typer.Argument(metavar="BUILD_ID", help="The build.", show_default=False),
]
CommitOption = Annotated[
    str | None,
    typer.Option(metavar="SHA", help="The newest build of this commit.", show_default=False),
]
PrOption = Annotated[
    int | None,
    typer.Option(metavar="N", help="The newest build of this pull request.", show_default=False),
]
LimitOption = Annotated[
    int | None,
    typer.Option(metavar="N", help="Items per page (1 to 100).", show_default=False),
]


def selector(build_id: str | None, commit: str | None, pr: int | None) -> dict[str, Any]:
    given = {"build_id": build_id, "commit_sha": commit, "pr_number": pr}
    if sum(v is not None for v in given.values()) != 1:
        fail("select the build with exactly one of BUILD_ID, --commit SHA and --pr N")
    return given


def builds(
    limit: LimitOption = None,
    cursor: Annotated[
        str | None, typer.Option(help="next_cursor of the previous page.", show_default=False)
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """List builds, newest first."""
    with Client(url, key) as client:
        page = client.get("/builds", limit=limit, cursor=cursor)
    if as_json:
        print_json(page)
        return
    rows = [
        [
            b["id"],
            b["commit_sha"][:12],
            b["branch"],
            f"{b['repo'] or ''}#{b['pr_number']}" if b["pr_number"] is not None else None,
            b["status"],
            b["verdict"],
            b["review"],
            counts_line(b["counts"]),
        ]
        for b in page["items"]
    ]
    headers = ("ID", "COMMIT", "BRANCH", "PR", "STATUS", "VERDICT", "REVIEW", "STORIES")
    table(headers, rows)
    if page["next_cursor"]:
        typer.echo(f"next page: viewfinder builds --cursor {page['next_cursor']}")


def print_stories(build_id: str, state: str, stories: dict[str, Any], indent: str = "") -> None:
    if stories["items"]:
        table(STORY_HEADERS, story_rows(stories["items"]), indent=indent)
    if stories["next_cursor"]:
        typer.echo(
            f"{indent}more: viewfinder stories {build_id} --state {state} "
            f"--cursor {stories['next_cursor']}"
        )


def build(
    build_id: BuildIdArgument = None,
    commit: CommitOption = None,
    pr: PrOption = None,
    limit: LimitOption = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a build: status, verdict, review and its changed, new, removed and failed stories."""
    chosen = selector(build_id, commit, pr)
    with Client(url, key) as client:
        detail = client.get("/build", limit=limit, **chosen)
    if as_json:
        print_json(detail)
        return
    typer.echo(build_title(detail))
    typer.echo(f"status {detail['status']}, verdict {detail['verdict']}, review {detail['review']}")
    typer.echo(f"stories: {counts_line(detail['counts'])}")
    typer.echo(f"url: {detail['url']}")
    for state in LISTED:
        stories = detail[state]
        if stories["items"]:
            typer.echo(f"{state} ({detail['counts'][state]}):")
            print_stories(detail["id"], state, stories, indent="  ")


def stories(
    build_id: Annotated[str, typer.Argument(metavar="BUILD_ID", help="The build.")],
    state: Annotated[
        Literal["changed", "new", "removed", "failed", "unchanged", "pending"],
        typer.Option(help="Which stories."),
    ] = "changed",
    cursor: Annotated[
        str | None, typer.Option(help="The `more:` cursor of a listing.", show_default=False)
    ] = None,
    limit: LimitOption = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """List a build's stories in one state, a page at a time."""
    with Client(url, key) as client:
        page = client.get(
            f"/builds/{segment(build_id)}/stories", state=state, cursor=cursor, limit=limit
        )
    if as_json:
        print_json(page)
        return
    if not page["items"]:
        typer.echo(f"no {state} stories")
    print_stories(build_id, state, page)


def accept_build(
    build_id: BuildIdArgument = None,
    commit: CommitOption = None,
    pr: PrOption = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Accept every pending change of a build, or nothing while a story has open comments
    (exit 1, naming them)."""
    chosen = selector(build_id, commit, pr)
    with Client(url, key) as client:
        if build_id is None:
            build_id = client.get("/build", limit=1, **chosen)["id"]
        result = client.post(f"/builds/{segment(build_id)}/accept")
    if as_json:
        print_json(result)
    else:
        typer.echo(result["message"])
        for story in result["blocked"]:
            typer.echo(
                f"  blocked: {story['name']} ({story['open_threads']} open thread(s) on "
                f"{story['diff_id']}: viewfinder comments list {story['diff_id']})"
            )
    if result["blocked"]:
        raise typer.Exit(EXIT_CHANGED)
