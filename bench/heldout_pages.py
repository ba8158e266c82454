"""Three page styles the analysis is never tuned on, for the held-out check (bench.heldout): a
pricing page (a shadowed top bar, bordered plans with monospace prices, upper-case labels), a
settings form (tabs, bordered inputs, checkboxes, a dashed callout, 12 px text) and a blog post
with a sidebar (italic serif headline, a monospace code block, a quote, a conic-gradient
avatar). They mark the same elements as tests/style_pages.py, so the corpus variants apply.

Rules are judged here, never made here: a rule changed until these pages pass would leave
nothing to tell whether the analysis holds on pages it has not seen.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests import style_pages

PRICING = """<!doctype html><html><head><meta charset="utf-8"><style>
VARS
body { margin: 0; background: var(--page); color: var(--ink);
  font: 14px/1.5 "DejaVu Sans", sans-serif; }
.bar { display: flex; justify-content: space-between; align-items: center; padding: 10px 24px;
  box-shadow: 0 2px 6px rgba(0,0,0,.15); }
.logo { width: 26px; height: 26px; border-radius: 50%; background: radial-gradient(circle at 30%
  30%, var(--accent), var(--ink)); }
.wrap { padding: 14px 24px; }
h1 { font: 700 24px/1.2 "Liberation Sans", sans-serif; letter-spacing: -0.3px; margin: 4px 0 6px;
  text-transform: none; }
.tiers { display: flex; gap: 12px; margin: 12px 0; }
.tier { flex: 1; border: 1px solid var(--rule); border-radius: 12px; padding: 10px 12px;
  box-shadow: 0 1px 3px rgba(0,0,0,.12); }
.tier .cost { font: 700 22px "DejaVu Sans Mono", monospace; }
.small { font-size: 11px; text-transform: uppercase; letter-spacing: 1px; color: var(--muted); }
[data-t="card"] { background: var(--card); border-radius: 12px; padding: 10px 14px; height: 64px; }
ul { margin: 6px 0; padding-left: 18px; }
</style></head><body>
<div class="bar"><div class="logo"></div><span class="small">Plans &amp; pricing</span><span>Log
in</span></div>
<div class="wrap">
<h1>Pick a plan ICON</h1>
<p data-t="text">All plans include CHANGE_ME_WORD backups, single sign-on and an uptime
promise of three nines; upgrade or cancel at any moment from the billing page.</p>
<div class="tiers">
<div class="tier"><div class="small">Starter</div><div class="cost">$9</div><ul><li>3 seats</li>
<li>Email help</li></ul></div>
<div class="tier"><div class="small">Team</div><div class="cost">$29</div><ul><li>20 seats</li>
<li>Chat help</li></ul></div>
<div class="tier"><div class="small">Scale</div><div class="cost">$99</div><ul><li>Unlimited</li>
<li>Phone help</li></ul></div>
</div>
<div data-t="card"><b>Nonprofits</b> get half off every plan. Write to us with your charter.</div>
<p>Chosen by <span data-t="digit">1,284</span> companies last quarter.</p>
<div class="small" data-t="line">Prices exclude tax</div>
</div></body></html>"""

SETTINGS = """<!doctype html><html><head><meta charset="utf-8"><style>
VARS
body { margin: 0; background: var(--page); color: var(--ink);
  font: 12px/1.4 "Liberation Sans", sans-serif; }
.tabs { display: flex; gap: 4px; padding: 8px 16px 0; border-bottom: 2px solid var(--rule); }
.tabs span { padding: 6px 12px; border-radius: 6px 6px 0 0; }
.tabs span.on { background: var(--accent); color: var(--page); }
form { padding: 12px 16px; max-width: 460px; }
label { display: block; font-weight: bold; margin: 10px 0 3px; }
input[type=text] { width: 100%; box-sizing: border-box; padding: 6px 8px; font: inherit;
  border: 1px solid var(--rule); border-radius: 4px; background: var(--page); color: var(--ink); }
.row { display: flex; align-items: center; gap: 6px; margin: 6px 0; }
.btn { display: inline-block; margin-top: 12px; padding: 6px 14px; border-radius: 4px;
  background: var(--accent); color: var(--page); font-weight: bold; }
[data-t="card"] { background: var(--card); border: 1px dashed var(--rule); padding: 8px 10px;
  height: 52px; margin-top: 10px; }
