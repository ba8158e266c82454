"""The recording's network answers: each fetch/XHR the replayed page makes is answered with
the recorded response of the same method and path, in the order they were recorded.

Calls are matched on the path, not the origin: the deployment replayed is served from another
address than the app recorded. Of the calls left for a method and path, one with the same
query is taken first, else the first one. When the recorded calls of that method and path are
used up, the last one answers again (a page that polls); a call never recorded gets a 404 and
is reported."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from urllib.parse import urlsplit

from viewfinder.replay.recording import Exchange, Recording


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: str
    headers: dict[str, str]
    recorded: bool


def _split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.path or "/", parts.query


class Stub:
    """Answers for one replay (it is used up as the replay goes)."""

    def __init__(self, recording: Recording) -> None:
        self._left: dict[tuple[str, str], list[Exchange]] = defaultdict(list)
        self._last: dict[tuple[str, str], Exchange] = {}
        for exchange in sorted(recording.network, key=lambda x: (x.t, x.seq)):
            self._left[(exchange.method, _split(exchange.url)[0])].append(exchange)

    def answer(self, method: str, url: str) -> Answer:
        path, query = _split(url)
        key = (method.upper(), path)
        left = self._left.get(key)
        chosen: Exchange | None = None
        if left:
            chosen = next((x for x in left if _split(x.url)[1] == query), left[0])
            left.remove(chosen)
            self._last[key] = chosen
        else:
            chosen = self._last.get(key)
        if chosen is None:
            return Answer(404, "", {"content-type": "text/plain"}, recorded=False)
        headers = {
            k: v
            for k, v in chosen.response_headers.items()
            if k in ("content-type", "cache-control", "location", "etag", "last-modified")
        }
        # A failed recorded call (status 0) fails again, as a 502 the page can see.
        return Answer(chosen.status or 502, chosen.response_body or "", headers, recorded=True)
