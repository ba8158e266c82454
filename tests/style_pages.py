"""Four pages of different styles for the style corpus (tests/style_corpus.py): a
documentation article in a serif face, a shop's product grid, an admin console with a
sidebar and a table, and a product's landing page (a dark top bar, a centred serif headline
and a pill button, three feature columns). Each follows the browser's colour scheme (light
or dark) and marks the elements the corpus changes:

- ``text``: a paragraph whose glyphs the noise variants re-rasterise;
- ``card``: a large panel on a pale (or, in dark, a deep) background the tint variants recolour;
- ``icon``: a small icon beside a heading, removed by one variant;
- ``digit``: a figure whose digit one variant changes;
- ``line``: a short line of text that one variant appends words to.

Each page holds the word CHANGE_ME_WORD once in its ``text`` paragraph (the one-letter and
added-word variants edit it) and the figure 1,284 once in its ``digit``.
"""

from __future__ import annotations

ICON = (
    '<svg data-t="icon" width="18" height="18" viewBox="0 0 18 18" style="vertical-align:-3px;'
    'margin-left:8px"><circle cx="9" cy="9" r="8" fill="var(--accent)"/><path d="M5 9.5l2.6 '
    '2.5L13 6.5" stroke="#fff" stroke-width="2" fill="none"/></svg>'
)

# Light and dark colours of each page: text, muted text, page, card (the tinted panel), rule
# lines and accent. The card colours are what the tint variants start from.
THEMES = {
    "docs": {
        "light": ("#1f2933", "#52606d", "#ffffff", "#f4f7fb", "#d9e2ec", "#2563eb"),
        "dark": ("#e4e7eb", "#9aa5b1", "#111827", "#1b2433", "#323f4b", "#60a5fa"),
    },
    "shop": {
        "light": ("#222222", "#6b6b6b", "#fafaf7", "#fff7ed", "#e7e5e4", "#c2410c"),
        "dark": ("#f5f5f4", "#a8a29e", "#1c1917", "#292524", "#44403c", "#fb923c"),
    },
    "admin": {
        "light": ("#0f172a", "#475569", "#f8fafc", "#eef2ff", "#cbd5e1", "#4f46e5"),
        "dark": ("#e2e8f0", "#94a3b8", "#0b1120", "#172033", "#1e293b", "#818cf8"),
    },
    "landing": {
        "light": ("#1a1a2e", "#5c5f77", "#fdfcfb", "#f3f0ff", "#e2e0ea", "#7c3aed"),
        "dark": ("#ecebf3", "#a09fb5", "#121019", "#1d1a2b", "#2e2a40", "#a78bfa"),
    },
}
# The tint variant's card colour: a faint shift a person sees side by side, each pixel's delta
# under the comparison's colour threshold.
TINTS = {
    "docs": {"light": "#eef6f0", "dark": "#1b2a2e"},
    "shop": {"light": "#fdf2f8", "dark": "#2b2430"},
    "admin": {"light": "#f0f9ff", "dark": "#14243a"},
    "landing": {"light": "#eef4ff", "dark": "#1a2030"},
}


def variables(style: str) -> str:
    def block(colours: tuple[str, ...]) -> str:
        names = ("ink", "muted", "page", "card", "rule", "accent")
        return "; ".join(f"--{n}: {c}" for n, c in zip(names, colours, strict=True))

    light, dark = THEMES[style]["light"], THEMES[style]["dark"]
    return (
        f":root {{ {block(light)}; color-scheme: light dark; }}\n"
        f"@media (prefers-color-scheme: dark) {{ :root {{ {block(dark)}; }} }}\n"
    )


