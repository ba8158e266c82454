"""A TCP link on loopback that a test can cut and restore: a database behind it goes away and
comes back as it does in a restart, a failover or a network fault (connections refused, open
ones dropped), without touching the database server the other tests share."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Iterator


class Link:
    """Forwards 127.0.0.1:``port`` to ``target``. ``cut`` refuses new connections and drops the
    open ones; ``restore`` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            dropped, self._open = self._open, []
        if listener is not None:
            # shutdown wakes the accept() waiting on it; close alone would not.
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for sock in dropped:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    server.close()
                    return
                self._open += [client, server]
            threading.Thread(target=pipe, args=(client, server), daemon=True).start()


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Relay bytes both ways until either side closes, then close both."""
    a.settimeout(None)
    b.settimeout(None)
    sel = selectors.DefaultSelector()
    sel.register(a, selectors.EVENT_READ, b)
    sel.register(b, selectors.EVENT_READ, a)
    try:
        while True:
            for key, _ in sel.select():
                data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                if not data:
                    return
                key.data.sendall(data)
    except OSError:
        return
    finally:
        a.close()
        b.close()


@contextlib.contextmanager
def link_to(target: tuple[str, int]) -> Iterator[Link]:
    link = Link(target)
    try:
        yield link
    finally:
        link.cut()
