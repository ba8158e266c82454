"""Identifiers: a short type prefix and a time-ordered, URL-safe random part (ULID layout).

Sorting ids sorts by creation time, so "newest first" is an index scan, and the prefix tells a
person at a glance what an id names (`bld_`, `dif_` ...).
"""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case
_RANDOM_MAX = (1 << 80) - 1
# The last id's time and random part: ids made in one millisecond by one process still sort in
# the order they were made (the random part counts up from the first one's, as ULIDs do).
_last = [0, 0]
_lock = threading.Lock()


def new_id(prefix: str) -> str:
    """`prefix_` + 26 characters: 48 bits of milliseconds, then 80 random bits (counting up
    within a millisecond)."""
    now = int(time.time() * 1000)
    with _lock:
        if now <= _last[0] and _last[1] < _RANDOM_MAX:
            now, random = _last[0], _last[1] + 1
        else:
            random = int.from_bytes(os.urandom(10), "big")
        _last[0], _last[1] = now, random
    value = (now << 80) | random
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"


def well_formed(value: object) -> bool:
    """Whether a value has the shape of an id (any prefix): what no id can be needs no lookup,
    and a NUL byte or other junk never reaches the database."""
    return (
        isinstance(value, str)
        and len(value) == 30
        and value[3] == "_"
        and value[:3].isascii()
        and value[:3].isalpha()
        and value[:3].islower()
        and all(c in _ALPHABET for c in value[4:])
    )
