"""`viewfinder diff`: compare two PNG files on this machine, no server needed."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Annotated

from viewfinder.cli.output import (
    EXIT_CHANGED,
    EXIT_OK,
    echo,
    fail,
    fail_on,
    print_json,
    reader_gone,
)
from viewfinder.cli.params import Argument, BadValue, Option, plain
from viewfinder.cli.scale import HELP as scale_help
from viewfinder.errors import ImageTooLarge, ViewfinderError

if TYPE_CHECKING:
    from viewfinder.imaging import Comparison


def _parse_mask(text: str) -> tuple[int, int, int, int]:
    parts = text.split(",")
    try:
        x, y, w, h = (int(p.strip()) for p in parts)
    except ValueError:
        raise BadValue(f"{text!r} is not X,Y,WIDTH,HEIGHT (four integers)") from None
    return x, y, w, h


def _read(path: str, role: str) -> bytes:
    from viewfinder.imaging.png import DEFAULT_LIMITS

    limit = DEFAULT_LIMITS.max_bytes
    try:
        with open(path, "rb") as file:
            # A byte more than the limit at most: a device or a pipe (/dev/zero) never ends.
            data = file.read(limit + 1)
    except FileNotFoundError:
        fail(f"{role} image {path} does not exist")
    except IsADirectoryError:
        fail(f"{role} image {path} is a directory, not a PNG file")
    except OSError as exc:
        fail(f"cannot read {role} image {path}: {exc.strerror}")
    if len(data) > limit:
        fail_on(
            ImageTooLarge(
                f"{role} image {path} is larger than the {limit // 2**20} MB limit; "
                "send a smaller screenshot"
            )
        )
    return data


# Declared with cli/params.py, not typer: a plain command line never loads typer (cli/quick.py).
# Paths are plain strings: pathlib, with the URL and IP address modules it imports, would cost
# the command 5 ms of its start for two reads and a write.
@plain
def diff(
    base: Annotated[str, Argument(help="The approved image.", metavar="BASE.png", path=True)],
    candidate: Annotated[str, Argument(help="The new image.", metavar="CANDIDATE.png", path=True)],
    threshold: Annotated[
        float, Option(help="Per-pixel colour tolerance, 0 (exact) to 1.", min=0, max=1)
    ] = 0.1,
    include_aa: Annotated[
        bool, Option("--include-aa", help="Count anti-aliased pixels as changes too.")
    ] = False,
    mask: Annotated[
        list[str] | None,
        Option(
            help="Leave a rectangle X,Y,WIDTH,HEIGHT out of the comparison (repeatable, max 20).",
            metavar="X,Y,W,H",
        ),
    ] = None,
    max_diff_ratio: Annotated[
        float,
        Option(help="Changed share of pixels still reported as unchanged, 0 to 1.", min=0, max=1),
    ] = 0.0,
    ignore_noise: Annotated[
        bool,
        Option(
            "--ignore-noise",
            help="Report a pair whose every difference is rendering noise (sub-pixel offsets, "
            "anti-aliasing, imperceptible colour jitter) as unchanged.",
        ),
    ] = False,
    scale: Annotated[
        float | None,
        Option(help=scale_help),
    ] = None,
    out: Annotated[
        str | None,
        Option(
            help="Write the diff image here when the images differ.", metavar="DIFF.png", path=True
        ),
    ] = None,
    as_json: Annotated[bool, Option("--json", help="Print the result as one JSON object.")] = False,
) -> None:
    """Compare two screenshots. Exit 0 when unchanged, 1 when changed, 2 on bad input."""
    # Here rather than at start-up: only comparing needs these, and `viewfinder --help`, which
    # imports this module for its one line, starts faster without them.
    from viewfinder.fsutil import write_atomic
    from viewfinder.imaging import compare
    from viewfinder.runtime import tune_allocator

    tune_allocator()
    masks = [_parse_mask(m) for m in mask or []]
    base_bytes, candidate_bytes = _read(base, "base"), _read(candidate, "candidate")
    try:
        result = compare(
            base_bytes,
            candidate_bytes,
            threshold=threshold,
            include_aa=include_aa,
            masks=masks,
            max_diff_ratio=max_diff_ratio,
            ignore_noise=ignore_noise,
            scale=scale,
            diff_image=out is not None,
        )
    except ViewfinderError as exc:
        fail_on(exc)
    except MemoryError:
        # Exit 2 like any other failure: a crash's exit 1 would read as "changed".
        fail(
            f"not enough memory to compare {base} and {candidate}: a comparison needs about "
            "10 bytes for each pixel of the larger image; free some, or compare smaller ones"
        )
    if out is not None and result.diff_png is not None:
        try:
            write_atomic(out, result.diff_png)
        except OSError as exc:
            fail(f"cannot write the diff image to {out}: {exc.strerror}")
    try:
        if as_json:
            data = result.to_dict()
            data["diff_image"] = str(out) if out is not None and result.diff_png else None
            print_json(data)
        else:
            _print_text(result, out)
    except BrokenPipeError:
        # The reader took what it wanted (`| head -1`); the exit code still gives the verdict.
        reader_gone()
    raise SystemExit(EXIT_CHANGED if result.changed else EXIT_OK)


def _print_text(result: Comparison, out: str | None) -> None:
    share = f"{result.diff_ratio:.4%}"
    verdict = "changed" if result.changed else "unchanged"
    if result.noise_ignored:
        verdict += " (rendering noise only)"
    echo(
        f"{verdict}: {result.changed_pixels:,} of {result.compared_pixels:,} pixels differ "
        f"({share}) on a {result.width}x{result.height} canvas"
    )
    if result.base_size != result.candidate_size:
        b, c = result.base_size, result.candidate_size
        echo(f"sizes differ: base {b.width}x{b.height}, candidate {c.width}x{c.height}")
    for i, r in enumerate(result.regions[:10], 1):
        echo(f"  region {i}: {r.width}x{r.height} at ({r.x}, {r.y}), {r.changed_pixels:,} pixels")
    if len(result.regions) > 10:
        echo(f"  ... and {len(result.regions) - 10} more regions (see --json)")
    if not result.identical:
        a = result.analysis
        verdict = (a.verdict or a.kind).replace("_", " ")
        echo(f"analysis: {a.summary} ({verdict}, confidence {a.confidence:.0%})")
        echo(textwrap.fill(a.reasoning, width=96, initial_indent="  ", subsequent_indent="  "))
    if out is not None:
        echo(f"diff image: {out}" if result.diff_png else "no diff image: nothing changed")
