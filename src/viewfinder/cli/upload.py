"""`viewfinder upload`: one build from a folder of screenshots, as CI runs it."""

from __future__ import annotations

import functools
import time
import uuid
from pathlib import Path
from typing import Annotated, Any

import typer

from viewfinder.cli import scale as device_scale
from viewfinder.cli import storybook
from viewfinder.cli.client import (
    DEFAULT_URL,
    Client,
    ClientError,
    JsonOption,
    KeyOption,
    UrlOption,
    segment,
)
from viewfinder.cli.output import EXIT_CHANGED, EXIT_OK, fail, print_json, repo_for_pr
from viewfinder.cli.render import counts_line, progress
from viewfinder.cli.storybook import Captured


def find_stories(directory: Path) -> list[tuple[str, Path]]:
    """Every PNG under the folder, named by its path relative to it without `.png`."""
    found = [
        (path.relative_to(directory).with_suffix("").as_posix(), path)
        for path in directory.rglob("*.png")
        if path.is_file()
    ]
    return sorted(found)


# Stories go up in batches (one request and one database transaction each), a few batches at
# a time: per-story requests spend most of their time on HTTP and transaction overhead.
BATCH_FILES = 50
BATCH_BYTES = 16 << 20


def batches(stories: list[tuple[str, Path]]) -> list[list[tuple[str, Path]]]:
    out: list[list[tuple[str, Path]]] = [[]]
    size = 0
    for name, path in stories:
        length = path.stat().st_size
        if out[-1] and (len(out[-1]) >= BATCH_FILES or size + length > BATCH_BYTES):
            out.append([])
            size = 0
        out[-1].append((name, path))
        size += length
    return out


def _post_batch(
    client: Client,
    build_id: str,
    batch: list[tuple[str, Path]],
    variant: str | None,
    scale: float | None,
) -> None:
    files = []
    for name, path in batch:
        try:
            files.append(("file", (name, path.read_bytes(), "image/png")))
        except OSError as exc:
            raise ClientError(f"cannot read {path}: {exc.strerror}") from None
    try:
        # Stories are stored idempotently (same name, same bytes): a retry after a lost answer
        # is safe.
        client.request(
            "POST",
            f"/builds/{segment(build_id)}/stories",
            files=files,
            data={k: str(v) for k, v in (("variant", variant), ("scale", scale)) if v is not None}
            or None,
            retry=True,
        )
    except ClientError as exc:
        first, last = batch[0][1], batch[-1][1]
        raise ClientError(f"{exc.message} (uploading {first} .. {last})") from None


def _advance(bar: Any, task: Any, count: int, _: object) -> None:
    bar.advance(task, count)


def _upload_all(
    client: Client,
    build_id: str,
    stories: list[tuple[str, Path]],
    variant: str | None,
    scale: float | None,
    concurrency: int,
) -> None:
    # Here rather than at the top: `viewfinder --help` imports this module for its one line.
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    with progress() as bar, ThreadPoolExecutor(max_workers=concurrency) as pool:
        task = bar.add_task("uploading", total=len(stories))
        futures = []
        for batch in batches(stories):
            future = pool.submit(_post_batch, client, build_id, batch, variant, scale)
            future.add_done_callback(functools.partial(_advance, bar, task, len(batch)))
            futures.append(future)
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in done if f.exception() is not None]
        if failed:
            for future in futures:
                future.cancel()
            error = failed[0].exception()
            assert error is not None
            raise error


