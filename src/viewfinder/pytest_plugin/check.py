"""The ``viewfinder_check`` callable, and checks against baselines kept in the repository."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from viewfinder.fsutil import write_atomic
from viewfinder.pytest_plugin.shots import Shot, take

if TYPE_CHECKING:
    from viewfinder.pytest_plugin.remote import RemoteBuild

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@ -]*(/[A-Za-z0-9][A-Za-z0-9._@ -]*)*$")


def check_name(name: str) -> str:
    """A screenshot's name, usable as a path under the baselines folder and as a story name."""
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > 200:
        raise ValueError(
            f"screenshot name {name!r}: use letters, digits, '.', '_', '-', '@' and spaces, "
            "with '/' between folders (e.g. 'checkout/empty-cart@mobile')"
        )
    return name


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all: a baseline is never left half written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


@dataclass(frozen=True)
class LocalBaselines:
    baselines: Path
    output: Path
    update: bool

    def check(
        self, node: pytest.Item, name: str, shot: Shot, threshold: float, max_diff_ratio: float
    ) -> None:
        from viewfinder import imaging

        test_file = Path(str(node.path)).stem
        baseline = self.baselines / test_file / f"{name}.png"
        if self.update:
            _write(baseline, shot.png)
            return
        if not baseline.exists():
            _write(baseline, shot.png)
            pytest.fail(
                f"no baseline for screenshot {name!r}: this run's screenshot is now {baseline}; "
                "look at it and commit it (or run pytest --viewfinder-update to write every "
                "baseline)",
                pytrace=False,
            )
        result = imaging.compare(
            baseline.read_bytes(),
            shot.png,
            threshold=threshold,
            masks=shot.masks,
            max_diff_ratio=max_diff_ratio,
            ignore_noise=True,
            scale=shot.scale,
        )
        if not result.changed:
            return
        where = self.output / re.sub(r"[^A-Za-z0-9._-]+", "_", node.nodeid)
        actual, diff = where / f"{name}.actual.png", where / f"{name}.diff.png"
        _write(actual, shot.png)
        if result.diff_png is not None:
            _write(diff, result.diff_png)
        regions = len(result.regions)
        size = ""
        if result.base_size != result.candidate_size:
            b, c = result.base_size, result.candidate_size
            size = f"; its size went from {b.width}x{b.height} to {c.width}x{c.height}"
        pytest.fail(
            f"screenshot {name!r} differs from its baseline: {result.diff_ratio:.4%} of pixels "
            f"({result.changed_pixels:,} of {result.compared_pixels:,}) in {regions} "
            f"region{'s' if regions != 1 else ''}{size}. {result.analysis.summary}\n"
            f"  baseline: {baseline}\n  actual:   {actual}\n  diff:     {diff}\n"
            "If the change is intended, run pytest --viewfinder-update and commit the baseline.",
            pytrace=False,
        )


class Checker:
    """What the fixture gives a test: call it with a page or locator and a name."""

    def __init__(
        self, node: pytest.Item, *, local: LocalBaselines | None, remote: RemoteBuild | None
    ) -> None:
        self._node = node
        self._local = local
        self._remote = remote
        self._names: set[str] = set()

    def __call__(
        self,
        target: Any,
        name: str,
        *,
        masks: Sequence[Any] = (),
        full_page: bool = False,
        threshold: float = 0.1,
        max_diff_ratio: float = 0.0,
    ) -> None:
        name = check_name(name)
        if name in self._names:
            raise ValueError(f"screenshot {name!r} was checked twice in this test: name each one")
        self._names.add(name)
        shot = take(target, masks, full_page=full_page, paint=self._remote is not None)
        if self._remote is not None:
            self._remote.add(name, shot)
        else:
            assert self._local is not None
            self._local.check(self._node, name, shot, threshold, max_diff_ratio)
