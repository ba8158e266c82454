"""A real HTTP server on 127.0.0.1 with pages built for the capture tests: clean ones the
second opinion must find nothing on, flawed ones with the faults it must find, and the
awkward ones (a redirect into the private network, subresources from it, a page too slow,
too big, or whose scripts never stop). Emails and files are served too.

Test modules wrap it in their own fixture::

    @pytest.fixture(scope="module")
    def site():
        with running_site() as s:
            yield s
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from PIL import Image, ImageDraw
from playwright.sync_api import sync_playwright

from tests.chromium import CHROMIUM
from viewfinder.capture import Guard, Policy

HEAD = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>body {{ margin: 0; font: 16px/1.5 sans-serif; color: #1f2328; background: #fff }}
main {{ padding: 24px }} .cta {{ display: inline-block; background: #1a7f37; color: #fff;
padding: 14px 24px; border-radius: 6px; text-decoration: none; font-weight: 700 }}
{style}</style></head><body>"""

CLEAN = (
    HEAD.format(
        title="Acme tools",
        style="header { background: #0b3d91; color: #fff; padding: 8px 24px; display: flex; "
        "gap: 24px; align-items: center } header a { color: #fff; padding: 12px 8px; "
        "display: inline-block } p { max-width: 60ch }",
    )
    + """<header><strong>Acme</strong><nav aria-label="Main"><a href="/docs">Docs</a>
<a href="/pricing">Pricing</a></nav></header><main><h1>Tools that last</h1>
<p>Every tool we sell is tested for ten years of daily work before it reaches the shop.</p>
<p><a class="cta" href="/buy">Buy now</a></p>
<p>Free delivery on orders over fifty euros, and returns within thirty days.</p>
</main></body></html>"""
)

FLAWED = (
    HEAD.format(title="Offers", style="")
    + """<main><h1>Offers</h1>
<p id="faint" style="color: #aaaaaa">This grey sentence is hard to read on white.</p>
<p id="tiny" style="font-size: 10px">Terms and conditions apply to every offer.</p>
<div id="icons"><a href="/share" aria-label="Share" style="display: inline-block; width: 16px;
height: 16px; background: #0b3d91"></a><a href="/like" aria-label="Like" style="display:
inline-block; width: 16px; height: 16px; margin-left: 4px; background: #0b3d91"></a></div>
<p><img id="photo" src="/pixel.png" width="160" height="48"></p>
<p><a class="cta" href="/buy">Buy now</a></p></main></body></html>"""
)

NO_CALL_TO_ACTION = (
    HEAD.format(title="Story", style="")
    + """<main><h1>Our story</h1><p>We started in a garage with one lathe.</p>
<p id="buy" style="margin-top: 2400px"><a class="cta" href="/buy">Buy now</a></p></main>
</body></html>"""
)

# Everything that could make two captures differ: an animation, a transition, random
# colours, a focused field with its caret, and the time.
MOVING = (
    HEAD.format(
        title="Moving",
        style="@keyframes spin { to { transform: rotate(360deg) } } .spin { width: 60px; "
        "height: 60px; background: #0b3d91; animation: spin 1s linear infinite } "
        ".fade { transition: opacity 3s; opacity: 0.2 } .fade.on { opacity: 1 }",
    )
    + """<main><h1>Moving parts</h1><div class="spin"></div>
<p class="fade" id="fade">Fading in</p><label for="q">Search</label> <input id="q" autofocus>
<div id="random" style="width: 200px; height: 40px"></div><p id="now"></p>
<script>
document.getElementById("random").style.background =
  `rgb(${Math.floor(Math.random() * 255)}, 90, 120)`;
requestAnimationFrame(() => document.getElementById("fade").classList.add("on"));
</script></main></body></html>"""
)

HANGS = (
    HEAD.format(title="Hangs", style="")
    + """<main><h1>Busy</h1><script>setTimeout(() => { for (;;) {} }, 0);</script>
</main></body></html>"""
)

