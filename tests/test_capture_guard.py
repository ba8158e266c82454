"""The address guard and the guarded downloader, without a browser: which addresses and
schemes are refused, what the allow-list opens, and downloads held to it (redirects, size,
time) against real HTTP servers on 127.0.0.1 and 127.0.0.2."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.capture_site import Site, running_site
from viewfinder.capture import Guard, fetch, is_public
from viewfinder.errors import AddressRefused, CaptureFailed, InvalidInput


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site() as s:
        yield s


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://127.9.9.9:8080/admin",
        "http://10.0.0.5/",
        "http://172.16.3.4/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",  # shared address space (CGNAT)
        "http://0.0.0.0/",
        "http://224.0.1.1/",  # multicast, though "global"
        "http://240.0.0.1/",  # reserved
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
        "http://[::ffff:10.0.0.1]/",
        "http://[2002:7f00:1::]/",  # 6to4 around 127.0.0.1
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 around 169.254.169.254
        "http://2130706433/",  # 127.0.0.1 as one number
        "http://0x7f.1/",
        "http://localhost:3000/",
    ],
)
def test_addresses_outside_the_public_internet_are_refused(url: str) -> None:
    with pytest.raises(AddressRefused) as refused:
        Guard().check_url(url)
    assert "public addresses" in refused.value.message
    assert "VIEWFINDER_CAPTURE_ALLOW" in refused.value.message


def test_public_addresses_pass_and_are_the_ones_to_connect_to() -> None:
    target = Guard().check_url("https://93.184.215.14:8443/page?q=1")
    assert (target.scheme, target.host, target.port) == ("https", "93.184.215.14", 8443)
    assert target.addresses == ("93.184.215.14",) and not target.allowed
    assert is_public(__import__("ipaddress").ip_address("2606:4700::1111"))


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "data:text/html,hi", "javascript:alert(1)", "ftp://x/", "//x/"]
)
def test_schemes_other_than_http_and_https_are_refused(url: str) -> None:
    with pytest.raises(AddressRefused, match="http:// or https://"):
        Guard().check_url(url)


def test_a_name_is_refused_when_any_of_its_addresses_is_private() -> None:
    def resolver(host: str, port: int, **_: object) -> list[tuple[object, ...]]:
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port)),
        ]

    with pytest.raises(AddressRefused, match=r"shop\.example resolves to 10\.0\.0\.7"):
        Guard(resolver=resolver).check_url("https://shop.example/")  # type: ignore[arg-type]


def test_the_allow_list_opens_a_host_on_a_port_and_nothing_more() -> None:
    guard = Guard.from_text("localhost:3000, staging.internal, 10.0.0.0/8, [::1]:4000")
    assert guard.check_url("http://localhost:3000/").allowed
    assert guard.check_url("http://LOCALHOST.:3000/x").allowed
    with pytest.raises(AddressRefused):
        guard.check_url("http://localhost:3001/")
    with pytest.raises(AddressRefused):
        guard.check_url("http://127.0.0.1:3000/")  # the name was allowed, not the address
    assert guard.check_url("http://10.20.30.40:9999/").addresses == ("10.20.30.40",)
    assert guard.check_url("http://[::1]:4000/").addresses == ("::1",)
    with pytest.raises(AddressRefused):
        guard.check_url("http://[::1]:4001/")
    assert Guard(["*.corp.example"]).allows_name("wiki.corp.example", 443)
    assert not Guard(["*.corp.example"]).allows_name("corp.example.evil", 443)


@pytest.mark.parametrize("entry", ["localhost:99999", "exa mple", "10.0.0.0/33", "[::1"])
def test_an_allow_list_entry_that_cannot_be_read_is_named(entry: str) -> None:
    with pytest.raises(InvalidInput, match="allow-list entry"):
        Guard.from_text(f"localhost:3000,{entry}")


def test_https_only_refuses_plain_http_except_on_allowed_hosts() -> None:
    with pytest.raises(AddressRefused, match="must be an https:// address"):
        Guard().check_url("http://93.184.215.14/hook", https_only=True)
    assert Guard(["localhost:8080"]).check_url("http://localhost:8080/hook", https_only=True)


def test_a_download_from_an_allowed_host_arrives(site: Site) -> None:
    got = fetch(
        f"{site.url}/pixel.png",
        guard=Guard([f"127.0.0.1:{site.port}"]),
        timeout=10,
        max_bytes=1 << 20,
    )
    assert got.status == 200 and got.body == site.files["/pixel.png"][0]
    assert got.headers["content-type"] == "image/png"


def test_a_download_redirected_into_the_private_network_is_refused_before_it_connects(
    site: Site,
) -> None:
    guard = Guard([f"127.0.0.1:{site.port}"])
    before = len(site.inner_hits())
    with pytest.raises(AddressRefused, match=r"127\.0\.0\.2.*loopback"):
        fetch(
            f"{site.url}/redirect?to={site.inner}/pixel.png",
            guard=guard,
            timeout=10,
            max_bytes=1 << 20,
        )
    assert len(site.inner_hits()) == before


def test_downloads_stop_at_the_byte_limit_and_the_time_limit(site: Site) -> None:
    guard = Guard([f"127.0.0.1:{site.port}"])
    with pytest.raises(CaptureFailed, match=r"larger than the 0\.5 MB limit"):
        fetch(f"{site.url}/big", guard=guard, timeout=10, max_bytes=512 * 1024)
    with pytest.raises(CaptureFailed, match=r"did not arrive within 1 s"):
        fetch(f"{site.url}/slow", guard=guard, timeout=1, max_bytes=1 << 20)
    with pytest.raises(CaptureFailed, match="answered HTTP 404"):
        fetch(f"{site.url}/missing", guard=guard, timeout=10, max_bytes=1 << 20)


def test_a_delivery_is_posted_once_and_its_redirect_is_not_followed(site: Site) -> None:
    guard = Guard([f"127.0.0.1:{site.port}"])
    answer = fetch(
        f"{site.url}/redirect?to={site.url}/elsewhere",
        guard=guard,
        timeout=10,
        max_bytes=1 << 16,
        method="POST",
        content=b'{"event": "review.decided"}',
        headers={"Content-Type": "application/json"},
        https_only=True,
        follow_redirects=False,
        fail_on_status=False,
    )
    assert answer.status == 302 and answer.headers["location"] == f"{site.url}/elsewhere"
    assert site.posts == [("/redirect", b'{"event": "review.decided"}')]
    with pytest.raises(AddressRefused, match="must be an https:// address"):
        fetch("http://93.184.215.14/hook", guard=guard, timeout=10, max_bytes=1, https_only=True)
