"""The labelled corpus the change analysis is tested and benchmarked against.

Each pair is a base render of a page (bench/pages) and a variant with a known effect:
rendering noise (sub-pixel offsets, a tiny rotation, a one-level colour change), or a real
change whose kind (content, color, layout_shift, size) and, for moves, exact vector are known by
construction. Labels come from the construction, not from looking at the pixels, so the renders
need not be byte-identical across machines: they are made with Debian's Chromium when first
needed and cached in the tests' render cache (tests/labelled.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

from tests import labelled
from tests.chromium import CHROMIUM, FLAGS

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "bench" / "pages"
OUT = labelled.CACHE / "analysis-corpus"
# page, viewport width, height, a word found once in the page and a one-letter change of it
PAGE_SET = {
    "dashboard": ("dashboard.html", 800, 600, ("Revenue", "Revenne")),
    "signup": ("signup.html", 800, 600, ("Work email", "Work emaii")),
    "article": ("article.html", 800, 1000, ("Features", "Feature5")),
}
# The article's block sits below its first screen: its block variants would show nothing.
SKIP = {
    ("article", v)
    for v in ("border_1px", "move_down_24", "move_right_10", "move_diag", "shift_1px", "removed")
}
BLOCK = '[data-bench="block"]'
BUTTON = '[data-bench="button"]'


def move(dx: int, dy: int) -> str:
    return (
        f"{BLOCK} {{ position: relative !important; left: {dx}px !important; "
        f"top: {dy}px !important; }}"
    )


# name: (css, js, label). Labels: kind of the pair, noise, and the moves it must find.
VARIANTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "subpixel_x03": ("body { transform: translate(0.3px, 0); }", "", {"kind": "noise"}),
    "subpixel_xy03": ("body { transform: translate(0.3px, 0.3px); }", "", {"kind": "noise"}),
    "subpixel_y05": ("body { transform: translate(0, 0.5px); }", "", {"kind": "noise"}),
    "subpixel_x025": ("body { transform: translate(0.25px, 0.1px); }", "", {"kind": "noise"}),
    "rotate_001": ("body { transform: rotate(0.01deg); }", "", {"kind": "noise"}),
    "rotate_m001": ("body { transform: rotate(-0.01deg); }", "", {"kind": "noise"}),
    "one_level": (
        "",
        # Every solid background one level darker: imperceptible, and everywhere.
        "for (const el of document.querySelectorAll('*')) { const c = getComputedStyle(el)"
        ".backgroundColor.match(/rgb\\((\\d+), (\\d+), (\\d+)\\)/); if (c) el.style."
        "backgroundColor = `rgb(${Math.max(c[1]-1,0)}, ${Math.max(c[2]-1,0)}, "
        "${Math.max(c[3]-1,0)})`; }",
        {"kind": "noise"},
    ),
    "text_char": ("", "", {"kind": "content"}),
    "border_1px": (
        f"{BLOCK} {{ outline: 1px solid #4b5563 !important; }}",
        "",
        {"kind": "content"},
    ),
    "badge": (
        "",
        "const b = document.createElement('span'); b.textContent = 'New'; b.style.cssText ="
        " 'position:absolute;top:120px;right:60px;background:#dc2626;color:#fff;font:bold 11px"
        " sans-serif;padding:2px 6px;border-radius:9px'; document.body.appendChild(b);",
        {"kind": "content"},
    ),
    "button_color": (
        f"{BUTTON} {{ background: #7c3aed !important; border-color: #7c3aed !important; }}",
        "",
        {"kind": "color"},
    ),
    "move_down_24": (move(0, 24), "", {"kind": "layout_shift", "moves": [[0, 24]]}),
    "move_right_10": (move(10, 0), "", {"kind": "layout_shift", "moves": [[10, 0]]}),
    "move_diag": (move(8, 12), "", {"kind": "layout_shift", "moves": [[8, 12]]}),
    "shift_1px": (move(0, 1), "", {"kind": "layout_shift", "moves": [[0, 1]]}),
    "banner_top": (
        "",
        "const d = document.createElement('div'); d.textContent = 'Scheduled maintenance "
        "tonight'; d.style.cssText = 'height:40px;line-height:40px;background:#fde68a;"
        "color:#78350f;padding:0 16px;font:14px sans-serif'; document.body.prepend(d);",
        {"kind": "layout_shift", "moves": [[0, 40]], "inserted": True},
    ),
    "removed": (
        f"{BLOCK} {{ visibility: hidden !important; }}",
        "",
        {"kind": "content", "verdict": "likely_regression"},
    ),
    "taller": ("", "", {"kind": "size"}),
}


# A product card pinned to the bottom right of every page (over whatever is there, the same in
# base and candidate): a photo drawn on a canvas and a two-line caption. Variants break it the
# ways pages break: a broken image, text clipped by its box, elements overlapping, text
# overflowing its box.
PANEL = """
const panel = document.createElement('div');
panel.style.cssText = 'position:absolute;right:24px;bottom:24px;width:280px;height:170px;'
  + 'background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:12px;'
  + 'font:14px/20px sans-serif;color:#1f2328;z-index:10;box-sizing:border-box';