DOCS = """<!doctype html><html><head><meta charset="utf-8"><style>
VARS
body { margin: 0; background: var(--page); color: var(--ink);
  font: 17px/1.6 "Liberation Serif", "DejaVu Serif", serif; }
header { padding: 14px 40px; border-bottom: 1px solid var(--rule);
  font: 600 15px "DejaVu Sans", sans-serif; color: var(--muted); }
main { padding: 8px 40px; max-width: 560px; }
h1 { font-size: 30px; margin: 12px 0 6px; }
h2 { font-size: 21px; margin: 18px 0 4px; }
.meta { color: var(--muted); font-size: 14px; }
[data-t="card"] { background: var(--card); border-radius: 8px; padding: 14px 18px;
  margin: 14px 0; height: 96px; }
</style></head><body>
<header>Field guide &nbsp;/&nbsp; Chapter 4</header>
<main>
<h1>Reading a tide table</h1>
<div class="meta" data-t="line">Revised by the harbour office</div>
<p data-t="text">A tide table lists the CHANGE_ME_WORD times of high and low water for each
day, with the height of the water above chart datum. Read the column for your port, then
correct for the difference printed beside nearby places.</p>
<div data-t="card"><b>Note.</b> Heights are given in metres. Spring tides follow a new or
full moon by a day or two; neap tides fall between them.</div>
<h2>Worked example ICON</h2>
<p>On the morning in question the table shows <span data-t="digit">1,284</span> millimetres
at the first low water, rising to a high of four metres shortly after noon.</p>
<p>Allow for wind and pressure: a deep low can raise the sea by a third of a metre.</p>
</main></body></html>"""

SHOP = """<!doctype html><html><head><meta charset="utf-8"><style>
VARS
body { margin: 0; background: var(--page); color: var(--ink);
  font: 14px/1.45 "Liberation Sans", "DejaVu Sans", sans-serif; }
nav { display: flex; gap: 22px; padding: 14px 28px; border-bottom: 1px solid var(--rule);
  font-weight: bold; }
nav span:first-child { color: var(--accent); margin-right: auto; }
.wrap { padding: 16px 28px; }
h2 { font-size: 20px; margin: 4px 0 8px; }
.grid { display: grid; grid-template-columns: repeat(3, 1fr); gap: 14px; margin-top: 12px; }
.item { border: 1px solid var(--rule); border-radius: 6px; padding: 10px; }
.photo { height: 70px; border-radius: 4px;
  background: linear-gradient(135deg, var(--accent), var(--rule)); margin-bottom: 8px; }
.price { font-weight: bold; font-size: 16px; }
[data-t="card"] { background: var(--card); border-radius: 10px; padding: 16px 20px;
  height: 84px; }
</style></head><body>
<nav><span>Northwind Outfitters</span><span>Women</span><span>Men</span><span>Sale</span></nav>
<div class="wrap">
<div data-t="card"><h2>Winter layers</h2>Warm fleeces and shells, packed small.</div>
<h2>Bestsellers ICON</h2>
<p data-t="text">Hand-picked by our CHANGE_ME_WORD team: each piece is tested on the trail
for a season before it reaches the shop, and mended free for two years.</p>
<div class="grid">
<div class="item"><div class="photo"></div>Trail fleece<br><span class="price">$64</span></div>
<div class="item"><div class="photo"></div>Rain shell<br><span class="price">$118</span></div>
<div class="item"><div class="photo"></div>Wool socks<br><span class="price">$16</span></div>
</div>
<p class="muted" data-t="line">Free delivery over $50</p>
<p>Reviews so far: <span data-t="digit">1,284</span> from verified buyers.</p>
</div></body></html>"""

ADMIN = """<!doctype html><html><head><meta charset="utf-8"><style>
VARS
body { margin: 0; background: var(--page); color: var(--ink); display: flex;
  font: 13px/1.5 "DejaVu Sans", "Liberation Sans", sans-serif; }
aside { width: 150px; padding: 18px 14px; border-right: 1px solid var(--rule);
  min-height: 100vh; box-sizing: border-box; }
aside div { padding: 5px 8px; color: var(--muted); }
aside div.on { color: var(--accent); font-weight: bold; }
main { flex: 1; padding: 16px 24px; }
h1 { font-size: 19px; margin: 0 0 10px; }
table { border-collapse: collapse; width: 100%; margin-top: 10px; }
td, th { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--rule); }
td.n { font-family: "DejaVu Sans Mono", monospace; text-align: right; }
[data-t="card"] { background: var(--card); border-radius: 6px; padding: 12px 16px;
  height: 70px; border: 1px solid var(--rule); }
</style></head><body>
<aside><div class="on">Overview</div><div>Users</div><div>Billing</div><div>Audit log</div>
<div>Settings</div></aside>
<main>
<h1>Overview ICON</h1>
<div data-t="card"><b>Maintenance window</b><br>Backups run nightly at 02:00 UTC; the
console stays available.</div>
<p data-t="text">Usage is counted per workspace and CHANGE_ME_WORD every hour. Invoices are
issued on the first of the month and can be exported from Billing.</p>
<div data-t="line">Last sync 4 minutes ago</div>
<table><tr><th>Workspace</th><th>Seats</th><th>Requests</th></tr>
<tr><td>Atlas</td><td class="n">42</td><td class="n"><span data-t="digit">1,284</span></td></tr>
<tr><td>Borealis</td><td class="n">17</td><td class="n">9,310</td></tr>
<tr><td>Cygnus</td><td class="n">8</td><td class="n">655</td></tr>
<tr><td>Draco</td><td class="n">23</td><td class="n">4,022</td></tr>
</table>
</main></body></html>"""

