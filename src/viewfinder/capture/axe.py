"""axe-core, the accessibility engine run inside captured pages.

It is an npm package, pinned in ``assets/package.json`` (and its lock) and installed by
``make install`` into ``assets/node_modules``; a wheel built from such a checkout carries the
file too. ``VIEWFINDER_AXE_PATH`` points at another copy. Without it, captures still work and
say in their notes that the accessibility hints were skipped, and how to get them.
"""

from __future__ import annotations

import functools
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
INSTALLED = ASSETS / "node_modules" / "axe-core" / "axe.min.js"
MISSING = (
    "axe-core is not installed, so the page was not checked for accessibility: run `make "
    "install` (it runs `npm ci` in src/viewfinder/capture/assets), or set VIEWFINDER_AXE_PATH "
    "to an axe.min.js"
)
# Violations placed on a rendering of the document: each element found again by its selector
# and given its box (as shown, so a zoomed-out phone layout is measured as it shows). axe-core
# runs once per capture, and each other shot of it (the mobile layout, the dark scheme)
# places the same violations on itself. An element axe names by a path through frames or
# shadow roots gets no box.
PLACE = """(found) => {
  const z = window.visualViewport ? window.visualViewport.scale : 1;
  const box = (selector) => {
    let el = null;
    try { el = selector ? document.querySelector(selector) : null; } catch (e) { el = null; }
    if (!el) return null;
    const b = el.getBoundingClientRect();
    return [(b.left + scrollX) * z, (b.top + scrollY) * z, b.width * z, b.height * z];
  };
  return JSON.stringify(
    found.map((v) => ({...v, nodes: v.nodes.map((n) => ({...n, rect: box(n.selector)}))})));
}"""
# WCAG A and AA rules only: best practices (landmarks, one h1) are noise on an email or a
# fragment. Contrast and target size are left out because the second opinion measures them
# itself (contrast from the pixels, where axe can only read the CSS), and they are axe's
# slowest rules.
RUN = (
    """async () => {
  const result = await axe.run(document, {
    resultTypes: ["violations"],
    iframes: false,
    performanceTimer: false,
    runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]},
    rules: {"color-contrast": {enabled: false}, "target-size": {enabled: false}},
  });
  const found = result.violations.map((v) => ({
    rule: v.id, impact: v.impact || "minor", help: v.help, url: v.helpUrl,
    nodes: v.nodes.slice(0, 20).map((n) => ({
      selector: n.target.length === 1 && typeof n.target[0] === "string" ? n.target[0] : null,
      target: n.target.flat(Infinity).join(" "), html: n.html.slice(0, 300),
    })),
  }));
  return ("""
    + PLACE
    + """)(found);
}"""
)


@functools.cache
def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def source(path: Path | None = None) -> str | None:
    """axe.min.js's text: from ``path`` when given, else the installed copy; None when it
    cannot be read (see MISSING for what to tell people)."""
    return _read(path or INSTALLED)
