"""The limits and the allow-list one capture works under.

The engine does not read settings itself (it knows nothing of the application around it);
callers build a Policy from theirs with ``Policy.from_settings(settings)``, which accepts any
object with the ``VIEWFINDER_*`` capture fields (the application's Settings has them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from viewfinder.capture.guard import Guard
from viewfinder.imaging import DEFAULT_LIMITS, Limits

CHROMIUM = "/usr/bin/chromium"


class CaptureSettings(Protocol):
    """The settings a Policy is made from (viewfinder.settings.Settings has them all)."""

    @property
    def chromium(self) -> str: ...
    @property
    def capture_allow(self) -> str | None: ...
    @property
    def capture_timeout_seconds(self) -> float: ...
    @property
    def capture_max_bytes(self) -> int: ...
    @property
    def capture_max_height(self) -> int: ...
    @property
    def axe_path(self) -> Path | None: ...
    @property
    def max_image_bytes(self) -> int: ...
    @property
    def max_image_pixels(self) -> int: ...


@dataclass(frozen=True)
class Policy:
    """``guard`` decides which addresses may be reached; ``timeout`` (seconds) bounds a whole
    capture and ``max_bytes`` what it downloads; ``max_height`` (CSS px) cuts full-page
    captures; ``limits`` are the image limits screenshots and given images are held to;
    ``chromium`` is the browser binary, ``axe_path`` an axe.min.js to use instead of the
    installed one."""

    guard: Guard = field(default_factory=Guard)
    timeout: float = 30.0
    max_bytes: int = 50 * 1024 * 1024
    max_height: int = 16384
    limits: Limits = DEFAULT_LIMITS
    chromium: str = CHROMIUM
    axe_path: Path | None = None

    @classmethod
    def from_settings(cls, settings: CaptureSettings, *, allow: Iterable[str] = ()) -> Policy:
        """The policy the settings describe, with ``allow`` added to the allow-list.
        Raises InvalidInput for an allow-list entry it cannot read."""
        guard = Guard.from_text(settings.capture_allow).with_allowed(allow)
        return cls(
            guard=guard,
            timeout=settings.capture_timeout_seconds,
            max_bytes=settings.capture_max_bytes,
            max_height=settings.capture_max_height,
            limits=Limits(settings.max_image_bytes, settings.max_image_pixels),
            chromium=settings.chromium,
            axe_path=settings.axe_path,
        )

    def allowing(self, *entries: str) -> Policy:
        """This policy with more hosts on its allow-list."""
        return replace(self, guard=self.guard.with_allowed(entries))
