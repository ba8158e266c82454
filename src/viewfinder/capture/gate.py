"""The gate: a forward proxy on 127.0.0.1 that every request of a captured page goes through.

Routing requests inside the browser is not enough to keep a page away from private
addresses: Chromium follows redirects without asking the route handler again, resolves
names itself (so a second DNS answer can differ from the one that was checked), and opens
WebSockets outside routing. So each capture's browser context is given this gate as its
proxy (loopback included: Playwright sends it through the proxy too). For every connection
the browser asks for (``CONNECT host:port`` for https and WebSockets, an absolute-form request
for plain http, each redirect hop a new one) the gate asks the guard, connects to the
addresses the guard checked, and relays the bytes. A refused request answers 403 with the
reason (header ``X-Viewfinder-Refused``) and is recorded. The bytes that come back are
counted; past the capture's limit the gate stops relaying and refuses everything else.

Plain http connections carry one request each (``Connection: close`` both ways), so a
connection the guard opened for one host is never reused for another.
"""

from __future__ import annotations

import selectors
import socket
import threading
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

from viewfinder.capture.guard import Guard
from viewfinder.errors import AddressRefused, CaptureFailed

REFUSED_HEADER = "X-Viewfinder-Refused"
_HEAD_MAX = 64 * 1024
_CHUNK = 64 * 1024
_HOP_BY_HOP = (b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request the gate did not carry: ``kind`` is ``refused`` (the guard said no),
    ``unreachable`` (the host did not resolve or answer) or ``limit`` (over the byte limit)."""

    host: str
    port: int
    kind: str
    reason: str


class Gate:
    """One capture's proxy; ``server`` is its address. A gate made before its capture (for a
    browser context made in advance) refuses everything until ``arm`` gives it the guard and
    the limits."""

    def __init__(
        self, guard: Guard | None = None, *, max_bytes: int = 0, timeout: float = 30.0
    ) -> None:
        self._guard = guard
        self._max_bytes = max_bytes
        self._timeout = timeout
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        # Checked addresses by (host, port), for the gate's one capture: a page asks for the
        # same few hosts many times, and the same answer each time is what the guard checked.
        self._checked: dict[tuple[str, int], tuple[str, ...]] = {}
        self.refusals: list[Refusal] = []
        self.received = 0
        self.over_limit = False
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.server = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._accept, name="capture-gate", daemon=True)
        self._thread.start()

    def arm(self, guard: Guard, *, max_bytes: int, timeout: float) -> None:
        """Open the gate to what ``guard`` allows, up to ``max_bytes``."""
        with self._lock:
            self._guard, self._max_bytes, self._timeout = guard, max_bytes, timeout
            self._checked.clear()

    def __enter__(self) -> Gate:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop accepting and cut every connection still open."""
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() below
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            still_open = list(self._open)
        for sock in still_open:
            _close(sock)
        self._thread.join(2)

    def refusal_for(self, host: str, port: int) -> Refusal | None:
        """What the gate refused of host:port, if it refused it."""
        host = host.lower().strip("[]")
        with self._lock:
            for refusal in self.refusals:
                if refusal.host == host and refusal.port == port:
                    return refusal
            return None

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        self._track(client)
        try:
            client.settimeout(self._timeout)
            head, rest = _read_head(client)
            if head is None:
                return
            lines = head.split(b"\r\n")
            parts = lines[0].split(b" ")
            if len(parts) != 3:
                client.sendall(_answer(400, "not an HTTP request"))
                return
            method, target = parts[0].decode("latin-1"), parts[1].decode("latin-1")
            tunnel = method == "CONNECT"
            where = _where(target, tunnel)
            if where is None:
                client.sendall(_answer(400, "the gate carries absolute http URLs and CONNECT"))
                return
            host, port, path = where
            upstream = self._open_upstream(client, host, port)
            if upstream is None:
                return
            if tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                upstream.sendall(_origin_request(method, path, lines[1:]) + rest)
            self._relay(client, upstream, rewrite=not tunnel)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    with self._lock:
                        self._open.discard(sock)
                    _close(sock)

    def _open_upstream(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        """A connection to a checked address of host:port, or None after answering why not."""
        if self.over_limit:
            self._refuse(client, host, port, "limit", self.limit_reason())
            return None
        if self._guard is None:
            self._refuse(client, host, port, "refused", "the capture has not started")
            return None
        try:
            addresses = self._checked.get((host, port)) or self._guard.resolve(host, port)
        except AddressRefused as exc:
            self._refuse(client, host, port, "refused", exc.message)
            return None
        except CaptureFailed as exc:
            self._refuse(client, host, port, "unreachable", exc.message, status=502)
            return None
        self._checked[(host, port)] = addresses
        failure = "no address answered"
        for address in addresses:
            try:
                upstream = socket.create_connection((address, port), min(self._timeout, 15))
            except OSError as exc:
                failure = f"{address} port {port}: {exc.strerror or exc}"
                continue
            self._track(upstream)
            upstream.settimeout(self._timeout)
            return upstream
        self._refuse(client, host, port, "unreachable", f"cannot connect to {host}: {failure}", 502)
        return None

    def _refuse(
        self, client: socket.socket, host: str, port: int, kind: str, reason: str, status: int = 403
    ) -> None:
        with self._lock:
            self.refusals.append(Refusal(host.lower().strip("[]"), port, kind, reason))
        client.sendall(_answer(status, reason))

    def limit_reason(self) -> str:
        return (
            f"the page loaded more than {self._max_bytes / 1048576:.1f} MB "
            "(VIEWFINDER_CAPTURE_MAX_BYTES)"
        )

    def _count(self, size: int) -> bool:
        """Count bytes that came back; False once the capture is over its limit."""
        with self._lock:
            self.received += size
            if self.received > self._max_bytes:
                self.over_limit = True
            return not self.over_limit

    def _relay(self, client: socket.socket, upstream: socket.socket, *, rewrite: bool) -> None:
        """Carry bytes both ways until either side closes or stays silent past the timeout.
        With ``rewrite``, the response head is changed to close the connection after it."""
        head: bytearray | None = bytearray() if rewrite else None
        with selectors.DefaultSelector() as selector:
            selector.register(client, selectors.EVENT_READ, upstream)
            selector.register(upstream, selectors.EVENT_READ, client)
            while True:
                events = selector.select(self._timeout)
                if not events:
                    return
                for key, _ in events:
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = source.recv(_CHUNK)
                    if not data:
                        return
                    if source is upstream:
                        if not self._count(len(data)):
                            return
                        if head is not None:
                            head += data
                            end = head.find(b"\r\n\r\n")
                            if end < 0:
                                if len(head) > _HEAD_MAX:
                                    return
                                continue
                            data = _closing(bytes(head[: end + 4])) + bytes(head[end + 4 :])
                            head = None
                    key.data.sendall(data)


def _read_head(sock: socket.socket) -> tuple[bytes | None, bytes]:
    """The request head (without its blank line) and whatever came after it."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        data = sock.recv(_CHUNK)
        if not data or len(buffer) > _HEAD_MAX:
            return None, b""
        buffer += data
    head, _, rest = buffer.partition(b"\r\n\r\n")
    return head, rest


def _where(target: str, tunnel: bool) -> tuple[str, int, str] | None:
    """(host, port, path) of a CONNECT authority or an absolute http URL."""
    try:
        if tunnel:
            parts = urlsplit(f"//{target}")
            return (parts.hostname or "", parts.port or 443, "") if parts.hostname else None
        parts = urlsplit(target)
        if parts.scheme.lower() not in ("http", "ws") or not parts.hostname:
            return None
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return parts.hostname, parts.port or 80, path
    except ValueError:
        return None


def _origin_request(method: str, path: str, header_lines: list[bytes]) -> bytes:
    kept = [
        line for line in header_lines if line.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP
    ]
    upgrade = any(line.split(b":", 1)[0].strip().lower() == b"upgrade" for line in kept)
    kept.append(b"Connection: Upgrade" if upgrade else b"Connection: close")
    first = f"{method} {path} HTTP/1.1".encode("latin-1")
    return b"\r\n".join([first, *kept]) + b"\r\n\r\n"


def _closing(head: bytes) -> bytes:
    """A response head that closes the connection after its body (a 101 switches protocols
    and is left alone)."""
    lines = head[:-4].split(b"\r\n")
    status = lines[0].split(b" ")
    if len(status) > 1 and status[1] == b"101":
        return head
    kept = [line for line in lines[1:] if line.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP]
    return b"\r\n".join([lines[0], *kept, b"Connection: close"]) + b"\r\n\r\n"


def _answer(status: int, reason: str) -> bytes:
    words = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    line = " ".join(reason.split()).encode("ascii", "replace")
    body = line + b"\n"
    return (
        f"HTTP/1.1 {status} {words}\r\nContent-Type: text/plain; charset=utf-8\r\n".encode()
        + REFUSED_HEADER.encode()
        + b": "
        + line
        + f"\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
