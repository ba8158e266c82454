"""`viewfinder deploy DIR --commit SHA`: zip a static build, upload it to the URL the server
signs, and register it as the commit's deployment (or register a running preview's URL)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer

from viewfinder.cli.client import (
    CONNECT_TIMEOUT,
    DEFAULT_URL,
    READ_TIMEOUT,
    ApiError,
    Client,
    ClientError,
    JsonOption,
    KeyOption,
    UrlOption,
)
from viewfinder.cli.output import fail, print_json
from viewfinder.cli.render import dash

UPLOAD_PATH = "/api/v1/deployments/uploads/"


def zip_folder(folder: Path) -> bytes:
    """The folder's files as a zip, paths relative to it (symbolic links are followed only
    when they stay inside the folder; others are left out)."""
    import zipfile  # here: `viewfinder --help` imports this module for its one line

    root = folder.resolve()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for directory, names, files in os.walk(root):
            names.sort()
            for name in sorted(files):
                path = Path(directory) / name
                if not path.resolve().is_relative_to(root) or not path.is_file():
                    continue
                archive.write(path, path.relative_to(root).as_posix())
    return out.getvalue()


def _put(client: Client, upload_url: str, data: bytes) -> None:
    """PUT the zip: to this server (by the path it signed, so a proxy's address does not
    matter) or to the bucket's presigned URL as it is."""
    parts = urlsplit(upload_url)
    if parts.path.startswith(UPLOAD_PATH):
        client.request(
            "PUT",
            parts.path.removeprefix("/api/v1"),
            content=data,
            headers={"Content-Type": "application/zip"},
        )
        return
    import httpx  # only when uploading: listing commands never loads it

    try:
        answer = httpx.put(
            upload_url, content=data, timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
        )
    except httpx.HTTPError as exc:
        raise ClientError(f"uploading the zip to {parts.netloc} failed: {exc}") from None
    if not answer.is_success:
        raise ApiError(answer.status_code, "upload_failed", answer.text[:300])


def _rules(rewrite: list[str]) -> list[dict[str, str]]:
    rules = []
    for text in rewrite:
        source, sep, destination = text.partition("=")
        if not sep:
            fail(f"--rewrite {text!r}: give SOURCE=DESTINATION, e.g. '/app/*=/app/index.html'")
        rules.append({"source": source, "destination": destination})
    return rules


def deploy(
    folder: Annotated[
        Path | None,
        typer.Argument(
            metavar="DIR",
            help="The static build's folder (the one holding index.html).",
            show_default=False,
        ),
    ] = None,
    commit: Annotated[
        str, typer.Option("--commit", metavar="SHA", help="The commit the build is of.")
    ] = "",
    preview: Annotated[
        str | None,
        typer.Option(
            "--preview",
            metavar="URL",
            help="Register a preview already running at URL instead of uploading DIR.",
            show_default=False,
        ),
    ] = None,
    rewrite: Annotated[
        list[str] | None,
        typer.Option(
            "--rewrite",
            metavar="SOURCE=DEST",
            help="A rewrite rule tried before the single-page-app fallback (repeatable).",
            show_default=False,
        ),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Upload a static build (or name a running preview) as the deployment of a commit, for
    session replays. Prints the deployment id."""
    if not commit:
        fail("give the commit the build is of: --commit SHA (e.g. $(git rev-parse HEAD))")
    if (folder is None) == (preview is None):
        fail("give either DIR (a static build's folder) or --preview URL")
    with Client(url, key) as client:
        if preview is not None:
            made = client.post("/deployments/previews", {"url": preview, "commit_sha": commit})
        else:
            assert folder is not None
            if not (folder / "index.html").is_file():
                fail(f"{folder} has no index.html: give the folder the build writes (e.g. dist/)")
            data = zip_folder(folder)
            ticket = client.post("/deployments/uploads")
            _put(client, ticket["upload_url"], data)
            made = client.post(
                "/deployments",
                {
                    "upload_id": ticket["upload_id"],
                    "commit_sha": commit,
                    "rewrites": _rules(rewrite or []),
                },
            )
    if as_json:
        print_json(made)
        return
    what = made["url"] if made["kind"] == "url" else f"{dash(made['files'])} files"
    typer.echo(f"deployment {made['id']} of {made['commit_sha'][:12]} ({made['kind']}, {what})")
