"""The findings a change can carry beyond its kind, by name. Verdicts and sentences are chosen
on these; the words a reviewer reads for each are ``wording.NOTES``, so rewording a note never
changes a decision."""

from __future__ import annotations

import enum


class Signal(enum.Enum):
    """What the analysis found in one changed region, beyond its kind."""

    NEW_CONTENT = enum.auto()  # the band beside a move that the move leaves unexplained
    INSERTED_AT_TOP = enum.auto()  # ... when it starts at the image's top edge, pushing down
    INSERTED = enum.auto()  # content above a downward move and as tall as it: what pushed it
    PUSHED_OUT_OF_VIEW = enum.auto()  # content at the bottom edge a downward move pushed off
    REWRAPPED = enum.auto()  # moved sideways as a column, its lines wrapped to a new width
    OVERLAPS = enum.auto()  # moved content now drawn over content that stayed put
    VANISHED = enum.auto()  # content gone: only background is left
    IMAGE_LOST = enum.auto()  # a detailed picture became mostly plain
    NOT_EXAMINED = enum.auto()  # beyond the regions examined in detail
    RESIZED = enum.auto()  # the two images differ in size


# Content inserted above what moved down, which it pushed.
INSERTIONS = frozenset({Signal.INSERTED, Signal.INSERTED_AT_TOP})
# Content changes that belong to the layout shift they came with, not to the content.
SHIFT_PARTS = INSERTIONS | {Signal.PUSHED_OUT_OF_VIEW}