def _wait_done(client: Client, build_id: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    # Short, steady polls: a status read is cheap, and CI waits on the answer.
    delay = 0.1
    with progress() as bar:
        task = bar.add_task("comparing", total=None)
        while True:
            build: dict[str, Any] = client.get(f"/builds/{segment(build_id)}", limit=1)
            counts = build["counts"]
            bar.update(
                task, total=sum(counts.values()), completed=sum(counts.values()) - counts["pending"]
            )
            if build["status"] == "done":
                return build
            if build["status"] == "expired":
                fail(f"build {build_id} expired before it was finalized; upload it again")
            left = deadline - time.monotonic()
            if left <= 0:
                fail(
                    f"build {build_id} is still comparing after {timeout:g} s "
                    f"({counts['pending']} pending); `viewfinder build {build_id}` shows it later"
                )
            time.sleep(min(delay, left))


def _capture_storybook(directory: Path, glob: str | None, sizes: list[str]) -> list[Captured]:
    viewports = []
    for size in sizes or ["1280x800"]:
        width, _, height = size.partition("x")
        if not (
            width.isdigit() and height.isdigit() and 0 < int(width) <= 10000 >= int(height) > 0
        ):
            fail(f"--storybook-viewport {size!r} is not WIDTHxHEIGHT (e.g. 1280x800)")
        viewports.append((int(width), int(height)))
    try:
        chosen = storybook.choose(storybook.read_index(directory), glob)
        with progress() as bar:
            task = bar.add_task("capturing", total=len(chosen) * len(viewports))
            captured = []
            for shot in storybook.capture(directory, chosen, viewports):
                captured.append(shot)
                bar.advance(task)
    except ClientError as exc:
        fail(exc.message)
    for shot in captured:
        if shot.failure:
            typer.echo(f"  {shot.name}: failed: {shot.failure}", err=True)
    return captured


def _upload_captured(client: Client, build_id: str, captured: list[Captured]) -> None:
    for shot in captured:
        params = {"name": shot.name} | ({"failure": shot.failure} if shot.failure else {})
        try:
            client.request(
                "PUT",
                f"/builds/{segment(build_id)}/stories",
                params=params,
                content=shot.png,
                retry=True,  # the same bytes under the same name are stored once
            )
        except ClientError as exc:
            raise ClientError(f"{exc.message} (uploading {shot.name})") from None


def _summary(build: dict[str, Any]) -> dict[str, Any]:
    keys = ("status", "verdict", "counts")
    return {"build_id": build["id"], "url": build["url"], **{k: build[k] for k in keys}}


def upload(
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="Folder of screenshots: every *.png under it is a story named by its path.",
            exists=True,
            file_okay=False,
        ),
    ],
    commit: Annotated[str, typer.Option(metavar="SHA", help="The commit the screenshots show.")],
    branch: Annotated[str | None, typer.Option(help="The branch.", show_default=False)] = None,
    repo: Annotated[
        str | None,
        typer.Option(
            metavar="OWNER/NAME",
            help="The repository; default VIEWFINDER_REPO, GITHUB_REPOSITORY or the GitHub "
            "origin remote (needed with --pr, and for commit statuses).",
            show_default=False,
        ),
    ] = None,
    pr: Annotated[
        int | None, typer.Option(metavar="N", help="The pull request.", show_default=False)
    ] = None,
    viewport: Annotated[
        str | None,
        typer.Option(
            metavar="WxH", help="Viewport of every story, e.g. 1280x800.", show_default=False
        ),
    ] = None,
    scale: Annotated[
        float | None,
        typer.Option(help=device_scale.HELP, show_default=False),
    ] = None,
    wait_for: Annotated[
        bool, typer.Option("--wait", help="Wait for the comparisons and exit by the verdict.")
    ] = False,
    timeout: Annotated[
        float, typer.Option(metavar="SECONDS", help="How long --wait waits.", min=0)
    ] = 600,
    exit_zero_on_changes: Annotated[
        bool,
        typer.Option(
            "--exit-zero-on-changes", help="With --wait: exit 0 on changes (still 1 on failures)."
        ),
    ] = False,
    concurrency: Annotated[
        int,
        typer.Option(metavar="N", help="Batches of stories uploaded in parallel.", min=1, max=64),
    ] = 3,
    storybook: Annotated[
        bool,
        typer.Option(
            "--storybook",
            help="DIR is a Storybook static build: capture its stories (named "
            "title/name@WxH) and upload them.",
        ),
    ] = False,
    stories_glob: Annotated[
        str | None,
        typer.Option(
            "--stories",
            metavar="GLOB",
            help="With --storybook: only the stories whose title/name matches, e.g. 'Form/*'.",
            show_default=False,
        ),
    ] = None,
    storybook_viewports: Annotated[
        list[str] | None,
        typer.Option(
            "--storybook-viewport",
            metavar="WxH",
            help="With --storybook: a viewport to capture each story at (repeatable; default "
            "1280x800).",
            show_default=False,
        ),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Upload a build: every PNG under DIR (or, with --storybook, every story of the Storybook
    static build in DIR, captured), compared with the approved baselines.

    With --wait: exit 0 when nothing changed (new stories are not changes), 1 on changes or
    failed comparisons, 2 on errors.
    """
    scale = device_scale.checked(scale)
    if storybook and scale is not None:
        fail(
            "--scale describes screenshots uploaded from DIR; stories --storybook captures are "
            "taken at scale 1: leave --scale out"
        )
    captured: list[Captured] = []
    if storybook:
        captured = _capture_storybook(directory, stories_glob, storybook_viewports or [])
        stories: list[tuple[str, Path]] = []
    else:
        stories = find_stories(directory)
        if not stories:
            fail(f"no PNG files under {directory}: nothing to upload")
    if pr is not None:
        repo = repo_for_pr(repo)
    else:  # a build that knows its repository can get a commit status
        from viewfinder.plumbing.gitinfo import resolve_repo

        repo = resolve_repo(repo)
    with Client(url, key) as client:
        # The key makes opening the build safe to retry: a retry after a lost answer gets the
        # build the first attempt opened.
        build = client.request(
            "POST",
            "/builds",
            body={"commit_sha": commit, "branch": branch, "repo": repo, "pr_number": pr},
            headers={"Idempotency-Key": f"upload-{uuid.uuid4()}"},
            retry=True,
        )
        build_id = build["id"]
        if captured:
            _upload_captured(client, build_id, captured)
        else:
            _upload_all(client, build_id, stories, viewport, scale, concurrency)
        build = client.post(f"/builds/{segment(build_id)}/finalize", retry=True)
        if wait_for and build["status"] != "done":
            build = _wait_done(client, build_id, timeout)
    if as_json:
        print_json(_summary(build))
    elif build["status"] == "done":
        review = f" (review: {build['review']})" if build["review"] != "none" else ""
        typer.echo(f"build {build_id}: {build['verdict']}{review}")
        typer.echo(f"  {counts_line(build['counts'])}")
        typer.echo(f"  {build['url']}")
        if build["verdict"] != "unchanged":
            typer.echo(f"  details: viewfinder build {build_id}")
    else:
        typer.echo(f"build {build_id}: {len(stories) or len(captured)} stories uploaded, comparing")
        typer.echo(f"  {build['url']}")
        typer.echo(f"  follow it: viewfinder build {build_id}")
    if not wait_for:
        raise typer.Exit(EXIT_OK)
    verdict = build["verdict"]
    changes = verdict == "changed" and not exit_zero_on_changes
    raise typer.Exit(EXIT_CHANGED if verdict == "failed" or changes else EXIT_OK)
