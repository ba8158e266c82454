"""Downloads through the guard: images and PDFs given as URLs, and webhook deliveries.

Each connection goes to an address the guard checked at that moment (a custom network backend
for httpcore resolves through ``Guard.resolve`` and connects to what it returned), so a name
that resolves to a public address once and to a private one the next time cannot slip past
the check. Redirects are followed by hand, each hop checked as a new URL. Every download has a
deadline for the whole exchange and a byte limit counted as the body arrives.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import httpcore

from viewfinder.capture.guard import Guard
from viewfinder.errors import CaptureFailed

USER_AGENT = "Viewfinder (+capture)"
_REDIRECTS = (301, 302, 303, 307, 308)


class _CheckedBackend(httpcore.NetworkBackend):
    """Connects only to addresses the guard returned for the host, at connect time."""

    def __init__(self, guard: Guard) -> None:
        self._guard = guard
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        failure: Exception | None = None
        for address in self._guard.resolve(host, port):
            try:
                return self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                failure = exc
        assert failure is not None  # resolve never answers an empty list
        raise failure

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass(frozen=True)
class Fetched:
    """A response: the URL it finally came from (after redirects), status, headers (names in
    lower case) and body."""

    url: str
    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""


def fetch(
    url: str,
    *,
    guard: Guard,
    timeout: float,
    max_bytes: int,
    what: str = "the file",
    method: str = "GET",
    content: bytes = b"",
    headers: Mapping[str, str] | None = None,
    https_only: bool = False,
    follow_redirects: bool = True,
    max_redirects: int = 5,
    fail_on_status: bool = True,
) -> Fetched:
    """Fetch a URL through the guard. Raises AddressRefused (a hop is not allowed),
    InvalidInput (not a URL), CaptureFailed (unreachable, timed out, over max_bytes, too many
    redirects, or an error status when ``fail_on_status``)."""
    deadline = time.monotonic() + timeout
    sent = {"user-agent": USER_AGENT, **{k.lower(): v for k, v in (headers or {}).items()}}
    for _hop in range(max_redirects + 1):
        target = guard.check_url(url, what=what, https_only=https_only)
        answer = _exchange(
            target.url, guard, method, content, sent, (deadline, timeout), max_bytes, what
        )
        location = answer.headers.get("location")
        if follow_redirects and answer.status in _REDIRECTS and location:
            url = urljoin(target.url, location)
            if answer.status == 303 or (answer.status in (301, 302) and method == "POST"):
                method, content = "GET", b""
            continue
        if fail_on_status and answer.status >= 400:
            raise CaptureFailed(
                f"{what} at {target.url} answered HTTP {answer.status}", url=target.url
            )
        return answer
    raise CaptureFailed(f"{what} redirected more than {max_redirects} times; stopped at {url}")


def _exchange(
    url: str,
    guard: Guard,
    method: str,
    content: bytes,
    headers: Mapping[str, str],
    limit: tuple[float, float],
    max_bytes: int,
    what: str,
) -> Fetched:
    deadline, timeout = limit

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise httpcore.ReadTimeout("deadline passed")
        return remaining

    pool = httpcore.ConnectionPool(
        ssl_context=ssl.create_default_context(), network_backend=_CheckedBackend(guard)
    )
    try:
        with pool:
            wait = left()
            timeouts = {"connect": wait, "read": wait, "write": wait, "pool": wait}
            with pool.stream(
                method,
                url,
                headers=list(headers.items()),
                content=content or None,
                extensions={"timeout": timeouts},
            ) as response:
                received = {
                    k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers
                }
                declared = received.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise CaptureFailed(_too_big(what, url, max_bytes), url=url)
                body = bytearray()
                for chunk in response.iter_stream():
                    body += chunk
                    if len(body) > max_bytes:
                        raise CaptureFailed(_too_big(what, url, max_bytes), url=url)
                    left()
                return Fetched(url, response.status, received, bytes(body))
    except httpcore.TimeoutException:
        raise CaptureFailed(
            f"{what} at {url} did not arrive within {timeout:g} s; try again, or raise "
            "VIEWFINDER_CAPTURE_TIMEOUT_SECONDS",
            url=url,
        ) from None
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
        raise CaptureFailed(f"{what} at {url} could not be fetched: {exc}", url=url) from None


def _too_big(what: str, url: str, limit: int) -> str:
    return (
        f"{what} at {url} is larger than the {limit / 1048576:.1f} MB limit "
        "(VIEWFINDER_CAPTURE_MAX_BYTES)"
    )
