"""The style corpus: labelled pairs of pages in four styles (tests/style_pages.py), at device
scales 1 and 2, in light and dark, so that a rule tuned to one page fails on another.

Every base (style x scale x theme) gets the same variants, each with a label that comes from
how it was made:

- glyphs re-rasterised, nothing said or placed differently (noise): the text paragraph moved
  by a fraction of a pixel, rotated by 0.02 degree, its letter-spacing off by 0.01 px, or drawn
  without hinting; and, as their counterparts that must stay content: one letter changed, the
  font a pixel larger, bold, a word added;
- a faint tint of a large card, each pixel's delta under the colour threshold (a colour
  change), and the same card one level darker (noise);
- a small icon removed with nothing else moving, a digit changed (content);
- words appended to a short line (one content change);
- a 24 px banner inserted at the top, pushing the page down (a layout shift, inserted at the
  top, moved down 24 px times the scale);
- the content column pushed 10 px right by a wider sidebar or margin, its text wrapped again
  and its grid narrowed (a layout shift, moved right 10 px times the scale).

The same variants are also rendered on a phone, 390x700 CSS px at device scale 3
(``ensure_phone``), where the analysis is told the scale.

The renders are made with Debian's Chromium when first needed and cached in the tests' render
cache (tests/labelled.py), like the analysis corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

from tests import labelled, style_pages
from tests.chromium import CHROMIUM, FLAGS

OUT = labelled.CACHE / "style-corpus"
# The same pages on a phone at device scale 3 (as Playwright's iPhones render): see ensure_phone.
PHONE_OUT = labelled.CACHE / "style-corpus-phone"
PHONE_SCALE = 3
PHONE_VIEWPORT = (390, 700)  # CSS px
STYLES = tuple(style_pages.TEMPLATES)
SCALES = (1, 2)
THEMES = ("light", "dark")
VIEWPORT = (640, 560)  # CSS px
TEXT = '[data-t="text"]'
CARD = '[data-t="card"]'


def one_level_darker(colour: str) -> str:
    return "#" + "".join(f"{max(int(colour[i : i + 2], 16) - 1, 0):02x}" for i in (1, 3, 5))


def card_css(colours: dict[str, str]) -> str:
    return (
        f"{CARD} {{ background: {colours['light']} !important; }} @media (prefers-color-scheme:"
        f" dark) {{ {CARD} {{ background: {colours['dark']} !important; }} }}"
    )


def misspelt(word: str) -> str:
    return word[:-2] + ("o" if word[-2] != "o" else "a") + word[-1]


# A variant: (HTML edit of the page, CSS appended, script run after load, label for a scale).
Edit = Callable[[str, str], str]
Label = Callable[[int], dict[str, Any]]


def _same(html: str, style: str) -> str:
    return html


def _word(change: Callable[[str], str]) -> Edit:
    def edit(html: str, style: str) -> str:
        word = style_pages.WORDS[style]
        assert html.count(word) == 1, (style, word)
        return html.replace(word, change(word))

    return edit


def _column_pushed(html: str, style: str) -> str:
    css = style_pages.COLUMN_PUSHED[style]
    return html.replace("</head>", f"<style>{css}</style></head>", 1)


def _card(kind: str) -> Edit:
    def edit(html: str, style: str) -> str:
        if kind == "tint":
            colours = style_pages.TINTS[style]
        else:
            colours = {t: one_level_darker(style_pages.THEMES[style][t][3]) for t in THEMES}
        return html.replace("</head>", f"<style>{card_css(colours)}</style></head>", 1)

    return edit


NOISE: Label = lambda scale: {"kind": "noise"}  # noqa: E731
CONTENT: Label = lambda scale: {"kind": "content"}  # noqa: E731
VARIANTS: dict[str, tuple[Edit, str, str, Label]] = {
    "glyph_subpixel": (_same, f"{TEXT} {{ transform: translate(0.3px, 0.2px); }}", "", NOISE),
    "glyph_rotate": (_same, f"{TEXT} {{ transform: rotate(0.02deg); }}", "", NOISE),
    "glyph_spacing": (_same, f"{TEXT} {{ letter-spacing: 0.01px; }}", "", NOISE),
    "glyph_precision": (_same, f"{TEXT} {{ text-rendering: geometricPrecision; }}", "", NOISE),
    "glyph_char": (_word(misspelt), "", "", CONTENT),
    "glyph_size": (_same, f"{TEXT} {{ font-size: calc(1em + 1px); }}", "", CONTENT),
    "glyph_weight": (_same, f"{TEXT} {{ font-weight: bold; }}", "", CONTENT),
    "glyph_word": (_word(lambda w: f"also {w}"), "", "", CONTENT),
    "tint": (_card("tint"), "", "", lambda scale: {"kind": "color"}),
    "tint_one_level": (_card("one_level"), "", "", NOISE),
    "icon_removed": (_same, '[data-t="icon"] { visibility: hidden; }', "", CONTENT),
    "digit": (
        _same,
        "",
        "document.querySelector('[data-t=digit]').textContent = '1,294';",
        CONTENT,
    ),
    "append": (
        _same,
        "",
        "document.querySelector('[data-t=line]').append(' and checked twice since');",
        lambda scale: {"kind": "content", "changes": 1},
    ),
    "column": (
        _column_pushed,
        "",
        "",
        lambda scale: {"kind": "layout_shift", "moves": [[10 * scale, 0]]},
    ),
    "banner": (
        _same,
        "",
        "const d = document.createElement('div'); d.textContent = 'Service notice'; d.style."
        "cssText = 'height:24px;line-height:24px;padding:0 12px;background:#fde68a;color:#78350f;"
        "font:12px sans-serif;flex:0 0 100%'; document.body.prepend(d);"
        "document.body.style.flexWrap = 'wrap';",
        lambda scale: {"kind": "layout_shift", "moves": [[0, 24 * scale]], "inserted": True},
    ),
}


def html_of(style: str, variant: str | None) -> str:
    html = style_pages.page(style)
    if variant is None:
        return html
    edit, css, _, _ = VARIANTS[variant]
    html = edit(html, style)
    if css:
        html = html.replace("</head>", f"<style>{css}</style></head>", 1)
    return html


def shoot(tab: Page, html: str, script: str) -> bytes:
    tab.set_content(html, wait_until="load")
    if script:
        tab.evaluate(f"() => {{ {script} }}")
    tab.evaluate("() => document.fonts.ready")
    return tab.screenshot(animations="disabled", caret="hide")


def fingerprint() -> str:
    digest = hashlib.sha256(repr(FLAGS).encode())
    for module in (__file__, style_pages.__file__):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()[:16]


def render(
    out: Path = OUT, scales: tuple[int, ...] = SCALES, viewport: tuple[int, int] = VIEWPORT
) -> list[dict[str, Any]]:
    """Render every pair into ``out``; returns the labelled pairs."""
    out.mkdir(parents=True, exist_ok=True)
    pairs: list[dict[str, Any]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
        for scale in scales:
            for theme in THEMES:
                context = browser.new_context(
                    viewport={"width": viewport[0], "height": viewport[1]},
                    device_scale_factor=scale,
                    color_scheme=theme,  # type: ignore[arg-type]
                    reduced_motion="reduce",
                )
                tab = context.new_page()
                for style in STYLES:
                    stem = f"{style}-{theme}-{scale}x"
                    base = f"{stem}-base.png"
                    (out / base).write_bytes(shoot(tab, html_of(style, None), ""))
                    for variant, (_, _, script, label) in VARIANTS.items():
                        name = f"{stem}-{variant}.png"
                        (out / name).write_bytes(shoot(tab, html_of(style, variant), script))
                        pairs.append(
                            {
                                "name": f"{stem}/{variant}",
                                "style": style,
                                "theme": theme,
                                "scale": scale,
                                "variant": variant,
                                "base": base,
                                "candidate": name,
                                **label(scale),
                            }
                        )
                context.close()
        browser.close()
    return pairs


def ensure(out: Path = OUT) -> list[dict[str, Any]]:
    """The labelled pairs, rendered when missing or when the pages or this file changed."""
    return labelled.cached(out, fingerprint(), lambda: render(out), "the style corpus")


def ensure_phone(out: Path = PHONE_OUT) -> list[dict[str, Any]]:
    """The same variants on a phone at device scale 3, 390x700 CSS px. At that width two of
    them are not what their label says: the docs page's paragraph set a pixel larger takes one
    more line and pushes the page down (a layout shift), and the admin page's banner pushes
    its content column below the sidebar, off the screen (content gone). Those two are left
    out."""
    pairs = labelled.cached(
        out,
        fingerprint(),
        lambda: render(out, (PHONE_SCALE,), PHONE_VIEWPORT),
        "the style corpus on a phone",
    )
    return [p for p in pairs if (p["style"], p["variant"]) not in PHONE_RELABELLED]


PHONE_RELABELLED = {("docs", "glyph_size"), ("admin", "banner")}


def phone_pair(name: str) -> tuple[bytes, bytes]:
    """The base's and the candidate's PNG of the phone pair named ``name``."""
    pair = next(p for p in ensure_phone() if p["name"] == name)
    return (PHONE_OUT / pair["base"]).read_bytes(), (PHONE_OUT / pair["candidate"]).read_bytes()


if __name__ == "__main__":
    print(f"{len(ensure())} pairs in {OUT}")
