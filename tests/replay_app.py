"""A small generated web app to record and replay, served from a temp dir on 127.0.0.1, and
recordings of sessions on it (what the recorder would have sent).

The app shows what makes replays differ when nothing pins them: the time, a random number,
a toast that a timer shows and hides, a transition; it loads its list over fetch. Variants
change it the way a new build would::

    base        the app as recorded
    regressed   the "Add item" button turns red and its label changes (a visual regression)
    network     the list also calls /api/stats, which no recording has (network differs)
    flaky       a line of digits from crypto.getRandomValues, unpinned (a flake)

Tests and bench/replays.py use it::

    with serving(write_app(tmp_path / "base")) as url:
        result = replay(shopping_session(), url)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from viewfinder.replay.recording import Recording

APP_ORIGIN = "https://shop.example"

INDEX = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Shopping list</title><link rel="stylesheet" href="/assets/app.css"></head>
<body><header><h1>Shopping list</h1><span id="now"></span> <span id="lucky"></span></header>
<main>
<form id="form" onsubmit="return false"><label for="name">Name</label>
<input id="name" data-testid="name" autocomplete="off">
<input id="secret" type="password" value="">
<button id="add" data-testid="add" type="button">{add_label}</button></form>
<ul id="items"></ul>
<button id="more" type="button">Load more</button>
<p id="toast" hidden>Saved</p>
<div class="card">A card with rounded corners and a shadow</div>
<p><a id="about" href="/about.html">About this list</a></p>
{flaky}
<div style="height: 1200px"></div>
</main><script src="/assets/app.js"></script></body></html>"""

