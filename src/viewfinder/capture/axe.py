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
# WCAG A and AA rules only: best practices (landmarks, one h1) are noise on an email or a
# fragment. Contrast is left out because the second opinion measures it from the pixels,
# where axe can only read the CSS (and is slowest at it).
RUN = """async () => {
  const result = await axe.run(document, {
    resultTypes: ["violations"],
    runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]},
    rules: {"color-contrast": {enabled: false}},
  });
  return result.violations.map((v) => ({
    rule: v.id, impact: v.impact || "minor", help: v.help, url: v.helpUrl,
    nodes: v.nodes.slice(0, 20).map((n) => {
      let rect = null;
      const plain = n.target.length === 1 && typeof n.target[0] === "string";
      const el = plain ? document.querySelector(n.target[0]) : null;
      if (el) {
        const b = el.getBoundingClientRect();
        const z = window.visualViewport ? window.visualViewport.scale : 1;
        rect = [(b.left + scrollX) * z, (b.top + scrollY) * z, b.width * z, b.height * z];
      }
      return {target: n.target.flat(Infinity).join(" "), html: n.html.slice(0, 300), rect};
    }),
  }));
}"""


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
