"""Process-wide tuning that every Viewfinder process applies at start."""

from __future__ import annotations

import ctypes

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Screenshot buffers (decoded images, label planes, diff rows) are up to a few tens of MB and
# are allocated and freed for every comparison. By default glibc maps each one fresh from the
# kernel and unmaps it on free, so every comparison pays a page fault per 4 KiB touched: about
# a third of the time on a 1280x8000 pair. Keeping buffers under 64 MiB on the heap, and up to
# 256 MiB of freed heap before returning it, lets the next comparison reuse the same pages.
MMAP_THRESHOLD = 64 << 20
TRIM_THRESHOLD = 256 << 20


def tune_allocator() -> bool:
    """Make glibc reuse freed screenshot-sized buffers. Returns False where that is not glibc."""
    try:
        # The interpreter's own symbols include its C library's: no search for libc, which
        # (ctypes.util.find_library runs ldconfig) costs a command-line diff about 50 ms.
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
