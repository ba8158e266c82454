"""The recording of one user session: what the recorder sends and what a replay plays back.

One format for both sides (the recorder in the browser and the ingest that stores it, the
replay engine that plays it): ``Recording.from_json(obj)`` checks a JSON object and raises
``InvalidInput`` naming the first field that is wrong (``events[3].type``), ``to_json()``
gives the same object back. Times ``t`` are milliseconds since the session started; boxes are
CSS pixels in the viewport. Values of password fields and of anything under
``[data-viewfinder-mask]`` are never in a recording: the recorder leaves them out.

Version 1. Later fields are added as optional ones, so that version-1 readers still read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from viewfinder.errors import InvalidInput

VERSION = 1
EventType = Literal["click", "input", "key", "scroll", "navigation"]
EVENT_TYPES: tuple[EventType, ...] = ("click", "input", "key", "scroll", "navigation")
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _fail(path: str, problem: str) -> InvalidInput:
    return InvalidInput(f"recording field {path} {problem}", field=path)


def _obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, "must be an object")
    return cast(dict[str, Any], value)


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, "must be a list")
    return value


def _str(value: Any, path: str, *, empty: bool = True) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise _fail(path, "must be a non-empty string" if not empty else "must be a string")
    return value


def _opt_str(value: Any, path: str) -> str | None:
    return None if value is None else _str(value, path)


def _num(value: Any, path: str, *, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(path, "must be a number")
    if minimum is not None and value < minimum:
        raise _fail(path, f"must be at least {minimum:g}")
    return float(value)


def _int(value: Any, path: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, "must be an integer")
    if value < minimum:
        raise _fail(path, f"must be at least {minimum}")
    return value


def _url(value: Any, path: str) -> str:
    text = _str(value, path, empty=False)
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise _fail(path, "must be an absolute http(s) URL")
    return text


def _str_map(value: Any, path: str) -> dict[str, str]:
    obj = _obj(value, path)
    for key, item in obj.items():
        _str(item, f"{path}.{key}")
    return dict(obj)


def _num_out(value: float) -> int | float:
    # Keep integers integers in the JSON, as the recorder sent them.
    return int(value) if float(value).is_integer() else value


@dataclass(frozen=True, slots=True)
class Box:
    """An element's rectangle in CSS pixels of the viewport, when the action happened."""

    x: float
    y: float
    width: float
    height: float

    @classmethod
    def from_json(cls, obj: Any, path: str) -> Box:
        o = _obj(obj, path)
        return cls(
            x=_num(o.get("x"), f"{path}.x"),
            y=_num(o.get("y"), f"{path}.y"),
            width=_num(o.get("width"), f"{path}.width", minimum=0),
            height=_num(o.get("height"), f"{path}.height", minimum=0),
        )

    def to_json(self) -> dict[str, Any]:
        return {k: _num_out(getattr(self, k)) for k in ("x", "y", "width", "height")}


