"""Which addresses the server may fetch from: public ones, and the hosts an admin allowed.

A URL given by an agent must not make the server reach into its own network (the cloud
metadata service at 169.254.169.254, a database on 10.0.0.5, an admin page on localhost).
``Guard.check_url`` refuses schemes other than http and https, resolves the host and refuses
it when ANY of its addresses is not public: private, loopback, link-local, multicast,
reserved, unspecified, shared (CGNAT, 100.64.0.0/10), documentation and benchmarking ranges,
and IPv6 forms that carry such an IPv4 address inside (IPv4-mapped ``::ffff:a.b.c.d``, 6to4
``2002::/16``, NAT64 ``64:ff9b::/96``). Numeric tricks (``http://2130706433/``,
``http://0x7f.1/``) are resolved by the system like any name, and refused by address.

Checking once is not enough, because DNS can answer differently the second time (DNS
rebinding): whoever connects must connect to the addresses that were checked. ``resolve``
returns them for that purpose; the downloader (fetch.py) and the browser's gate (gate.py)
both connect only to what it returned.

The allow-list opens chosen hosts, for a self-hosted server that captures its own
development servers. Entries, comma-separated:

    localhost:3000        this host name on this port only
    staging.internal      this host name on any port
    *.corp.example        any name under corp.example
    127.0.0.1:8080, [::1]:3000, 10.0.0.7
                          an address (on a port, or any port): any name resolving to it
    10.0.0.0/8            a network: any name whose every address is inside it or public

An allowed host name is not checked further: the admin said it is meant to be reached.

No browser here: webhooks use the same guard.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from viewfinder.errors import AddressRefused, CaptureFailed, InvalidInput

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# getaddrinfo's signature, so that a test can answer for names it does not control.
Resolver = Callable[..., Sequence[tuple[object, object, object, str, tuple[object, ...]]]]

SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def is_public(address: Address) -> bool:
    """Whether an address is on the public internet: globally routable and none of the
    special ranges. IPv6 addresses that embed an IPv4 address are judged by that address."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        if address.sixtofour is not None:
            return is_public(address.sixtofour)
        if address in _NAT64:
            return is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if address.teredo is not None:
            return False  # a tunnel whose far end cannot be judged from here
    return address.is_global and not (
        address.is_multicast
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_unspecified
    )


def _kind(address: Address) -> str:
    """The range an address belongs to, in words, for messages."""
    inner = address
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        inner = address.ipv4_mapped
    for test, words in (
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_unspecified", "the unspecified address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    ):
        if getattr(inner, test):
            return words
    return "not a public address"


@dataclass(frozen=True, slots=True)
class Entry:
    """One allow-list entry: a host name (or ``*.suffix``), an address, or a network; with
    or without a port."""

    host: str | None = None
    network: Network | None = None
    port: int | None = None

    def names(self, host: str, port: int) -> bool:
        if self.host is None or (self.port is not None and self.port != port):
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host

    def covers(self, address: Address, port: int) -> bool:
        if self.network is None or (self.port is not None and self.port != port):
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return address.version == self.network.version and address in self.network


def _host_and_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket:
            raise ValueError(text)
        port = rest[1:] if rest.startswith(":") else None
        if rest and port is None:
            raise ValueError(text)
        return host, int(port) if port else None
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, int(port)
    return text, None


def parse_entry(text: str) -> Entry:
    """One allow-list entry. Raises InvalidInput naming the entry and the accepted forms."""
    raw = text.strip().lower().rstrip(".")
    try:
        if "/" in raw:
            return Entry(network=ipaddress.ip_network(raw, strict=False))
        host, port = _host_and_port(raw)
        if port is not None and not 0 < port < 65536:
            raise ValueError(raw)
        try:
            network = ipaddress.ip_network(host)
        except ValueError:
            label = host[2:] if host.startswith("*.") else host
            if not label or not all(c.isalnum() or c in "-._" for c in label):
                raise ValueError(raw) from None
            return Entry(host=host, port=port)
        return Entry(network=network, port=port)
    except ValueError:
        raise InvalidInput(
            f"capture allow-list entry {text.strip()!r} is not a host, host:port, address, "
            "[IPv6]:port or network (e.g. localhost:3000, staging.internal, 10.0.0.0/8)"
        ) from None


@dataclass(frozen=True, slots=True)
class Target:
    """A URL that passed the guard: where to connect and what was checked."""

    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]
    allowed: bool  # opened by the allow-list rather than public


