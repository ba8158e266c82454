"""The CLI's HTTP client for the REST API: the server address and key every command shares,
bearer authentication, timeouts, and the one way failures reach the user."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO
from urllib.parse import quote

import typer

from viewfinder import __version__

if TYPE_CHECKING:
    import httpx

DEFAULT_URL = "http://127.0.0.1:8000"
# Long enough for a push with --compare, which the server holds open for up to 30 s.
READ_TIMEOUT = 90.0
CONNECT_TIMEOUT = 5.0
RETRYABLE_STATUS = frozenset({500, 502, 503, 504})
# Retried requests: 0.25 + 0.5 + 1 + 2 + 4 + 8 + 8 s of waiting, enough for a load balancer to
# notice a node is gone or for a restarting server to come back.
ATTEMPTS = 8
FIRST_BACKOFF = 0.25

UrlOption = Annotated[
    str,
    typer.Option("--url", envvar="VIEWFINDER_URL", metavar="URL", help="The Viewfinder server."),
]
KeyOption = Annotated[
    str | None,
    typer.Option(
        "--key",
        envvar="VIEWFINDER_KEY",
        metavar="KEY",
        help="API key (vf_proj_...).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the server's record as JSON.")]


class ClientError(Exception):
    """A request that got no usable answer. ``message`` is what the user reads after `error:`;
    ``retryable`` says whether the same request may succeed later."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


