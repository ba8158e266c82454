"""A static build served from loopback for the time of a replay, with the rewrite rules of a
single-page app.

How a path is answered, first match wins: the build's own rewrite rules (``source`` a path
pattern where ``*`` matches anything, ``destination`` a file of the build); the file itself;
``index.html`` of a folder; ``path.html`` (clean URLs); and for a path whose last segment has
no dot (an app route such as ``/items/42``), the build's ``/index.html``. Anything else is 404.
Nothing outside the build's folder is ever read.
"""

from __future__ import annotations

import mimetypes
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

from viewfinder.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class Rewrite:
    """``source``: a path pattern starting with ``/`` (``*`` matches anything, slashes
    included); ``destination``: the path of the build's file that answers it."""

    source: str
    destination: str

    def matches(self, path: str) -> bool:
        pattern = "".join(".*" if c == "*" else re.escape(c) for c in self.source)
        return re.fullmatch(pattern, path) is not None


def check_rewrites(rules: Iterable[object]) -> list[Rewrite]:
    """Rewrite rules from JSON ([{source, destination}]). Raises InvalidInput naming the rule."""
    out = []
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict) or set(rule) != {"source", "destination"}:
            raise InvalidInput(
                f"rewrites[{i}] must be an object with exactly `source` and `destination`, "
                'e.g. {"source": "/app/*", "destination": "/app/index.html"}'
            )
        source, destination = rule["source"], rule["destination"]
        for name, value in (("source", source), ("destination", destination)):
            if not isinstance(value, str) or not value.startswith("/") or len(value) > 500:
                raise InvalidInput(f"rewrites[{i}].{name} must be a path starting with /")
        out.append(Rewrite(source, destination))
    if len(out) > 100:
        raise InvalidInput("at most 100 rewrite rules are accepted")
    return out


def resolve(root: Path, path: str, rewrites: Iterable[Rewrite] = ()) -> Path | None:
    """The file of the build that answers ``path`` (no query), or None."""
    root = root.resolve()
    path = unquote(path) or "/"
    for rule in rewrites:
        if rule.matches(path):
            path = rule.destination
            break
    candidates = [path, f"{path.rstrip('/')}/index.html", f"{path.rstrip('/')}.html"]
    if "." not in path.rsplit("/", 1)[-1]:
        candidates.append("/index.html")
    for candidate in candidates:
        target = (root / candidate.lstrip("/")).resolve()
        if target.is_relative_to(root) and target.is_file():
            return target
    return None


class StaticServer:
    """Serves ``root`` on 127.0.0.1 (a free port) while the ``with`` block runs; ``url`` is
    its base URL, without a trailing slash."""

    def __init__(self, root: Path, rewrites: Iterable[Rewrite] = ()) -> None:
        self.root = root
        self.rewrites = tuple(rewrites)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> StaticServer:
        handler = _handler(self.root, self.rewrites)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="viewfinder-static", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)


def _handler(root: Path, rewrites: tuple[Rewrite, ...]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._answer(body=True)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def _answer(self, *, body: bool) -> None:
            target = resolve(root, urlsplit(self.path).path, rewrites)
            if target is None:
                data, media = b"not found\n", "text/plain; charset=utf-8"
                self.send_response(404)
            else:
                data = target.read_bytes()
                media = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                if media.startswith("text/") or media == "application/javascript":
                    media += "; charset=utf-8"
                self.send_response(200)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if body:
                self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # a replay's requests are on its timeline; nothing to log here

    return Handler
