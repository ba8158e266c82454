"""Content-addressed blob storage: bytes are stored once under their sha256.

Writes are atomic (a temporary file in the same folder, fsync, rename, fsync of the folder): a
crash leaves either no blob or the whole blob, never a torn one. An S3-compatible store can take
the same interface.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Protocol

from viewfinder.errors import NotFound


class BlobStore(Protocol):
    def put(self, data: bytes, sha256: str | None = None) -> str: ...
    def get(self, sha256: str) -> bytes: ...
    def exists(self, sha256: str) -> bool: ...


class DiskBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
            raise NotFound(f"no blob {sha256!r}")
        return self.root / sha256[:2] / sha256[2:4] / sha256

    def put(self, data: bytes, sha256: str | None = None) -> str:
        """Store the bytes (once) and return their sha256."""
        sha256 = sha256 or hashlib.sha256(data).hexdigest()
        target = self.path(sha256)
        if target.exists():
            return sha256
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return sha256

    def get(self, sha256: str) -> bytes:
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"blob {sha256} is missing from {self.root}") from None

    def exists(self, sha256: str) -> bool:
        return self.path(sha256).exists()