class ApiError(ClientError):
    """The server answered with its error body ``{"error": {"code", "message", "details"}}``."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"[{code}] {message}", retryable=status in RETRYABLE_STATUS)
        self.status = status
        self.code = code
        self.details = details

    @classmethod
    def from_response(cls, response: httpx.Response) -> ApiError:
        try:
            error = response.json()["error"]
            return cls(response.status_code, str(error["code"]), str(error["message"]))
        except (ValueError, KeyError, TypeError):
            # Not our server's shape: a proxy page or another program on that port.
            text = " ".join(response.text.split())[:200] or response.reason_phrase
            return cls(response.status_code, f"http_{response.status_code}", text)


def unreachable(url: str, *, retryable: bool = True) -> ClientError:
    return ClientError(
        f"cannot reach Viewfinder at {url}: is `viewfinder serve` running? Set VIEWFINDER_URL.",
        retryable=retryable,
    )


def _params(params: dict[str, Any] | None) -> dict[str, Any] | None:
    # httpx sends None as an empty value, which the API would read as given.
    return {k: v for k, v in params.items() if v is not None} if params else None


def _verify(url: str) -> bool:
    # Loading the CA bundle costs a CLI run about 80 ms; plain http never uses it, and redirects
    # (the only way to reach https from there) are not followed.
    return url.startswith("https://")


# A body sent as it is read: a file object (its length known, so the server can refuse it before
# it is sent) or the chunks of a pipe or device, whose end nobody knows.
Streamed = BinaryIO | Iterator[bytes]
CHUNK = 1 << 20


def stream_file(file: BinaryIO, path: Path) -> Streamed:
    """``file`` (open on ``path``) as a request body that is never all in memory: a regular file
    as itself, anything else (a pipe, /dev/stdin, a device such as /dev/zero) in chunks, which
    the server stops reading at its size limit."""
    if stat.S_ISREG(os.fstat(file.fileno()).st_mode):
        return file

    def chunks() -> Iterator[bytes]:
        while True:
            try:
                chunk = file.read(CHUNK)
            except OSError as exc:
                raise ClientError(f"cannot read {path}: {exc.strerror}") from None
            if not chunk:
                return
            yield chunk

    return chunks()


def segment(value: str | int) -> str:
    """A path segment: ids come from the command line and must not reach another route."""
    return quote(str(value), safe="")


class Client:
    def __init__(self, url: str, key: str | None) -> None:
        if not key:
            raise ClientError(
                "no API key: set VIEWFINDER_KEY or pass --key. `viewfinder serve` prints the "
                "first keys when it starts for the first time; `viewfinder keys create` makes more."
            )
        import httpx  # here: loading it costs every other command (diff, --help) ~100 ms

        self.url = url.rstrip("/")
        if not self.url.startswith(("http://", "https://")):
            raise ClientError(f"{url!r} is not an http:// or https:// address (VIEWFINDER_URL)")
        self._http = httpx.Client(
            base_url=f"{self.url}/api/v1",
            headers={
                "Authorization": f"Bearer {key}",
                "User-Agent": f"viewfinder-cli/{__version__}",
            },
            timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
            verify=_verify(self.url),
        )
        # A server that answered once and then cannot be reached is restarting or behind a
        # load balancer that lost a node: worth retrying. One never reached is a wrong address.
        self._reached = False

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
        content: bytes | Streamed | None = None,
        files: list[tuple[str, tuple[str, bytes, str]]] | None = None,
        data: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        retry: bool = False,
    ) -> Any:
        """The decoded JSON answer. Raises ApiError for an error answer, ClientError when there
        is no answer. ``files`` (with form ``data``) sends a multipart body. With ``retry`` (for
        requests that are safe to send twice), a lost connection, a node going away behind a
        load balancer or a 5xx is tried again with backoff, for about half a minute."""
        delay = FIRST_BACKOFF
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return self._once(method, path, params, body, content, files, data, headers)
            except ClientError as exc:
                if not (retry and exc.retryable) or attempt == ATTEMPTS:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 8.0)
        raise AssertionError("unreachable")

    def _once(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None,
        body: Any,
        content: bytes | Streamed | None,
        files: list[tuple[str, tuple[str, bytes, str]]] | None,
        data: dict[str, str] | None,
        extra: dict[str, str] | None,
    ) -> Any:
        import httpx

        headers = {"Content-Type": "application/octet-stream"} if content is not None else {}
        headers |= extra or {}
        try:
            response = self._http.request(
                method,
                path,
                params=_params(params),
                json=body,
                content=content,
                headers=headers,
                files=files,
                data=data,
            )
        except httpx.ConnectError:
            raise unreachable(self.url, retryable=self._reached) from None
        except httpx.TimeoutException:
            raise ClientError(
                f"Viewfinder at {self.url} did not answer in time; try again", retryable=True
            ) from None
        except (httpx.WriteError, httpx.RemoteProtocolError) as exc:
            if content is None or isinstance(content, bytes):
                raise ClientError(
                    f"the connection to {self.url} failed: {exc}", retryable=True
                ) from None
            # A body sent as it was read stops being read where the server's limit is.
            raise ClientError(
                f"{self.url} stopped reading the upload before its end ({exc}): it is larger "
                "than the server accepts, or the server went away; send a smaller file"
            ) from None
        except httpx.TransportError as exc:
            raise ClientError(
                f"the connection to {self.url} failed: {exc}", retryable=True
            ) from None
        self._reached = True
        if not response.is_success:
            raise ApiError.from_response(response)
        try:
            return response.json()
        except ValueError:
            raise ClientError(f"{self.url} answered with something other than JSON") from None

    def get(self, path: str, **params: Any) -> Any:
        """Reads are safe to repeat: retried when the connection or the node fails."""
        return self.request("GET", path, params=params, retry=True)

    def post(self, path: str, body: Any = None, *, retry: bool = False, **params: Any) -> Any:
        return self.request("POST", path, body=body, params=params, retry=retry)

    def fetch(self, url: str) -> bytes:
        """The bytes behind a signed link (such links carry their own authorisation)."""
        import httpx

        try:
            response = httpx.get(
                url,
                timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
                verify=_verify(url),
            )
        except httpx.ConnectError:
            raise unreachable(self.url) from None
        except httpx.HTTPError as exc:
            raise ClientError(f"downloading {url} failed: {exc}") from None
        if not response.is_success:
            raise ApiError.from_response(response)
        return response.content