@dataclass(frozen=True, slots=True)
class Event:
    """One user action. ``selectors`` are candidates, most robust first (a test id, an id, a
    structural path, ``text=...``); ``label`` describes the target for the user flow text
    ("button 'Add item'"). ``value`` is set for ``input`` (the final text, keystrokes merged),
    ``key`` for ``key``, ``scroll`` for ``scroll`` (of the window when ``selectors`` is empty,
    else of the element of ``selectors[0]``) and ``url`` for ``navigation``."""

    seq: int
    t: float
    type: EventType
    selectors: tuple[str, ...] = ()
    box: Box | None = None
    label: str | None = None
    value: str | None = None
    key: str | None = None
    scroll: tuple[float, float] | None = None
    url: str | None = None

    @classmethod
    def from_json(cls, obj: Any, path: str) -> Event:
        o = _obj(obj, path)
        kind = o.get("type")
        if kind not in EVENT_TYPES:
            raise _fail(f"{path}.type", f"must be one of {', '.join(EVENT_TYPES)}")
        selectors = tuple(
            _str(s, f"{path}.selectors[{i}]", empty=False)
            for i, s in enumerate(_list(o.get("selectors", []), f"{path}.selectors"))
        )
        box = None if o.get("box") is None else Box.from_json(o["box"], f"{path}.box")
        value = _opt_str(o.get("value"), f"{path}.value")
        key = _opt_str(o.get("key"), f"{path}.key")
        url = None if o.get("url") is None else _url(o["url"], f"{path}.url")
        scroll = None
        if o.get("scroll") is not None:
            s = _obj(o["scroll"], f"{path}.scroll")
            scroll = (_num(s.get("x"), f"{path}.scroll.x"), _num(s.get("y"), f"{path}.scroll.y"))
        if kind in ("click", "input") and not selectors:
            raise _fail(f"{path}.selectors", f"must name at least one selector for a {kind}")
        if kind == "input" and value is None:
            raise _fail(f"{path}.value", "must be the typed text for an input")
        if kind == "key" and not key:
            raise _fail(f"{path}.key", "must name the key pressed (Enter, Tab, Escape...)")
        if kind == "scroll" and scroll is None:
            raise _fail(f"{path}.scroll", "must give {x, y} for a scroll")
        if kind == "navigation" and url is None:
            raise _fail(f"{path}.url", "must be the URL navigated to")
        return cls(
            seq=_int(o.get("seq"), f"{path}.seq"),
            t=_num(o.get("t"), f"{path}.t", minimum=0),
            type=cast(EventType, kind),
            selectors=selectors,
            box=box,
            label=_opt_str(o.get("label"), f"{path}.label"),
            value=value,
            key=key,
            scroll=scroll,
            url=url,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seq": self.seq,
            "t": _num_out(self.t),
            "type": self.type,
            "selectors": list(self.selectors),
            "box": None if self.box is None else self.box.to_json(),
        }
        if self.label is not None:
            out["label"] = self.label
        if self.value is not None:
            out["value"] = self.value
        if self.key is not None:
            out["key"] = self.key
        if self.scroll is not None:
            out["scroll"] = {"x": _num_out(self.scroll[0]), "y": _num_out(self.scroll[1])}
        if self.url is not None:
            out["url"] = self.url
        return out

    def describe(self) -> str:
        """The step in the user flow: "click button 'Add item'", "type 'milk' into ..."."""
        target = self.label or (self.selectors[0] if self.selectors else "the page")
        if self.type == "click":
            return f"click {target}"
        if self.type == "input":
            return f"type {self.value!r} into {target}"
        if self.type == "key":
            return f"press {self.key}" + (f" in {target}" if self.selectors else "")
        if self.type == "scroll":
            where = target if self.selectors else "the page"
            y = _num_out(self.scroll[1]) if self.scroll else 0
            return f"scroll {where} to y={y}"
        return f"go to {self.url}"


