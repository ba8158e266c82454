"""The MCP App `ui://viewfinder/review`: the review rendered inside hosts that support MCP Apps,
so the person marks, verifies and decides without leaving the conversation. create_review and
get_review link to it (`_meta.ui.resourceUri`); it speaks the Apps postMessage protocol
(ui/initialize, then tool results from the host, tools/call back through it) and acts only
through the app-only tools add_mark, decide_review and verify_mark, with the review's own
link token. Everything is inlined: hosts give an app no network but what its CSP names (here
the server's own address, for the screenshots)."""

from __future__ import annotations

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

_SCRIPT = r"""
(() => {
  let nextId = 1;
  let review = null;
  const points = {};
  const pending = new Map();
  const root = document.getElementById("app");
  const say = (text) => { document.getElementById("status").textContent = text; };
  const send = (message) => window.parent.postMessage(message, "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ jsonrpc: "2.0", id, method, params });
  });
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && pending.has(m.id) && !m.method) {
      const waiting = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) waiting.reject(new Error(m.error.message)); else waiting.resolve(m.result);
      return;
    }
    if (m.method === "ui/notifications/tool-result") show(m.params);
  });
  const token = () => review.review_url.split("/r/")[1];
  async function call(name, args, done) {
    try {
      const result = await request("tools/call", { name, arguments: { token: token(), ...args } });
      if (result.isError) { say(result.content[0].text); return; }
      show(result);
      say(done);
    } catch (error) { say(error.message); }
  }
  function show(result) {
    const data = result && result.structuredContent;
    if (!data) return;
    review = data.review || data;
    render();
  }
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    for (const child of children) node.append(child);
    return node;
  }
  function place(node, a) {
    node.style.left = `${a.x * 100}%`; node.style.top = `${a.y * 100}%`;
    if (a.w) { node.style.width = `${a.w * 100}%`; node.style.height = `${a.h * 100}%`; }
  }
  function shotView(shot) {
    const marks = review.work_packets.pins.filter(
      (p) => p.review_id === review.id && p.screenshot_index === shot.index);
    const img = el("img", { src: shot.url, alt: `Screenshot ${shot.index + 1}: ${shot.label}` });
    const frame = el("div", { className: "shot" }, img);
    for (const p of marks) {
      const spot = p.area || p.point;
      if (!spot) continue;
      const mark = el("span", { className: p.area ? "box" : "dot", title: p.number });
      place(mark, spot);
      frame.append(mark);
    }
    frame.addEventListener("click", (event) => {
      const r = img.getBoundingClientRect();
      points[shot.index] = { x: (event.clientX - r.left) / r.width, y: (event.clientY - r.top) / r.height };
      const dot = frame.querySelector(".dot.new") || el("span", { className: "dot new" });
      place(dot, points[shot.index]);
      frame.append(dot);
    });
    const severity = el("select", { name: "severity", ariaLabel: "Severity" });
    for (const s of ["must-fix", "nit", "question", "keep", "wording", "spacing", "size", "color", "alignment"]) {
      severity.append(el("option", { value: s, textContent: s, selected: s === "nit" }));
    }
    const body = el("input", { name: "body", required: true, placeholder: "What is wrong",
      ariaLabel: `Mark on screenshot ${shot.index + 1}` });
    const form = el("form", {}, severity, body, el("button", { type: "submit", textContent: "Add mark" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const args = { screenshot_index: shot.index, body: body.value, severity: severity.value };
      if (points[shot.index]) args.point = points[shot.index];
      delete points[shot.index];
      call("add_mark", args, "Mark added");
    });
    return el("figure", {}, el("figcaption", { textContent: `${shot.index + 1}. ${shot.label}` }), frame, form);
  }
  function markView(p) {
    const item = el("li", {}, el("strong", { textContent: p.number }), ` ${p.severity} · ${p.status} · ${p.body}`);
    if (p.note) item.append(el("div", { className: "muted", textContent: `Agent: ${p.note}` }));
    if (p.pass_diff) item.append(el("div", { className: "muted", textContent: p.pass_diff.summary }));
    if (p.status === "resolved" && open()) {
      const verify = el("button", { className: "primary", textContent: `Verify ${p.number}` });
      verify.addEventListener("click", () => call("verify_mark", { mark_id: p.id }, "Verified"));
      const reopen = el("button", { textContent: `Reopen ${p.number}` });
      reopen.addEventListener("click", () => call("verify_mark", { mark_id: p.id, verified: false }, "Reopened"));
      item.append(el("div", {}, verify, reopen));
    }
    return item;
  }
  const open = () => review.status === "pending" || review.status === "changes_requested";
  function render() {
    root.replaceChildren();
    root.append(el("h1", { textContent: review.title }));
    root.append(el("p", { className: "muted", id: "facts",
      textContent: `Pass ${review.pass} · ${review.status.replace("_", " ")} · ${review.next_action.summary}` }));
    if (open()) for (const shot of review.screenshots) root.append(shotView(shot));
    const marks = review.work_packets.pins;
    root.append(el("h2", { textContent: `Marks (${marks.length})` }));
    root.append(marks.length ? el("ol", {}, ...marks.map(markView)) : el("p", { className: "muted", textContent: "No marks yet." }));
    if (open()) {
      const note = el("textarea", { rows: 2, ariaLabel: "Note for the agent" });
      const approve = el("button", { className: "primary", type: "button", textContent: "Approve" });
      const changes = el("button", { type: "button", textContent: "Request changes" });
      approve.addEventListener("click", () => call("decide_review", { decision: "approved", note: note.value || null }, "Approved"));
      changes.addEventListener("click", () => call("decide_review", { decision: "changes_requested", note: note.value || null }, "Changes requested"));
      root.append(el("div", {}, note, el("div", {}, approve, changes)));
    }
  }
  request("ui/initialize", {
    appInfo: { name: "viewfinder-review", version: "1" },
    appCapabilities: {},
    protocolVersion: "%PROTOCOL%",
  }).then(() => send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }));
})();
"""


def html() -> str:
    """The app's single, self-contained document."""
    script = _SCRIPT.replace("%PROTOCOL%", PROTOCOL)
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