const canvas = document.createElement('canvas');
canvas.width = 120; canvas.height = 80;
const g = canvas.getContext('2d');
const sky = g.createLinearGradient(0, 0, 120, 80);
sky.addColorStop(0, '#1e3a8a'); sky.addColorStop(0.6, '#60a5fa'); sky.addColorStop(1, '#fde68a');
g.fillStyle = sky; g.fillRect(0, 0, 120, 80);
for (const [x, y, r, c] of [[30, 55, 22, '#166534'], [75, 60, 28, '#15803d'],
                            [100, 20, 10, '#fbbf24'], [55, 40, 14, '#a16207']]) {
  g.fillStyle = c; g.beginPath(); g.arc(x, y, r, 0, 7); g.fill();
}
const photo = document.createElement('img');
photo.width = 120; photo.height = 80; photo.alt = 'Product photo';
photo.style.display = 'block';
photo.src = SRC;
const caption = document.createElement('p');
caption.textContent = 'Ergonomic chair in walnut, shipped in two days. Free returns.';
caption.style.cssText = 'margin:8px 0 0;height:40px;overflow:hidden;' + CAPTION;
panel.append(photo, caption);
document.body.append(panel);
await new Promise(done => { photo.onload = photo.onerror = done; if (photo.complete) done(); });
"""
PANEL_VARIANTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    # name: (photo source, caption style, label)
    "broken_image": (
        "'missing-photo.png'",
        "",
        {"kind": "content", "verdict": "likely_regression"},
    ),
    "clipped_text": (
        "canvas.toDataURL()",
        "height:27px",
        {"kind": "content", "verdict": "likely_regression"},
    ),
    "overlap": (
        "canvas.toDataURL()",
        "position:relative;top:-44px",
        {"kind": "content", "verdict": "likely_regression"},
    ),
    "overflow": (
        "canvas.toDataURL()",
        "white-space:nowrap;overflow:visible",
        {"kind": "content", "verdict": "likely_regression"},
    ),
}


def panel_script(src: str = "canvas.toDataURL()", caption: str = "") -> str:
    return PANEL.replace("SRC", src).replace("CAPTION", repr(caption))


def page_html(page: str, variant: str) -> str:
    file, _, _, (old, new) = PAGE_SET[page]
    html = (PAGES / file).read_text(encoding="utf-8")
    if variant == "text_char":
        assert html.count(old) == 1, (page, old)
        html = html.replace(old, new)
    css = VARIANTS[variant][0] if variant in VARIANTS else ""
    if css:
        html = html.replace("</head>", f"<style>{css}</style>\n</head>", 1)
    return html


def shoot(browser: Browser, html: str, width: int, height: int, script: str) -> bytes:
    context = browser.new_context(
        viewport={"width": width, "height": height},
        color_scheme="light",
        reduced_motion="reduce",
    )
    page = context.new_page()
    page.set_content(html, wait_until="load")
    if script:
        page.evaluate(f"async () => {{ {script} }}")
    page.evaluate("() => document.fonts.ready")
    data = page.screenshot(animations="disabled", caret="hide")
    context.close()
    return data


def fingerprint(viewport: tuple[int, int] | None = None) -> str:
    digest = hashlib.sha256(Path(__file__).read_bytes() + repr((viewport, FLAGS)).encode())
    for page in PAGE_SET.values():
        digest.update((PAGES / page[0]).read_bytes())
    return digest.hexdigest()[:16]


def render(out: Path = OUT, viewport: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """Render every pair into ``out``, each page at its own size or at ``viewport``; returns
    the labelled pairs."""
    out.mkdir(parents=True, exist_ok=True)
    pairs: list[dict[str, Any]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
        for page, (_, width, height, _) in PAGE_SET.items():
            width, height = viewport or (width, height)
            base = f"{page}-base.png"
            (out / base).write_bytes(shoot(browser, page_html(page, "base"), width, height, ""))
            for variant, (_, script, label) in VARIANTS.items():
                if (page, variant) in SKIP:
                    continue
                tall = height + 40 if variant == "taller" else height
                name = f"{page}-{variant}.png"
                (out / name).write_bytes(
                    shoot(browser, page_html(page, variant), width, tall, script)
                )
                pairs.append(
                    {"name": f"{page}/{variant}", "base": base, "candidate": name, **label}
                )
            html = page_html(page, "base")
            panel_base = f"{page}-panel-base.png"
            (out / panel_base).write_bytes(shoot(browser, html, width, height, panel_script()))
            for variant, (src, caption, label) in PANEL_VARIANTS.items():
                name = f"{page}-{variant}.png"
                script = panel_script(src, caption)
                (out / name).write_bytes(shoot(browser, html, width, height, script))
                pairs.append(
                    {"name": f"{page}/{variant}", "base": panel_base, "candidate": name, **label}
                )
        browser.close()
    return pairs


def ensure(out: Path = OUT, viewport: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """The labelled pairs, rendered when missing or when the pages or this file changed."""
    return labelled.cached(
        out, fingerprint(viewport), lambda: render(out, viewport), "the analysis corpus"
    )


if __name__ == "__main__":
    print(f"{len(ensure())} pairs in {OUT}")