@dataclass(frozen=True, slots=True)
class Exchange:
    """One fetch/XHR call as the page made it, in the order the calls completed. Bodies are
    text, cut at the recorder's cap (``truncated``); ``status`` 0 is a call that failed."""

    seq: int
    t: float
    method: str
    url: str
    status: int
    request_body: str | None = None
    response_body: str | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    truncated: bool = False

    @classmethod
    def from_json(cls, obj: Any, path: str) -> Exchange:
        o = _obj(obj, path)
        method = _str(o.get("method"), f"{path}.method", empty=False).upper()
        if method not in METHODS:
            raise _fail(f"{path}.method", f"must be one of {', '.join(METHODS)}")
        status = _int(o.get("status"), f"{path}.status")
        if status > 599:
            raise _fail(f"{path}.status", "must be an HTTP status (0 for a failed call)")
        truncated = o.get("truncated", False)
        if not isinstance(truncated, bool):
            raise _fail(f"{path}.truncated", "must be true or false")
        return cls(
            seq=_int(o.get("seq"), f"{path}.seq"),
            t=_num(o.get("t"), f"{path}.t", minimum=0),
            method=method,
            url=_url(o.get("url"), f"{path}.url"),
            status=status,
            request_body=_opt_str(o.get("requestBody"), f"{path}.requestBody"),
            response_body=_opt_str(o.get("responseBody"), f"{path}.responseBody"),
            response_headers={
                k.lower(): v
                for k, v in _str_map(
                    o.get("responseHeaders") or {}, f"{path}.responseHeaders"
                ).items()
            },
            truncated=truncated,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "t": _num_out(self.t),
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "requestBody": self.request_body,
            "responseBody": self.response_body,
            "responseHeaders": dict(self.response_headers),
            "truncated": self.truncated,
        }

    @property
    def path(self) -> str:
        """The path and query the call went to: what a replay matches calls on, with the
        method, since the deployment replayed has another origin than the recorded app."""
        parts = urlsplit(self.url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


@dataclass(frozen=True, slots=True)
class Storage:
    """Local and session storage and the cookies (``document.cookie``) when recording began."""

    local: dict[str, str] = field(default_factory=dict)
    session: dict[str, str] = field(default_factory=dict)
    cookies: str = ""

    @classmethod
    def from_json(cls, obj: Any, path: str) -> Storage:
        o = _obj(obj, path)
        return cls(
            local=_str_map(o.get("local") or {}, f"{path}.local"),
            session=_str_map(o.get("session") or {}, f"{path}.session"),
            cookies=_str(o.get("cookies") or "", f"{path}.cookies"),
        )

    def to_json(self) -> dict[str, Any]:
        return {"local": dict(self.local), "session": dict(self.session), "cookies": self.cookies}


@dataclass(frozen=True, slots=True)
class UrlVisit:
    """The page's URL changed to ``url`` at ``t`` (a load, pushState, popstate)."""

    t: float
    url: str

    def to_json(self) -> dict[str, Any]:
        return {"t": _num_out(self.t), "url": self.url}


@dataclass(frozen=True, slots=True)
class Recording:
    """A whole session: where it began, the viewport, the storage at the start, the user's
    actions, the network calls and the URL history."""

    start_url: str
    viewport: tuple[int, int]
    user_agent: str = ""
    storage: Storage = field(default_factory=Storage)
    events: tuple[Event, ...] = ()
    network: tuple[Exchange, ...] = ()
    urls: tuple[UrlVisit, ...] = ()
    version: int = VERSION

    @classmethod
    def from_json(cls, obj: Any) -> Recording:
        """Check ``obj`` (a decoded JSON object) and build the recording; ``InvalidInput``
        names the first field that is wrong."""
        o = _obj(obj, "(the recording)")
        version = o.get("version")
        if version != VERSION:
            raise _fail("version", f"must be {VERSION} (this server reads version {VERSION})")
        vp = _obj(o.get("viewport"), "viewport")
        width = _int(vp.get("width"), "viewport.width", minimum=1)
        height = _int(vp.get("height"), "viewport.height", minimum=1)
        if width > 4096 or height > 4096:
            raise _fail("viewport", "must be at most 4096x4096 CSS px")
        events = tuple(
            Event.from_json(e, f"events[{i}]")
            for i, e in enumerate(_list(o.get("events", []), "events"))
        )
        network = tuple(
            Exchange.from_json(x, f"network[{i}]")
            for i, x in enumerate(_list(o.get("network", []), "network"))
        )
        urls: list[UrlVisit] = []
        for i, u in enumerate(_list(o.get("urls", []), "urls")):
            uo = _obj(u, f"urls[{i}]")
            urls.append(
                UrlVisit(
                    t=_num(uo.get("t"), f"urls[{i}].t", minimum=0),
                    url=_url(uo.get("url"), f"urls[{i}].url"),
                )
            )
        return cls(
            start_url=_url(o.get("startUrl"), "startUrl"),
            viewport=(width, height),
            user_agent=_str(o.get("userAgent") or "", "userAgent"),
            storage=Storage.from_json(o.get("storage") or {}, "storage"),
            events=events,
            network=network,
            urls=tuple(urls),
            version=VERSION,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "startUrl": self.start_url,
            "viewport": {"width": self.viewport[0], "height": self.viewport[1]},
            "userAgent": self.user_agent,
            "storage": self.storage.to_json(),
            "events": [e.to_json() for e in self.events],
            "network": [x.to_json() for x in self.network],
            "urls": [u.to_json() for u in self.urls],
        }

    @property
    def start_path(self) -> str:
        """Path and query of the start URL: where a replay opens the deployment."""
        parts = urlsplit(self.start_url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def user_flow(self) -> list[str]:
        """The session as steps a person reads: "click button 'Add item'"."""
        return [e.describe() for e in self.events]

    def network_summary(self) -> list[str]:
        """Calls grouped by method, path (no query) and status, in first-seen order:
        "GET /api/items 200 x2"."""
        counts: dict[tuple[str, str, int], int] = {}
        for x in self.network:
            key = (x.method, urlsplit(x.url).path or "/", x.status)
            counts[key] = counts.get(key, 0) + 1
        return [f"{m} {p} {s}" + (f" x{n}" if n > 1 else "") for (m, p, s), n in counts.items()]
