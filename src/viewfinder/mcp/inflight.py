"""Answers owed over stdio are sent before the server stops.

An agent (or a script piping requests) may close stdin right after its last request. The SDK
treats end of input as the end of the connection and cancels what is still running, so that
answer was lost. These wrappers sit between the stdio transport and the server: the read side
reports end of input only once every request read has been answered (or a bound has passed).
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any, Generic, TypeVar

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

T = TypeVar("T")
log = logging.getLogger("viewfinder.mcp")
DRAIN_SECONDS = 300.0  # the longest a tool waits for anything (a compare waits 30 s)


class Owed:
    """The ids of requests read and not yet answered."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.changed = anyio.Event()

    def read(self, item: object) -> None:
        if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCRequest):
            self.ids.add(item.message.id)

    def sent(self, item: object) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.ids.discard(message.id)
            self.changed.set()
            self.changed = anyio.Event()

    async def settled(self, seconds: float) -> None:
        with anyio.move_on_after(seconds) as scope:
            while self.ids:
                await self.changed.wait()
        if scope.cancelled_caught:
            unanswered = len(self.ids)
            log.warning("stdin closed; %d request(s) unanswered after %ss", unanswered, seconds)


class _Wrapped(Generic[T]):
    def __init__(self, inner: Any, owed: Owed) -> None:
        self._inner = inner
        self._owed = owed

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class DrainingReader(_Wrapped[T]):
    """Yields what the transport read; at its end, first waits for the owed answers."""

    def __init__(self, inner: Any, owed: Owed, seconds: float = DRAIN_SECONDS) -> None:
        super().__init__(inner, owed)
        self._seconds = seconds

    async def receive(self) -> T:
        try:
            item: T = await self._inner.receive()
        except anyio.EndOfStream:
            await self._owed.settled(self._seconds)
            raise
        self._owed.read(item)
        return item

    def __aiter__(self) -> DrainingReader[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class CountingWriter(_Wrapped[T]):
    """Sends on, noting each answer."""

    async def send(self, item: T, /) -> None:
        await self._inner.send(item)
        self._owed.sent(item)
