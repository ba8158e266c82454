"""Small filesystem helpers shared by the front doors."""

from __future__ import annotations

import os

# The temporary file is created as open() creates files (0666 less the umask), so the file
# written gets the permissions any tool's output would. Named here rather than by tempfile,
# and with os.path rather than pathlib, whose imports would cost `viewfinder diff` 9 ms of its
# start.
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write a file so that readers see either the old content or all of the new one."""
    folder, name = os.path.split(os.fspath(path))
    while True:
        tmp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
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
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
