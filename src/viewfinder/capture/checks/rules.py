"""The checklist: each rule looks at one shot (its pixels and its boxes) and says what it
found, worst first, with the area it is about. Thresholds are WCAG 2.2's where WCAG has one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np

from viewfinder.capture.checks.areas import Rect, area, clusters, union
from viewfinder.capture.checks.pixels import MIN_INK, Measure, crop, hex_colour, measure
from viewfinder.capture.model import Box, Finding, Shot

T = TypeVar("T", bound=tuple[Any, ...])

# WCAG 1.4.3: 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold).
BODY_RATIO, LARGE_RATIO = 4.5, 3.0
SMALL_TEXT = 12.0  # px
TARGET = 24.0  # CSS px, WCAG 2.5.8
EMAIL_WIDTH = 640.0  # CSS px a mail client shows at most
SLIDE_COVERAGE, SLIDE_WORDS = 0.30, 80
# Dark mode loses a text (or a logo) readable in light mode when it falls under these.
LOST_TEXT, LOST_IMAGE, READABLE = 2.0, 1.5, 3.0
# Below 12 px at scale 1, anti-aliasing leaves few fully covered pixels; allow for it.
_SMALL_TEXT_ALLOWANCE = 0.96


def _rect(box: Box) -> Rect:
    return (box.x, box.y, box.w, box.h)


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f"“{text[: limit - 1]}…”" if len(text) > limit else f"“{text}”"


def _inside(box: Box, shot: Shot) -> bool:
    """Whether the box shows whole in the shot: a text cut by the edge of the screenshot
    cannot be measured (what is left of it may be its box's border)."""
    return (
        box.x >= 0
        and box.y >= 0
        and (box.x + box.w) * shot.scale <= shot.width + 0.5
        and (box.y + box.h) * shot.scale <= shot.height + 0.5
    )


def large(box: Box) -> bool:
    return box.font_size >= 24 or (box.font_size >= 18.66 and box.font_weight >= 700)


def contrast(shot: Shot, pixels: np.ndarray) -> list[Finding]:
    """Text whose measured contrast with what is behind it is under WCAG AA."""
    low: list[tuple[Box, Measure, float]] = []
    for box in shot.boxes:
        if not box.text or box.disabled or not _inside(box, shot):
            continue
        found = measure(crop(pixels, _rect(box), shot.scale))
        if found is None or found.ink_pixels < MIN_INK:
            continue
        required = LARGE_RATIO if large(box) else BODY_RATIO
        allowed = required
        if shot.scale < 2 and box.font_size < SMALL_TEXT:
            allowed *= _SMALL_TEXT_ALLOWANCE
        if found.ratio < allowed - 0.005:
            low.append((box, found, required))
    findings = []
    for members in _grouped(low, key=lambda item: (item[1].ink, item[1].background, item[2])):
        box, found, required = min(members, key=lambda item: item[1].ratio)
        where = area(shot, union(_rect(m[0]) for m in members))
        size = "large text" if required == LARGE_RATIO else "text of this size"
        more = f" and {len(members) - 1} more text nearby" if len(members) > 1 else ""
        findings.append(
            Finding(
                severity="a11y",
                body=f"Low contrast: {_quote(box.text)}{more} is {found.ratio:.1f}:1 against its "
                f"background ({hex_colour(found.ink)} on {hex_colour(found.background)}, "
                f"measured from the screenshot); WCAG AA asks at least {required:g}:1 for {size}.",
                area=where,
                label=shot.label,
                rule="contrast",
                extra={"ratio": round(found.ratio, 2), "required": required},
            )
        )
    return _worst_first(findings, "ratio")


def text_size(shot: Shot) -> list[Finding]:
    """Text set under 12 px."""
    small = [(b, b.font_size) for b in shot.boxes if b.text and 0 < b.font_size < SMALL_TEXT]
    findings = []
    for members in _grouped(small, key=lambda item: round(item[1], 1)):
        box = members[0][0]
        more = f" and {len(members) - 1} more text nearby" if len(members) > 1 else ""
        size = round(box.font_size, 1)
        findings.append(
            Finding(
                severity="a11y",
                body=f"Small text: {_quote(box.text)}{more} is set at {size:g} px, hard to read; "
                "use at least 12 px (16 px for body text).",
                area=area(shot, union(_rect(m[0]) for m in members)),
                label=shot.label,
                rule="text-size",
                extra={"font_size": box.font_size},
            )
        )
    return _worst_first(findings, "font_size")


def tap_targets(shot: Shot) -> list[Finding]:
    """On a phone, controls under 24x24 CSS px without room around them (WCAG 2.5.8: links
    inside a line of text are exempt, as is a small target 24 px clear of any other)."""
    if not shot.mobile:
        return []
    # Visually hidden controls (1 px, clipped) are for screen readers, not fingers.
    targets = [b for b in shot.boxes if b.actionable and not b.disabled and b.w > 2 and b.h > 2]
    small = [b for b in targets if (b.w < TARGET or b.h < TARGET) and not b.inline]
    crowded = [b for b in small if _crowded(b, targets, small)]
    findings = []
    for members in _grouped([(b,) for b in crowded], key=lambda _: 0):
        box = members[0][0]
        what = _quote(box.name or box.text or box.tag, 40)
        more = f" (and {len(members) - 1} more next to it)" if len(members) > 1 else ""
        findings.append(
            Finding(
                severity="a11y",
                body=f"Small tap target: {what}{more} is {box.w:.0f}x{box.h:.0f} px; on a phone "
                "make it at least 24x24 CSS px (44x44 is comfortable) or leave room around it.",
                area=area(shot, union(_rect(m[0]) for m in members)),
                label=shot.label,
                rule="tap-target",
                extra={"width": round(box.w, 1), "height": round(box.h, 1)},
            )
        )
    return findings


def _crowded(box: Box, targets: list[Box], small: list[Box]) -> bool:
    """Whether a 24 px circle on the target's centre touches another target or the circle
    of another small target (WCAG 2.5.8's spacing exception fails)."""
    cx, cy = box.x + box.w / 2, box.y + box.h / 2
    radius = TARGET / 2
    for other in targets:
        if other is box:
            continue
        nearest_x = min(max(cx, other.x), other.x + other.w)
        nearest_y = min(max(cy, other.y), other.y + other.h)
        if (nearest_x - cx) ** 2 + (nearest_y - cy) ** 2 < radius**2:
            return True
        if other in small:
            ox, oy = other.x + other.w / 2, other.y + other.h / 2
            if (ox - cx) ** 2 + (oy - cy) ** 2 < TARGET**2:
                return True
    return False


def above_the_fold(shot: Shot) -> list[Finding]:
    """A website whose first screen has nothing to click or tap."""
    if shot.viewport is None or shot.origin != "page":
        return []
    width, fold = shot.viewport
    for box in shot.boxes:
        if box.actionable and not box.disabled and box.w > 2 and box.h > 2:
            if box.y < fold and box.y + box.h > 0 and box.x < width and box.x + box.w > 0:
                return []
    return [
        Finding(
            severity="suggestion",
            body=f"Nothing above the fold: the first {fold} px of this {shot.label} view have no "
            "link, button or field. Put the main call to action where visitors land.",
            area=area(shot, (0, 0, width, fold)),
            label=shot.label,
            rule="above-the-fold",
        )
    ]


def email_width(shot: Shot) -> list[Finding]:
    """An email laid out wider than mail clients show."""
    if shot.origin != "email" or shot.color_scheme == "dark":
        return []
    width = shot.width / shot.scale
    if width <= EMAIL_WIDTH:
        return []
    wide = [_rect(b) for b in shot.boxes if b.x + b.w > EMAIL_WIDTH]
    rect = (
        union(wide) if wide else (EMAIL_WIDTH, 0.0, width - EMAIL_WIDTH, shot.height / shot.scale)
    )
    return [
        Finding(
            severity="suggestion",
            body=f"The email is {width:.0f} px wide; mail clients show about 600 px (640 at "
            "most), so what is past 640 px is cut off or scrolls sideways. Keep the layout "
            "within 600 px.",
            area=area(shot, rect),
            label=shot.label,
            rule="email-width",
            extra={"width": round(width)},
        )
    ]


def slide_density(shot: Shot) -> list[Finding]:
    """A slide whose text covers too much of it."""
    texts = [b for b in shot.boxes if b.text]
    if not texts:
        return []
    step = 4  # px of the image per cell of the coverage grid
    grid = np.zeros((shot.height // step + 1, shot.width // step + 1), bool)
    for b in texts:
        x0, y0 = int(b.x * shot.scale) // step, int(b.y * shot.scale) // step
        x1 = int((b.x + b.w) * shot.scale) // step + 1
        y1 = int((b.y + b.h) * shot.scale) // step + 1
        grid[max(0, y0) : y1, max(0, x0) : x1] = True
    coverage = float(grid.mean())
    words = sum(len(b.text.split()) for b in texts)
    if coverage <= SLIDE_COVERAGE and words <= SLIDE_WORDS:
        return []
    return [
        Finding(
            severity="polish",
            body=f"Dense slide: text covers {coverage:.0%} of it ({words} words). A slide reads "
            "best as a few short lines; move the detail to speaker notes or split it.",
            area=area(shot, union(_rect(b) for b in texts)),
            label=shot.label,
            rule="slide-density",
            extra={"coverage": round(coverage, 3), "words": words},
        )
    ]


def dark_mode(
    light: Shot, dark: Shot, light_pixels: np.ndarray, dark_pixels: np.ndarray
) -> list[Finding]:
    """Texts and images readable in the light rendering that the dark one loses."""
    counterpart = {b.node: b for b in dark.boxes}
    lost: list[tuple[Box, Measure, Measure]] = []
    for box in light.boxes:
        other = counterpart.get(box.node)
        if other is None or not (box.text or box.image) or not _inside(other, dark):
            continue
        before = measure(crop(light_pixels, _rect(box), light.scale))
        if before is None or before.ratio < READABLE:
            continue
        after = measure(crop(dark_pixels, _rect(other), dark.scale))
        if after is not None and after.ratio < (LOST_TEXT if box.text else LOST_IMAGE):
            lost.append((other, before, after))
    findings = []
    for members in _grouped(lost, key=lambda item: bool(item[0].text)):
        box, before, after = min(members, key=lambda item: item[2].ratio)
        more = f" and {len(members) - 1} more nearby" if len(members) > 1 else ""
        if box.text:
            body = (
                f"Lost in dark mode: {_quote(box.text)}{more} is {after.ratio:.1f}:1 against its "
                f"background in the dark rendering ({before.ratio:.1f}:1 in light). Give it a "
                "dark-mode colour (a prefers-color-scheme rule) or keep its background."
            )
        else:
            body = (
                f"Image lost in dark mode: {_quote(box.name or box.tag, 40)}{more} all but "
                f"vanishes ({after.ratio:.1f}:1 against the dark background, {before.ratio:.1f}:1 "
                "in light). A dark logo on a transparent background needs a light version or "
                "a backdrop."
            )
        findings.append(
            Finding(
                severity="a11y" if box.text else "polish",
                body=body,
                area=area(dark, union(_rect(m[0]) for m in members)),
                label=dark.label,
                rule="dark-mode",
                extra={"ratio": round(after.ratio, 2), "light_ratio": round(before.ratio, 2)},
            )
        )
    return _worst_first(findings, "ratio")


def accessibility(shot: Shot) -> list[Finding]:
    """axe-core's violations, each on its element's box."""
    findings = []
    for violation in shot.violations:
        for node in violation.nodes[:5]:
            html = " ".join(node.html.split())
            html = html if len(html) <= 100 else html[:99] + "…"
            findings.append(
                Finding(
                    severity="a11y",
                    body=f"{violation.help} ({violation.impact}; axe-core {violation.rule}): "
                    f"{html}. See {violation.url}",
                    area=area(shot, node.rect) if node.rect else None,
                    label=shot.label,
                    rule=f"axe:{violation.rule}",
                    source="axe",
                )
            )
    return findings


def _grouped(items: Sequence[T], key: Callable[[T], Hashable]) -> list[list[T]]:
    """Items (tuples whose first member is a Box) grouped by ``key``, then by nearness."""
    by_key: dict[Hashable, list[T]] = {}
    for item in items:
        by_key.setdefault(key(item), []).append(item)
    return [
        [members[i] for i in indices]
        for members in by_key.values()
        for indices in clusters([_rect(m[0]) for m in members])
    ]


def _worst_first(findings: list[Finding], measure_key: str) -> list[Finding]:
    return sorted(findings, key=lambda f: float(f.extra.get(measure_key, 0)))