LANDING = """<!doctype html><html><head><meta charset="utf-8"><style>
VARS
body { margin: 0; background: var(--page); color: var(--ink);
  font: 15px/1.55 "Liberation Sans", "DejaVu Sans", sans-serif; }
.top { display: flex; align-items: center; gap: 18px; padding: 12px 32px;
  background: var(--ink); color: var(--page); font-size: 13px; }
.top b { font-size: 16px; margin-right: auto; letter-spacing: 0.5px; }
.hero { text-align: center; padding: 24px 32px 8px; }
.hero h1 { font: 700 30px/1.2 "DejaVu Serif", serif; margin: 0 0 10px; }
.pill { display: inline-block; background: var(--accent); color: var(--page);
  border-radius: 999px; padding: 7px 18px; font-weight: bold; font-size: 13px; }
.body { padding: 4px 32px 0; }
.features { display: flex; gap: 24px; }
.features div { flex: 1; border-top: 3px solid var(--accent); padding-top: 6px;
  font-size: 13px; }
.muted { color: var(--muted); font-size: 13px; }
[data-t="card"] { background: var(--card); border-left: 4px solid var(--accent);
  padding: 12px 16px; margin: 14px 0; height: 60px; font-style: italic; }
</style></head><body>
<div class="top"><b>Lumen</b><span>Product</span><span>Pricing</span><span>Sign in</span></div>
<div class="hero"><h1>Ship screens you can trust</h1>
<span class="pill">Start a free trial</span></div>
<div class="body">
<p data-t="text">Every pull request gets a CHANGE_ME_WORD review of what changed on screen,
so the team can approve a release in minutes instead of combing through pages by hand.</p>
<div class="features"><div><b>Compare ICON</b><br>Pixel and layout changes, side by side.</div>
<div><b>Discuss</b><br>Threads on any change, resolved in place.</div>
<div><b>Approve</b><br>One click, recorded with the build.</div></div>
<div data-t="card">"We caught a broken checkout before our customers did."</div>
<p>Trusted by <span data-t="digit">1,284</span> teams in 40 countries.</p>
<div class="muted" data-t="line">No card needed to start</div>
</div></body></html>"""

TEMPLATES = {"docs": DOCS, "shop": SHOP, "admin": ADMIN, "landing": LANDING}
# The word in each page's ``text`` paragraph that the text variants edit.
WORDS = {"docs": "predicted", "shop": "outdoor", "admin": "refreshed", "landing": "visual"}
# Each page's content column pushed 10 CSS px right: the sidebar widened, or the margin beside
# the column grown. Its text wraps again to the new width and the grid's columns narrow.
COLUMN_PUSHED = {
    "docs": "main { padding-left: 50px !important; }",
    "shop": ".wrap { padding-left: 38px !important; }",
    "admin": "aside { width: 160px !important; }",
    "landing": ".body { padding-left: 42px !important; }",
}


def page(style: str) -> str:
    """The page's HTML, before any variant."""
    return (
        TEMPLATES[style]
        .replace("VARS", variables(style))
        .replace("ICON", ICON)
        .replace("CHANGE_ME_WORD", WORDS[style])
    )
