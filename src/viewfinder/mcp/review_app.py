"""The MCP App `ui://viewfinder/review`: the review rendered inside hosts that support MCP Apps,
so the person marks, verifies and decides without leaving the conversation. create_review and
get_review link to it (`_meta.ui.resourceUri`); it speaks the Apps postMessage protocol
(ui/initialize, then tool results from the host, tools/call back through it) and acts only
through the app-only tools add_mark, decide_review and verify_mark, with the review's own
link token. Everything is inlined: hosts give an app no network but what its CSP names (here
the server's own address, for the screenshots)."""

from __future__ import annotations

from pathlib import Path

from mcp.server.apps import Apps, ResourceCsp

APP_URI = "ui://viewfinder/review"
PROTOCOL = "2026-01-26"

_STYLE = """
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #d0d7de;
  --accent: #0b5cad; --mark: #d6336c; --ok: #1a6130; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0f1419; --muted: #a3adb8;
  --line: #3a434d; --accent: #58a6ff; --ok: #7ee2a8; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 0.75rem; }
h1 { font-size: 1.15rem; margin: 0 0 0.25rem; }
.muted { color: var(--muted); }
.shot { position: relative; display: inline-block; max-width: 100%; cursor: crosshair; }
.shot img { max-width: 100%; border: 1px solid var(--line); display: block; }
.dot { position: absolute; width: 12px; height: 12px; margin: -6px 0 0 -6px; border-radius: 50%;
  background: var(--mark); pointer-events: none; }
.box { position: absolute; border: 2px solid var(--mark); pointer-events: none; }
ol { padding-left: 1.2rem; }
li { margin: 0.35rem 0; }
button { font: inherit; padding: 0.2rem 0.6rem; margin-right: 0.3rem; }
button.primary { background: var(--accent); color: #fff; border: 1px solid var(--accent); }
form { display: flex; gap: 0.4rem; flex-wrap: wrap; align-items: center; margin: 0.4rem 0; }
input, select, textarea { font: inherit; }
#status { min-height: 1.2em; color: var(--muted); }
"""

_SCRIPT = Path(__file__).with_name("review_app.js")


def html() -> str:
    """The app's single, self-contained document."""
    script = _SCRIPT.read_text().replace("%PROTOCOL%", PROTOCOL)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Viewfinder review</title><style>{_STYLE}</style></head><body>"
        '<main id="app"><p>Waiting for the review…</p></main>'
        '<p id="status" role="status" aria-live="polite"></p>'
        f"<script>{script}</script></body></html>"
    )


def extension(public_url: str | None) -> Apps:
    """The Apps extension serving the review app (screenshots load from ``public_url``)."""
    apps = Apps()
    csp = ResourceCsp(resource_domains=[public_url]) if public_url else None
    apps.add_html_resource(
        APP_URI,
        html(),
        name="review",
        title="Viewfinder review",
        description="The design checkup review: mark, verify and decide in the conversation.",
        csp=csp,
        prefers_border=True,
    )
    return apps


def linked(visibility: list[str] | None = None) -> dict[str, object]:
    """A tool's _meta that links it to the app (``visibility ["app"]``: hidden from models)."""
    ui: dict[str, object] = {"resourceUri": APP_URI}
    if visibility:
        ui["visibility"] = visibility
    return {"ui": ui}