EMAIL_HEAD = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
{meta}<style>body {{ margin: 0; background: #f4f4f4; font: 16px/1.5 sans-serif }}
.card {{ background: #ffffff; padding: 24px }} .card p {{ color: #222222 }} {style}</style>
</head><body>"""

CLEAN_EMAIL = (
    EMAIL_HEAD.format(title="Your order", meta="", style="")
    + """<table role="presentation" width="600" cellpadding="0" cellspacing="0"><tr>
<td class="card"><h1 style="color: #222222">Thanks for your order</h1>
<p>Your tools ship tomorrow morning.</p>
<p><a class="button" href="https://shop.example/orders/42" style="display: inline-block;
background: #0b3d91; color: #ffffff; padding: 12px 20px">See your order</a></p>
</td></tr></table><script>document.body.dataset.ran = "yes";</script></body></html>"""
)

WIDE_EMAIL = (
    EMAIL_HEAD.format(title="Newsletter", meta="", style="")
    + """<table role="presentation" width="820" cellpadding="0" cellspacing="0"><tr>
<td class="card" width="820"><h1 style="color: #222222">Spring news</h1>
<p>Our spring catalogue is out, with forty new tools.</p></td></tr></table></body></html>"""
)


def logo_png() -> bytes:
    """A dark wordmark on a transparent background, as many logos are."""
    image = Image.new("RGBA", (160, 48), (0, 0, 0, 0))
    ImageDraw.Draw(image).rectangle((8, 8, 150, 40), fill=(20, 20, 24, 255))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


DARK_LOSING_EMAIL = (
    EMAIL_HEAD.format(
        title="Sale",
        meta='<meta name="color-scheme" content="light dark">',
        style="@media (prefers-color-scheme: dark) { body, .card { background: #121212 } }",
    )
    + f"""<table role="presentation" width="600" cellpadding="0" cellspacing="0"><tr>
<td class="card"><img id="logo" alt="Acme" width="160" height="48"
src="data:image/png;base64,{base64.b64encode(logo_png()).decode()}">
<p id="lost">Everything in the shop is half price this weekend.</p></td></tr></table>
</body></html>"""
)


def slide_deck() -> bytes:
    """Seven 16:9 slides printed to PDF by Chromium; the second is crowded with text."""
    slides = []
    for number in range(1, 8):
        lines = 14 if number == 2 else 2
        items = "".join(
            f"<li>Point {i} of slide {number}, with a few more words to read</li>"
            for i in range(lines)
        )
        slides.append(
            "<section style='width: 960px; height: 540px; padding: 40px; box-sizing: "
            f"border-box; break-after: page; font: 22px sans-serif'><h1>Slide {number}</h1>"
            f"<ul>{items}</ul></section>"
        )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page()
        page.set_content(f"<html><body style='margin: 0'>{''.join(slides)}</body></html>")
        pdf = page.pdf(width="960px", height="540px", print_background=True)
        browser.close()
    return pdf


@dataclass
class Site:
    """``url`` is the site on 127.0.0.1; ``inner`` the same pages on 127.0.0.2, standing for a
    machine of the private network that the guard must keep pages away from. ``hits`` lists
    (server, path) of every request either received."""

    url: str
    port: int
    inner: str = ""
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    hits: list[tuple[str, str]] = field(default_factory=list)
    posts: list[tuple[str, bytes]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def inner_hits(self) -> list[str]:
        return [path for server, path in self.hits if server == "inner"]

    def policy(self, **limits: object) -> Policy:
        """A policy that opens this site (127.0.0.1 on its port) and nothing else private."""
        return Policy(guard=Guard([f"127.0.0.1:{self.port}"]), **limits)  # type: ignore[arg-type]


def _pages(site: Site) -> dict[str, tuple[bytes, str]]:
    other = site.inner
    subresources = (
        HEAD.format(title="Subresources", style="")
        + f"""<main><h1>Loads from inside</h1><p>Shown.</p>
<img alt="" width="10" height="10" src="http://169.254.169.254/latest/meta-data/x.png">
<img alt="" width="10" height="10" src="{other}/pixel.png">
<img alt="" width="10" height="10" src="/pixel.png">
<script>fetch("http://10.1.2.3/secrets").catch(() => {{}});
new WebSocket("ws://10.4.5.6:8080/feed");</script></main></body></html>"""
    )
    html = "text/html; charset=utf-8"
    return {
        "/clean": (CLEAN.encode(), html),
        "/flawed": (FLAWED.encode(), html),
        "/no-cta": (NO_CALL_TO_ACTION.encode(), html),
        "/moving": (MOVING.encode(), html),
        "/hangs": (HANGS.encode(), html),
        "/subresources": (subresources.encode(), html),
        "/big": (
            (HEAD.format(title="Big", style="") + "<!--" + "x" * 3_000_000 + "-->").encode(),
            html,
        ),
        "/pixel.png": (logo_png(), "image/png"),
    }


class _Handler(BaseHTTPRequestHandler):
    site: Site
    name: str

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        """Takes a delivery (as a webhook receiver does): /redirect answers 302, else 204."""
        parts = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.site.posts.append((parts.path, body))
        self.send_response(302 if parts.path == "/redirect" else 204)
        if parts.path == "/redirect":
            self.send_header("Location", parse_qs(parts.query)["to"][0])
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        self.site.hits.append((self.name, parts.path))
        if parts.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", parse_qs(parts.query)["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if parts.path == "/slow":
            self.site.release.wait(60)  # answers only when the test is over
            return
        found = self.site.files.get(parts.path)
        if found is None:
            self.send_error(404)
            return
        body, media = found
        self.send_response(200)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def running_site() -> Iterator[Site]:
    servers = []
    site = Site(url="", port=0)
    for name, address in (("site", "127.0.0.1"), ("inner", "127.0.0.2")):
        handler = type("Handler", (_Handler,), {"site": site, "name": name})
        server = ThreadingHTTPServer((address, 0), handler)
        server.daemon_threads = True
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    site.port = servers[0].server_address[1]
    site.url = f"http://127.0.0.1:{site.port}"
    site.inner = f"http://127.0.0.2:{servers[1].server_address[1]}"
    site.files.update(_pages(site))
    try:
        yield site
    finally:
        site.release.set()
        for server in servers:
            server.shutdown()
            server.server_close()
