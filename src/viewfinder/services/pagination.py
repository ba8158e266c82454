"""Keyset pagination with opaque, signed cursors: a cursor names the last row seen and the list
it belongs to, so it cannot be forged or replayed against another list."""

from __future__ import annotations

from typing import Any

from viewfinder.errors import InvalidInput
from viewfinder.services.env import Env

DEFAULT_LIMIT = 25
MAX_LIMIT = 100


def page_limit(limit: int | None, *, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be an integer from 1 to {maximum} (got {limit!r})")
    return limit


class Cursor:
    @staticmethod
    def make(env: Env, scope: str, key: list[Any]) -> str:
        return env.signer.sign("cursor", {"s": scope, "k": key})

    @staticmethod
    def read(env: Env, token: str | None, scope: str) -> list[Any] | None:
        """The key a cursor carries, or None for the first page. Raises InvalidInput for a
        cursor that was altered or belongs to another list."""
        if token is None or token == "":
            return None
        value = env.signer.unsign("cursor", token, what="cursor")
        if not isinstance(value, dict) or value.get("s") != scope:
            raise InvalidInput(
                "invalid cursor: it belongs to another list; pass the next_cursor of this list"
            )
        key = value.get("k")
        if not isinstance(key, list):
            raise InvalidInput("invalid cursor")
        return key
