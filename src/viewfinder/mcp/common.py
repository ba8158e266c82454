"""Pieces every profile's tools share: reading an image argument, and rendering diff images
with the note that comes before them."""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path

from viewfinder.errors import InvalidInput
from viewfinder.mcp.tooling import Call, Picture
from viewfinder.services import diffs, renders, threads
from viewfinder.services.threads import ThreadRecord

_DATA_URL = re.compile(r"^data:image/(png|jpeg|webp);base64,", re.I)
# Base64 has no dots, so anything ending in an image extension is a path, spaces included
# ("Screenshot 2026-01-05 at 10.00.00.png").
_PATH = re.compile(r"^[^\r\n]*\.(png|jpe?g|webp)$", re.I)
WHICH_ALIASES = {"baseline": "before", "candidate": "after"}


def read_image(call: Call, value: str, *, what: str = "image") -> bytes:
    """The bytes of an image argument: a data: URL or base64, or (over stdio only) a path."""
    text = value.strip()
    match = _DATA_URL.match(text)
    if match:
        text = text[match.end() :]
    elif _PATH.match(text):
        if not call.local_files:
            raise InvalidInput(
                f"{what} looks like a file path; over HTTP send the image itself as a "
                "data:image/png;base64,... URL (paths work with `viewfinder mcp` over stdio)"
            )
        path = Path(text).expanduser()
        if not path.is_absolute():
            raise InvalidInput(f"{what} must be an absolute path (got {value!r})")
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise InvalidInput(f"{what}: no file at {path}") from None
        except OSError as exc:
            raise InvalidInput(f"{what}: cannot read {path}: {exc.strerror}") from None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput(
            f"{what} is neither a data:image/...;base64 URL nor base64 (nor, over stdio, a path)"
        ) from None


def thread_note(items: list[ThreadRecord]) -> str:
    """One line per open thread, for the note before a story's images."""
    open_ones = [t for t in items if t.unresolved]
    if not open_ones:
        return "No open comment threads on this story."
    lines = [f"{len(open_ones)} open comment thread(s) on this story (resolve before accepting):"]
    for t in open_ones[:10]:
        who = f"{t.author.name}{' (agent)' if t.author.is_agent else ''}"
        where = f" at {t.anchor.type}" if t.anchor is not None else ""
        lines.append(f"- {t.id} by {who} on the {t.side} image{where}: {t.body[:200]}")
    return "\n".join(lines)


def pictures(
    call: Call,
    *,
    diff_id: str | None,
    story_id: str | None,
    which: str,
    offset: int | None,
    height: int | None,
    names: tuple[str, str],
) -> tuple[list[Picture], str]:
    """The rendered images of a diff (or a story's current image), and the note of open
    threads to put before them. ``names`` are the caller's names for the two arguments."""
    kind = WHICH_ALIASES.get(which, which)
    rendered, related = renders.render(
        call.env,
        call.actor,
        diff_id=diff_id,
        story_id=story_id,
        kind=kind,
        offset=offset,
        height=height,
        names=names,
    )
    links: dict[str, str | None] = {}
    if diff_id is not None:
        urls = diffs.get_diff(call.env, call.actor, diff_id).urls
        links = {"diff": urls.diff, "before": urls.baseline, "after": urls.candidate}
    shown = [
        Picture(
            label=r.label if diff_id is not None else f"story {story_id}",
            png=r.png,
            note=r.note or (f"{r.width}x{r.height}" if diff_id is not None else "current image"),
            link=links.get(kind),
        )
        for r in rendered
    ]
    on_it = threads.list_comments(call.env, call.actor, related) if related else []
    return shown, thread_note(on_it)
