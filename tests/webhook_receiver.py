"""A real webhook receiver on 127.0.0.1 for the checkup tests: it checks each delivery's
signature with the secret it is told, records what arrived, and answers the statuses it is
given in turn (204 once they run out)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes
    signed: bool

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str
    port: int
    secret: str = ""
    answers: list[int] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)


@contextlib.contextmanager
def receiving() -> Iterator[Receiver]:
    receiver = Receiver(url="", port=0)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            expected = (
                "sha256=" + hmac.new(receiver.secret.encode(), body, hashlib.sha256).hexdigest()
            )
            given = self.headers.get("X-Viewfinder-Signature", "")
            receiver.deliveries.append(
                Delivery(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    hmac.compare_digest(given, expected),
                )
            )
            status = receiver.answers.pop(0) if receiver.answers else 204
            self.send_response(status)
            if status in (301, 302, 307, 308):
                self.send_header("Location", f"{receiver.url}/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            receiver.arrived.set()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    receiver.url = f"http://127.0.0.1:{receiver.port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
