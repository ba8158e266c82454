"""Single screenshots into a PR or a labelled context (the delivery flow): `push`, `image`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from viewfinder.cli import scale as device_scale
from viewfinder.cli.client import (
    DEFAULT_URL,
    Client,
    JsonOption,
    KeyOption,
    UrlOption,
    segment,
    stream_file,
)
from viewfinder.cli.diffs import describe
from viewfinder.cli.output import EXIT_CHANGED, EXIT_OK, fail, print_json, repo_for_pr
from viewfinder.fsutil import write_atomic
from viewfinder.plumbing.gitinfo import head_commit

ImageArgument = Annotated[str, typer.Argument(metavar="IMAGE", help="The image id (img_...).")]
PrOption = Annotated[
    int | None, typer.Option(metavar="N", help="The pull request.", show_default=False)
]
RepoOption = Annotated[
    str | None,
    typer.Option(
        metavar="OWNER/NAME",
        help="The PR's repository; default VIEWFINDER_REPO, GITHUB_REPOSITORY or the origin "
        "remote.",
        show_default=False,
    ),
]
ContextOption = Annotated[
    str | None,
    typer.Option("--context", metavar="KEY", help="Any label instead of a PR.", show_default=False),
]
ContextTypeOption = Annotated[
    Literal["manual", "github_pr"] | None,
    typer.Option(help="The context's type (default manual).", show_default=False),
]


def context_of(
    pr: int | None, repo: str | None, context: str | None, context_type: str | None
) -> dict[str, Any]:
    """The context a command addresses, as the API's query or body fields."""
    if (pr is None) == (context is None):
        fail("give exactly one of --pr N and --context KEY")
    if pr is not None:
        return {"pr_number": pr, "repo": repo_for_pr(repo)}
    return {"context_key": context, "context_type": context_type}


def compare_line(diff: dict[str, Any], image_id: str) -> str:
    """What the comparison found, and the command that goes on from there."""
    if diff["outcome"] is None:
        return f"still comparing after 30 s: `viewfinder image {image_id}` shows the result later"
    if diff["outcome"] == "changed":
        return (
            f"{diff['found']} Diff {diff['id']}; if the change is intended: viewfinder approve "
            f"{diff['id']}"
        )
    return str(diff["found"])


def push(
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="The screenshot (PNG; JPEG and WebP without --compare).",
            exists=True,
            dir_okay=False,
        ),
    ],
    name: Annotated[str, typer.Option(help="Logical name, e.g. home or checkout@mobile.")],
    pr: PrOption = None,
    repo: RepoOption = None,
    context: ContextOption = None,
    context_type: ContextTypeOption = None,
    label: Annotated[
        str | None, typer.Option(help="A title for the context.", show_default=False)
    ] = None,
    viewport: Annotated[
        str | None, typer.Option(metavar="WxH", help="e.g. 1280x800.", show_default=False)
    ] = None,
    scale: Annotated[float | None, typer.Option(help=device_scale.HELP, show_default=False)] = None,
    commit: Annotated[
        str | None,
        typer.Option(metavar="SHA", help="Default: `git rev-parse HEAD`.", show_default=False),
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option(metavar="TAG", help="A tag (repeatable).", show_default=False),
    ] = None,
    compare: Annotated[
        bool, typer.Option("--compare", help="Compare with the baseline (waits up to 30 s).")
    ] = False,
    max_diff_ratio: Annotated[
        float | None,
        typer.Option(
            metavar="R", help="Share of pixels still unchanged (approve role).", show_default=False
        ),
    ] = None,
    mask: Annotated[
        list[str] | None,
        typer.Option(
            metavar="X,Y,W,H",
            help="Leave a rectangle out of the comparison (repeatable; approve role).",
            show_default=False,
        ),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Push one screenshot into a PR or a labelled context and print its markdown.

    With --compare: exit 1 when it changed or the comparison failed, else 0.
    """
    where = context_of(pr, repo, context, context_type)
    scale = device_scale.checked(scale)
    try:
        opened = file.open("rb")
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")
    params = {
        **where,
        "name": name,
        "context_label": label,
        "viewport": viewport,
        "scale": scale,
        "commit_sha": commit or head_commit(),
        "tags": tag or None,
        "compare": compare or None,
        "max_diff_ratio": max_diff_ratio,
        "mask": mask or None,
    }
    with opened, Client(url, key) as client:
        # Sent as it is read: a pipe or a device (/dev/zero) has no end the client could check.
        result = client.request("POST", "/images", params=params, content=stream_file(opened, file))
    diff = result["diff"]
    if as_json:
        print_json(result)
    else:
        replaced = result["replaced_image_id"]
        note = f" (replaces {replaced}, now expired)" if replaced else ""
        typer.echo(f"image {result['image_id']}{note}")
        typer.echo(result["markdown"])
        if diff is not None:
            typer.echo(compare_line(diff, result["image_id"]))
    found = diff["outcome"] if diff else None
    raise typer.Exit(EXIT_CHANGED if found in ("changed", "failed") else EXIT_OK)


def _save(client: Client, links: dict[str, str | None], out: Path) -> list[Path]:
    names = {"baseline": "baseline.png", "candidate": "candidate.png", "diff": "diff.png"}
    saved = []
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create {out}: {exc.strerror}")
    for which, filename in names.items():
        link = links.get(which)
        if link is None:
            continue
        try:
            write_atomic(out / filename, client.fetch(link))
        except OSError as exc:
            fail(f"cannot write {out / filename}: {exc.strerror}")
        saved.append(out / filename)
    return saved


def image(
    image_id: ImageArgument,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Save baseline.png, candidate.png and diff.png of its comparison here.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a pushed image and its newest comparison."""
    with Client(url, key) as client:
        record = client.get(f"/images/{segment(image_id)}")
        diff = client.get(f"/images/{segment(image_id)}/diff")
        compared = diff.get("state") != "none"
        saved = _save(client, diff["urls"], out) if out is not None and compared else []
    if as_json:
        print_json({"image": record, "diff": diff})
        return
    variant = f" ({record['variant']})" if record["variant"] else ""
    size = f"{record['width']}x{record['height']}, " if record["width"] else ""
    typer.echo(f"image {record['id']}: {record['name']}{variant}, {size}{record['media_type']}")
    if record["expired"]:
        typer.echo(f"  expired {record['expired_at'][:19]}")
    else:
        typer.echo(f"  {record['markdown']}")
    if not compared:
        typer.echo("  never compared" + (": nothing to save" if out is not None else ""))
        return
    typer.echo(f"  {describe(diff)}")
    typer.echo(f"  next: {diff['next_step']}")
    for path in saved:
        typer.echo(f"  saved {path}")
