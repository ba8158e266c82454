"""The device scale screenshots were taken at, as the commands that send or compare them take
it (`diff`, `upload`, `push`): one help text, and the engine's own check, imported only when a
scale is given (the engine loads numpy, which `viewfinder --help` does without)."""

from __future__ import annotations

from viewfinder.cli.output import fail_on
from viewfinder.errors import ViewfinderError

HELP = (
    "The device scale the screenshots were taken at: 3 on most phones, 1 or 2 elsewhere. "
    "Above 2 the change analysis allows for glyphs drawn further off and changes further "
    "apart; left out, 1 or 2 is assumed."
)


def checked(scale: float | None) -> float | None:
    """The scale, or exit 2 saying what is wrong with it, before anything is sent."""
    if scale is None:
        return None
    from viewfinder.imaging.compare import check_scale

    try:
        return check_scale(scale)
    except ViewfinderError as exc:
        fail_on(exc)
