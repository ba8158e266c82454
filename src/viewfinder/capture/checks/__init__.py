"""The second opinion: a checklist that measures the screenshots and points at the pixels.

Every finding is a hint with an area (fractions 0-1 of its screenshot) and the rule that made
it. Which rules run depends on the review type:

    every type     contrast (measured from the pixels under each text), text under 12 px,
                   tap targets under 24x24 CSS px (mobile shots), axe-core's violations
    website        + nothing actionable above the fold
    email          + wider than 640 px, text or images that dark mode loses (light vs dark)
    presentation   + slides whose text covers too much of them

Shots without boxes (images given as files) get what their pixels allow, which without a DOM
is nothing; failed captures get nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viewfinder.capture.checks import rules
from viewfinder.capture.checks.areas import capped, deduplicated
from viewfinder.capture.model import REVIEW_TYPES, Finding, ReviewType, Shot
from viewfinder.errors import InvalidInput
from viewfinder.imaging import decode

_SEVERITY_ORDER = {"a11y": 0, "suggestion": 1, "polish": 2}


def second_opinion(shots: Sequence[Shot], review_type: ReviewType) -> list[Finding]:
    """Findings for every shot of a capture, deduplicated, at most a few per rule and shot,
    in the order of the shots and then by severity (a11y, suggestion, polish). An email's
    ``light`` and ``dark`` shots are also compared with each other. Raises InvalidInput for
    an unknown review type, InvalidImage for a shot whose PNG cannot be read."""
    _check_type(review_type)
    pixels: dict[int, np.ndarray] = {}

    def of(index: int) -> np.ndarray:
        if index not in pixels:
            pixels[index] = _rgb(shots[index])
        return pixels[index]

    found: list[Finding] = []
    for index, shot in enumerate(shots):
        found += _check(shot, review_type, lambda index=index: of(index))
    if review_type == "email":
        labels = {shot.label: i for i, shot in enumerate(shots) if not shot.failed}
        if "light" in labels and "dark" in labels:
            light, dark = labels["light"], labels["dark"]
            found += rules.dark_mode(shots[light], shots[dark], of(light), of(dark))
    order = {shot.label: i for i, shot in enumerate(shots)}
    found.sort(key=lambda f: (order.get(f.label, 0), _SEVERITY_ORDER[f.severity]))
    return capped(deduplicated(found))


def check_shot(shot: Shot, review_type: ReviewType) -> list[Finding]:
    """Findings for one shot on its own (no light/dark comparison). Raises as
    second_opinion."""
    return second_opinion([shot], review_type)


def _check(shot: Shot, review_type: ReviewType, pixels: object) -> list[Finding]:
    if shot.failed:
        return []
    found: list[Finding] = []
    if shot.boxes:
        assert callable(pixels)
        found += rules.contrast(shot, pixels())
        found += rules.text_size(shot)
        found += rules.tap_targets(shot)
        if review_type == "website":
            found += rules.above_the_fold(shot)
        if review_type == "presentation":
            found += rules.slide_density(shot)
    if review_type == "email":
        found += rules.email_width(shot)
    found += rules.accessibility(shot)
    return found


def _rgb(shot: Shot) -> np.ndarray:
    pixels = decode(shot.png, name=f"the {shot.label} shot")
    if pixels.shape[2] == 4:
        # Transparent parts are shown on white, as a review shows them.
        alpha = pixels[..., 3:4].astype(np.uint16)
        blended = (pixels[..., :3].astype(np.uint16) * alpha + 255 * (255 - alpha)) // 255
        return blended.astype(np.uint8)
    return pixels


def _check_type(review_type: str) -> None:
    if review_type not in REVIEW_TYPES:
        raise InvalidInput(f"review type {review_type!r} is not one of {', '.join(REVIEW_TYPES)}")
