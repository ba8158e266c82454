"""write_atomic: all of the new content or none of it, with the permissions any tool's output
gets, and nothing left beside it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from viewfinder.fsutil import write_atomic


def test_a_file_is_written_whole_with_the_permissions_open_gives(tmp_path: Path) -> None:
    path = tmp_path / "diff.png"
    previous = os.umask(0o022)
    try:
        write_atomic(path, b"first")
        write_atomic(path, b"second, longer")
    finally:
        os.umask(previous)
    assert path.read_bytes() == b"second, longer"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["diff.png"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "baseline.png"
    write_atomic(path, b"old")

    def no_room(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_room)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.png"]


def test_a_missing_folder_raises_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "such.png", b"data")
    assert list(tmp_path.iterdir()) == []
