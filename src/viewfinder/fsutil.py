"""Small filesystem helpers shared by the front doors."""

from __future__ import annotations

import os
from pathlib import Path

# The temporary file is created as open() creates files (0666 less the umask), so the file
# written gets the permissions any tool's output would. Named without tempfile, whose imports
# (random, shutil and the compression modules) cost `viewfinder diff` 4 ms of its start.
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file so that readers see either the old content or all of the new one."""
    path = Path(path)
    while True:
        tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, _FLAGS, 0o666)
            break
        except FileExistsError:
            continue  # another writer's name, by a chance of one in 2**48
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