ABOUT = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>About</title>
<link rel="stylesheet" href="/assets/app.css"></head><body><header><h1>About</h1></header>
<span id="now"></span><main><p>Lists are kept on the server.</p><a href="/">Back</a></main>
<script src="/assets/app.js"></script></body></html>"""

CSS = """body { margin: 0; font: 16px/1.5 sans-serif; color: #1f2328; background: #fff }
header { background: #0b3d91; color: #fff; padding: 8px 24px }
main { padding: 16px 24px }
#add { background: {add_colour}; color: #fff; border: 0; border-radius: 8px; padding: 8px 16px;
  transition: background 0.6s ease }
#add:hover { background: #0f5323 }
.card { margin: 16px 0; padding: 16px; border-radius: 14px; box-shadow: 0 2px 8px #0003;
  width: 320px; animation: pulse 2s infinite }
@keyframes pulse { from { opacity: 1 } to { opacity: 0.4 } }
#toast { background: #ffd33d; padding: 8px; border-radius: 6px; width: 200px }
"""

JS = """function showTime() {
  document.getElementById("now").textContent = new Date().toISOString();
  const lucky = document.getElementById("lucky");
  if (lucky) lucky.textContent = "lucky " + Math.floor(Math.random() * 1000);
}

function renderItems(items) {
  const list = document.getElementById("items");
  list.innerHTML = "";
  for (const name of items) {
    const li = document.createElement("li");
    li.textContent = name;
    list.appendChild(li);
  }
}

async function loadItems(query) {
  const response = await fetch("/api/items" + (query || ""));
  const items = await response.json();
  if (query) {
    for (const name of items) {
      const li = document.createElement("li");
      li.textContent = name;
      document.getElementById("items").appendChild(li);
    }
  } else {
    renderItems(items);
  }
}

function showToast() {
  const toast = document.getElementById("toast");
  setTimeout(() => { toast.hidden = false; }, 300);
  setTimeout(() => { toast.hidden = true; }, 2500);
}

async function addItem() {
  const input = document.getElementById("name");
  await fetch("/api/items", {method: "POST", body: JSON.stringify({name: input.value})});
  input.value = "";
  showToast();
  await loadItems();
}

function start() {
  document.body.dataset.replay = String(Boolean(window.Viewfinder && window.Viewfinder.isReplay));
  document.body.dataset.theme = localStorage.getItem("theme") || "none";
  document.body.dataset.cookie = document.cookie;
  showTime();
  setInterval(showTime, 1000);
  if (!document.getElementById("items")) return;
  loadItems();
  {extra}
  document.getElementById("add").addEventListener("click", addItem);
  document.getElementById("name").addEventListener("keydown", (e) => {
    if (e.key === "Enter") addItem();
  });
  document.getElementById("more").addEventListener("click", () => loadItems("?page=2"));
}

start();
"""

STATS = """fetch("/api/stats").then((r) => r.status === 200 ? r.json() : null)
    .then((s) => { if (s === null) console.error("stats are unavailable"); });"""
# Randomness no replay pins (the seeded Math.random aside): every load shows other digits.
FLAKY = """<p id="flaky"></p><script>
document.getElementById("flaky").textContent = crypto.getRandomValues(new Uint32Array(1))[0];
</script>"""

VARIANTS = ("base", "regressed", "network", "flaky")


def write_app(root: Path, variant: str = "base") -> Path:
    """Write the app's build (a variant of it) to ``root`` and return ``root``."""
    assert variant in VARIANTS
    (root / "assets").mkdir(parents=True, exist_ok=True)
    regressed = variant == "regressed"
    (root / "index.html").write_text(
        INDEX.format(
            add_label="Add to list" if regressed else "Add item",
            flaky=FLAKY if variant == "flaky" else "",
        )
    )
    (root / "about.html").write_text(ABOUT)
    (root / "assets" / "app.css").write_text(
        CSS.replace("{add_colour}", "#cf222e" if regressed else "#1a7f37")
    )
    (root / "assets" / "app.js").write_text(
        JS.replace("{extra}", STATS if variant == "network" else "")
    )
    return root


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1; yields the base URL (http://127.0.0.1:PORT)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _exchange(seq: int, t: int, method: str, path: str, status: int, body: Any) -> dict[str, Any]:
    return {
        "seq": seq,
        "t": t,
        "method": method,
        "url": APP_ORIGIN + path,
        "status": status,
        "requestBody": None,
        "responseBody": json.dumps(body),
        "responseHeaders": {"content-type": "application/json"},
        "truncated": False,
    }


def shopping_json(extra_steps: int = 0) -> dict[str, Any]:
    """A session: type a name, add it, load more, scroll, press Enter, read the About page.
    ``extra_steps`` more "Load more" clicks make it longer (for the bench)."""
    events: list[dict[str, Any]] = [
        {
            "type": "input",
            "selectors": ["[data-testid=name]", "#name"],
            "label": "input 'Name'",
            "value": "milk",
            "t": 400,
        },
        {
            "type": "click",
            "selectors": ["[data-testid=add]", "#add", "text=Add item"],
            "label": "button 'Add item'",
            "box": {"x": 250, "y": 70, "width": 90, "height": 40},
            "t": 900,
        },
        {
            "type": "click",
            "selectors": ["#more", "text=Load more"],
            "label": "button 'Load more'",
            "t": 1600,
        },
    ]
    t = 1600
    for _ in range(extra_steps):
        t += 300
        events.append(
            {"type": "click", "selectors": ["#more"], "label": "button 'Load more'", "t": t}
        )
    events += [
        {"type": "scroll", "selectors": [], "scroll": {"x": 0, "y": 120}, "t": t + 700},
        {
            "type": "input",
            "selectors": ["#name"],
            "label": "input 'Name'",
            "value": "eggs",
            "t": t + 1200,
        },
        {"type": "key", "selectors": ["#name"], "key": "Enter", "t": t + 1500},
        {
            "type": "click",
            "selectors": ["#about", "text=About this list"],
            "label": "link 'About this list'",
            "t": t + 3200,
        },
        {"type": "navigation", "selectors": [], "url": APP_ORIGIN + "/about.html", "t": t + 3300},
    ]
    for seq, event in enumerate(events):
        event["seq"] = seq
        event.setdefault("box", None)
    network = [
        _exchange(0, 100, "GET", "/api/items", 200, ["apples", "bread"]),
        _exchange(1, 950, "POST", "/api/items", 201, {"ok": True}),
        _exchange(2, 990, "GET", "/api/items", 200, ["apples", "bread", "milk"]),
    ]
    for n in range(1 + extra_steps):
        network.append(
            _exchange(
                len(network), 1650 + 300 * n, "GET", "/api/items?page=2", 200, [f"cheese {n + 1}"]
            )
        )
    network += [
        _exchange(len(network), t + 1550, "POST", "/api/items", 201, {"ok": True}),
        _exchange(
            len(network) + 1,
            t + 1600,
            "GET",
            "/api/items",
            200,
            ["apples", "bread", "milk", "eggs"],
        ),
    ]
    return {
        "version": 1,
        "startUrl": APP_ORIGIN + "/",
        "viewport": {"width": 800, "height": 600},
        "userAgent": "Mozilla/5.0",
        "storage": {"local": {"theme": "light"}, "session": {}, "cookies": "seen=1"},
        "events": events,
        "network": network,
        "urls": [
            {"t": 0, "url": APP_ORIGIN + "/"},
            {"t": t + 3300, "url": APP_ORIGIN + "/about.html"},
        ],
    }


def shopping_session(extra_steps: int = 0) -> Recording:
    return Recording.from_json(shopping_json(extra_steps))


def about_json() -> dict[str, Any]:
    """A session that only reads the About page and goes back."""
    events = [
        {
            "seq": 0,
            "t": 300,
            "type": "scroll",
            "selectors": [],
            "box": None,
            "scroll": {"x": 0, "y": 40},
        },
    ]
    return {
        "version": 1,
        "startUrl": APP_ORIGIN + "/about.html",
        "viewport": {"width": 800, "height": 600},
        "events": events,
        "network": [],
        "urls": [{"t": 0, "url": APP_ORIGIN + "/about.html"}],
    }
