"""What a capture returns and what the second opinion finds: frozen records, JSON-ready.

Coordinates of boxes are CSS pixels from the top-left of the screenshot; a shot's ``scale``
is its image pixels per CSS pixel (2 for the mobile viewport, 1 elsewhere). Areas of findings
are fractions 0-1 of the screenshot, as marks are.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["suggestion", "a11y", "polish"]
ReviewType = Literal["ui", "website", "presentation", "email"]
REVIEW_TYPES: tuple[ReviewType, ...] = ("ui", "website", "presentation", "email")
# Where a shot came from; ``capture_failed`` marks a placeholder that says why.
Origin = Literal["page", "email", "pdf", "image", "capture_failed"]


@dataclass(frozen=True, slots=True)
class Box:
    """One element as laid out: what it is, where it is and how its text is styled.

    ``node`` is the element's number in the DOM snapshot (document order), the same in two
    renderings of one document (light and dark). ``text`` is the element's own text (not its
    children's), and its rectangle is that text's, so that contrast is measured where the
    letters are. ``inline`` marks a link or control inside a line of text, which the target
    size rule exempts, as WCAG exempts disabled controls (``disabled``) from contrast."""

    node: int
    tag: str
    role: str
    name: str
    text: str
    x: float
    y: float
    w: float
    h: float
    font_size: float
    font_weight: int
    color: str
    background: str
    actionable: bool
    inline: bool = False
    image: bool = False
    disabled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ViolationNode:
    """An element an accessibility rule failed on: axe-core's path to it (``target``), a CSS
    selector for it when there is a plain one, its markup, and its box (CSS px) in the shot."""

    target: str
    html: str
    rect: tuple[float, float, float, float] | None
    selector: str | None = None


@dataclass(frozen=True, slots=True)
class Violation:
    """An axe-core rule that failed on the page."""

    rule: str
    impact: str
    help: str
    url: str
    nodes: tuple[ViolationNode, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Shot:
    """One screenshot with what was learnt from the page while it was open.

    ``png`` is the image (``width`` x ``height`` pixels). ``label`` names it among its
    capture's shots: ``desktop``, ``mobile``, ``light``, ``dark``, ``page-1``..``page-5`` or
    ``image-1``... ``dom`` is the DOM snapshot as JSON (None for images); ``boxes`` the laid
    out elements, ``violations`` axe-core's findings (URL and HTML captures). ``blocked``
    lists requests of the page the guard refused, ``notes`` anything else worth knowing
    (axe-core missing, a page cut at the height limit). A placeholder after a failed capture
    has ``origin`` ``capture_failed`` and says why in ``reason`` (and in its pixels)."""

    png: bytes
    width: int
    height: int
    label: str
    origin: Origin
    scale: float = 1.0
    viewport: tuple[int, int] | None = None
    mobile: bool = False
    color_scheme: Literal["light", "dark"] | None = None
    url: str | None = None
    dom: bytes | None = None
    boxes: tuple[Box, ...] = ()
    violations: tuple[Violation, ...] = ()
    blocked: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def failed(self) -> bool:
        return self.origin == "capture_failed"

    def meta(self) -> dict[str, Any]:
        """Everything but the pixels and the DOM, as JSON-ready values (``origin`` is what a
        review calls ``meta.origin``)."""
        return {
            "label": self.label,
            "origin": self.origin,
            "width": self.width,
            "height": self.height,
            "scale": self.scale,
            "viewport": list(self.viewport) if self.viewport else None,
            "mobile": self.mobile,
            "color_scheme": self.color_scheme,
            "url": self.url,
            "reason": self.reason,
            "blocked": list(self.blocked),
            "notes": list(self.notes),
        }

    def boxes_json(self) -> bytes:
        """The shot's meta, boxes and accessibility violations as one JSON document."""
        document = self.meta() | {
            "boxes": [b.to_dict() for b in self.boxes],
            "violations": [v.to_dict() for v in self.violations],
        }
        return json.dumps(document, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class Area:
    """A rectangle as fractions 0-1 of a screenshot's width and height."""

    x: float
    y: float
    w: float
    h: float

    def to_dict(self) -> dict[str, float]:
        return {"x": self.x, "y": self.y, "w": self.w, "h": self.h}


@dataclass(frozen=True, slots=True)
class Finding:
    """A hint for the person: never a verdict. ``rule`` says which check made it
    (``contrast``, ``text-size``, ``tap-target``, ``above-the-fold``, ``email-width``,
    ``dark-mode``, ``slide-density``, or ``axe:<rule>``), ``label`` which shot it is on, and
    ``area`` where (None when it concerns the whole shot)."""

    severity: Severity
    body: str
    area: Area | None
    label: str
    rule: str
    source: Literal["checklist", "axe"] = "checklist"
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "body": self.body,
            "area": self.area.to_dict() if self.area else None,
            "label": self.label,
            "rule": self.rule,
            "source": self.source,
            **({"extra": self.extra} if self.extra else {}),
        }
