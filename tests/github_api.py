"""GitHub's REST API as far as Viewfinder uses it (commit statuses; a pull request's comments:
list, create, edit), served on 127.0.0.1 by a real HTTP server that records every call. GitHub
cannot be reached from here; this is the loopback stand-in the tests talk to."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

STATUSES = re.compile(r"^/repos/([^/]+/[^/]+)/statuses/([0-9a-f]{4,40})$")
PR_COMMENTS = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
COMMENT = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")


@dataclass
class GitHub:
    url: str
    tokens: frozenset[str]
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, token
    statuses: list[dict[str, Any]] = field(default_factory=list)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def statuses_of(self, sha: str) -> list[tuple[str, str]]:
        with self.lock:
            return [(s["state"], s["description"]) for s in self.statuses if s["sha"] == sha]

    def wait_for(self, check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"GitHub never got {what}; calls: {self.calls}")
            time.sleep(0.1)


def _handler(gh: GitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            pass

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"null")

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            with gh.lock:
                gh.calls.append((self.command, parts.path, token))
            if token not in gh.tokens:
                self._send(401, {"message": "Bad credentials"})
                return
            if (m := STATUSES.match(parts.path)) and self.command == "POST":
                body = self._body()
                if body.get("state") not in ("pending", "success", "failure", "error"):
                    self._send(422, {"message": "Validation Failed"})
                    return
                with gh.lock:
                    gh.statuses.append({"repo": m[1], "sha": m[2], **body})
                self._send(201, {"id": len(gh.statuses), **body})
            elif (m := PR_COMMENTS.match(parts.path)) and self.command == "GET":
                query = parse_qs(parts.query)
                size = int(query.get("per_page", ["30"])[0])
                page = int(query.get("page", ["1"])[0])
                with gh.lock:
                    mine = [c for c in gh.comments.values() if c["pr"] == (m[1], int(m[2]))]
                self._send(200, mine[(page - 1) * size : page * size])
            elif (m := PR_COMMENTS.match(parts.path)) and self.command == "POST":
                with gh.lock:
                    number = 1000 + len(gh.comments)
                    gh.comments[number] = {
                        "id": number,
                        "pr": (m[1], int(m[2])),
                        "body": self._body()["body"],
                        "html_url": f"https://github.example/{m[1]}/pull/{m[2]}#c{number}",
                    }
                    made = gh.comments[number]
                self._send(201, made)
            elif (m := COMMENT.match(parts.path)) and self.command == "PATCH":
                with gh.lock:
                    found = gh.comments.get(int(m[2]))
                    if found is not None:
                        found["body"] = self._body()["body"]
                self._send(200, found) if found else self._send(404, {"message": "Not Found"})
            else:
                self._send(404, {"message": "Not Found"})

        do_GET = do_POST = do_PATCH = _handle

    return Handler


@contextlib.contextmanager
def github_api(*tokens: str) -> Iterator[GitHub]:
    """The API on a free port, accepting the given tokens."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    gh = GitHub(f"http://127.0.0.1:{server.server_port}", frozenset(tokens))
    server.RequestHandlerClass = _handler(gh)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield gh
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