class Guard:
    """Decides which URLs and addresses may be fetched. Safe to share between threads."""

    def __init__(self, allow: Iterable[str | Entry] = (), *, resolver: Resolver | None = None):
        self.entries = tuple(e if isinstance(e, Entry) else parse_entry(e) for e in allow)
        self._resolver: Resolver = resolver or socket.getaddrinfo

    @classmethod
    def from_text(cls, allow: str | None, *, resolver: Resolver | None = None) -> Guard:
        """A guard from the comma-separated allow-list setting (None or "" allows nothing
        beyond public addresses). Raises InvalidInput for an entry it cannot read."""
        entries = [e for e in (allow or "").split(",") if e.strip()]
        return cls(entries, resolver=resolver)

    def with_allowed(self, extra: Iterable[str]) -> Guard:
        """This guard with more allow-list entries (e.g. from a command-line option)."""
        return Guard([*self.entries, *(parse_entry(e) for e in extra)], resolver=self._resolver)

    def allows_name(self, host: str, port: int) -> bool:
        """Whether the allow-list names this host (or, for an address, covers it) on this
        port."""
        host = host.lower().strip("[]").rstrip(".")
        if any(entry.names(host, port) for entry in self.entries):
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(entry.covers(address, port) for entry in self.entries)

    def resolve(self, host: str, port: int, *, url: str | None = None) -> tuple[str, ...]:
        """The addresses to connect to for host:port, every one of them checked. Raises
        AddressRefused when one is not public and not allowed, CaptureFailed when the name
        does not resolve."""
        shown = url or f"{host}:{port}"
        name = host.lower().strip("[]").rstrip(".")
        try:
            literal: Address | None = ipaddress.ip_address(name)
        except ValueError:
            literal = None
        if literal is not None:
            found = [literal]
        else:
            try:
                infos = self._resolver(name, port, type=socket.SOCK_STREAM)
            except (socket.gaierror, UnicodeError) as exc:
                raise CaptureFailed(
                    f"the host name {name!r} of {shown} does not resolve ({exc}); check the "
                    "address",
                    url=shown,
                ) from None
            found = []
            for info in infos:
                address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
                if address not in found:
                    found.append(address)
            if not found:
                raise CaptureFailed(f"the host name {name!r} of {shown} has no address")
        if not self.allows_name(name, port):
            for address in found:
                if is_public(address) or any(e.covers(address, port) for e in self.entries):
                    continue
                resolved = "" if literal is not None else f" ({name} resolves to {address})"
                raise AddressRefused(
                    f"{shown} is {_kind(address)}{resolved}; the server fetches only from "
                    "public addresses. To capture a host on your own network, add it to "
                    f"VIEWFINDER_CAPTURE_ALLOW (e.g. {_suggestion(name, port)})",
                    url=shown,
                    address=str(address),
                )
        return tuple(str(a) for a in found)

    def check_url(self, url: str, *, what: str = "the page", https_only: bool = False) -> Target:
        """Check a URL before fetching it: an http(s) URL whose every address may be reached.
        ``https_only`` refuses plain http except on allowed hosts (webhooks, downloads).
        Raises AddressRefused, InvalidInput for a URL that is not one, CaptureFailed when the
        host does not resolve."""
        text = url.strip() if isinstance(url, str) else ""
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            shown = f"{scheme}:" if scheme else "no scheme"
            raise AddressRefused(
                f"{what} must be an http:// or https:// address; {shown} is not fetched "
                "(file:, data:, javascript: and other schemes never are)",
                url=text[:200],
            )
        try:
            host = (parts.hostname or "").rstrip(".")
            port = parts.port or _DEFAULT_PORTS[scheme]
        except ValueError:
            raise InvalidInput(f"{what} {text[:200]!r} has an invalid port") from None
        if not host:
            raise InvalidInput(f"{what} {text[:200]!r} has no host name")
        allowed = self.allows_name(host, port)
        if https_only and scheme != "https" and not allowed:
            raise AddressRefused(
                f"{what} must be an https:// address ({text[:200]}); plain http is accepted "
                "only for hosts in VIEWFINDER_CAPTURE_ALLOW",
                url=text[:200],
            )
        addresses = self.resolve(host, port, url=text[:200])
        return Target(text, scheme, host.lower(), port, addresses, allowed)


def _suggestion(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def default_port(scheme: str) -> int:
    return _DEFAULT_PORTS.get(scheme.lower(), 80)