</style></head><body>
<div class="tabs"><span class="on">Profile</span><span>Security</span><span>Notifications</span>
</div>
<form>
<label>Display name ICON</label><input type="text" value="Ada Lovelace">
<label>Email</label><input type="text" value="ada@example.org">
<p data-t="text">We send a CHANGE_ME_WORD summary of account activity to this address,
and never share it with anyone outside your organisation without asking first.</p>
<div class="row"><input type="checkbox" checked> Weekly digest</div>
<div class="row"><input type="checkbox"> Product news</div>
<div data-t="card">Two-factor sign-in is on. Recovery codes were generated on 3 March.</div>
<p>Sessions open: <span data-t="digit">1,284</span></p>
<div data-t="line">Saved a moment ago</div>
<span class="btn">Save changes</span>
</form></body></html>"""

BLOG = """<!doctype html><html><head><meta charset="utf-8"><style>
VARS
body { margin: 0; background: var(--page); color: var(--ink);
  font: 16px/1.7 "DejaVu Serif", serif; }
.cols { display: flex; gap: 24px; padding: 18px 28px; }
article { flex: 1; }
aside { width: 150px; font: 12px/1.5 "DejaVu Sans", sans-serif; color: var(--muted); }
.avatar { width: 64px; height: 64px; border-radius: 50%;
  background: conic-gradient(var(--accent), var(--rule), var(--accent)); margin-bottom: 6px; }
h1 { font: italic 700 26px/1.2 "DejaVu Serif", serif; margin: 0 0 8px; }
blockquote { margin: 10px 0; padding-left: 12px; border-left: 3px solid var(--rule); color:
  var(--muted); }
[data-t="card"] { background: var(--card); font: 12px/1.5 "DejaVu Sans Mono", monospace;
  padding: 8px 12px; border-radius: 4px; height: 70px; white-space: pre; }
</style></head><body><div class="cols">
<article>
<h1>Notes on slow builds ICON</h1>
<p data-t="text">Most of our build time went to a CHANGE_ME_WORD step that nobody had
looked at in years: it compressed every asset twice.</p>
<div data-t="card">$ make assets
compress  1,902 files   41.2 s
compress  1,902 files   40.9 s</div>
<blockquote>Measure first; the slow part is rarely where you think.</blockquote>
<p>We cut <span data-t="digit">1,284</span> seconds a day.</p>
<div data-t="line" style="font-size:13px">Filed under tooling</div>
</article>
<aside><div class="avatar"></div><b>Grace H.</b><br>Writes about compilers and the people who fix
them.</aside>
</div></body></html>"""

TEMPLATES = {"pricing": PRICING, "settings": SETTINGS, "blog": BLOG}
WORDS = {"pricing": "encrypted", "settings": "weekly", "blog": "packaging"}
THEMES = {
    "pricing": {
        "light": ("#111111", "#666666", "#ffffff", "#ecfdf5", "#dddddd", "#059669"),
        "dark": ("#eeeeee", "#999999", "#0a0a0a", "#10241c", "#333333", "#34d399"),
    },
    "settings": {
        "light": ("#24292f", "#57606a", "#f6f8fa", "#fff8c5", "#d0d7de", "#0969da"),
        "dark": ("#c9d1d9", "#8b949e", "#0d1117", "#2b2611", "#30363d", "#58a6ff"),
    },
    "blog": {
        "light": ("#2d2a26", "#6f6a62", "#fffdf8", "#f1ede4", "#e0d9cc", "#b45309"),
        "dark": ("#e8e2d6", "#a59f93", "#17140f", "#24201a", "#3a342b", "#f59e0b"),
    },
}
# The tint variant's card colours: a shift of 5 to 12 levels in some channel, which a person
# sees side by side.
TINTS = {
    "pricing": {"light": "#eff8fc", "dark": "#10201f"},
    "settings": {"light": "#fdf8d6", "dark": "#2b2416"},
    "blog": {"light": "#ebefe9", "dark": "#1f2126"},
}
COLUMN_PUSHED = {
    "pricing": ".wrap { padding-left: 34px !important; }",
    "settings": "form { padding-left: 26px !important; }",
    "blog": ".cols { padding-left: 38px !important; }",
}


@contextmanager
def registered() -> Iterator[tuple[str, ...]]:
    """These pages in tests/style_pages' tables for as long as the block runs (the corpus
    variants look a page's words, colours and column up there); yields their names."""
    tables = (
        (style_pages.TEMPLATES, TEMPLATES),
        (style_pages.WORDS, WORDS),
        (style_pages.THEMES, THEMES),
        (style_pages.TINTS, TINTS),
        (style_pages.COLUMN_PUSHED, COLUMN_PUSHED),
    )
    for table, ours in tables:
        table.update(ours)  # type: ignore[attr-defined]
    try:
        yield tuple(TEMPLATES)
    finally:
        for table, ours in tables:
            for name in ours:
                table.pop(name, None)  # type: ignore[attr-defined]
