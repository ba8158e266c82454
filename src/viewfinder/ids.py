"""Identifiers: a short type prefix and a time-ordered, URL-safe random part (ULID layout).

Sorting ids sorts by creation time, so "newest first" is an index scan, and the prefix tells a
person at a glance what an id names (`bld_`, `dif_` ...).
"""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case


def new_id(prefix: str) -> str:
    """`prefix_` + 26 characters: 48 bits of milliseconds, then 80 random bits."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"
