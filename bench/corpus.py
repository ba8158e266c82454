"""Render the benchmark's corpus: three realistic pages and seven variants of each base, taken
with Debian's Chromium through Playwright, saved as PNG pairs under bench/.corpus/.

Run alone with ``python -m bench.corpus [--force]``; the engine benchmark calls ensure_corpus().
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from PIL import Image
from playwright.sync_api import Browser, sync_playwright

from tests.chromium import CHROMIUM, FLAGS

# Bump when the pages, the variants or the flags change, so stale corpora get re-rendered.
CORPUS_VERSION = 1

ROOT = Path(__file__).resolve().parent
PAGES = ROOT / "pages"
CORPUS = ROOT / ".corpus"
MANIFEST = CORPUS / "manifest.json"
VARIANTS = ("identical", "shift", "color", "text", "subpixel", "rotate", "taller")
TALLER_BY = 40
# Appended to the page's own CSS; the other variants change the markup or the viewport.
VARIANT_CSS = {
    "shift": '[data-bench="block"] { position: relative; top: 1px; }',
    "color": '[data-bench="button"] { background-color: #7c3aed !important;'
    " border-color: #7c3aed !important; }",
    "subpixel": "body { transform: translate(0.3px, 0.3px); }",
    "rotate": "body { transform: rotate(0.01deg); }",
}


@dataclass(frozen=True)
class Page:
    name: str
    file: str
    word: tuple[str, str]  # the text variant: a word found once in the page, one letter changed


@dataclass(frozen=True)
class Base:
    page: Page
    width: int  # viewport, CSS px
    height: int
    scale: int

    @property
    def size(self) -> str:
        return f"{self.width * self.scale}x{self.height * self.scale}"

    @property
    def name(self) -> str:
        return f"{self.page.name}@{self.size}"

    @property
    def slug(self) -> str:
        return f"{self.page.name}-{self.size}"


@dataclass(frozen=True)
class Pair:
    name: str
    page: str
    size: str
    variant: str
    base: str  # file names inside CORPUS
    candidate: str
    check: str | None = None  # identical pairs only: what the two renders turned out to be

    @property
    def base_path(self) -> Path:
        return CORPUS / self.base

    @property
    def candidate_path(self) -> Path:
        return CORPUS / self.candidate


DASHBOARD = Page("dashboard", "dashboard.html", ("Inventory", "Inventery"))
FORM = Page("form", "signup.html", ("organised", "organized"))
ARTICLE = Page("article", "article.html", ("chronometer", "chronomater"))
BASES = (
    Base(DASHBOARD, 1280, 800, 1),
    Base(FORM, 1280, 800, 1),
    Base(DASHBOARD, 1280, 800, 2),
    Base(ARTICLE, 1280, 8000, 1),
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fingerprint() -> str:
    """Hash of the page sources: a changed page re-renders even if nobody bumped the version."""
    digest = hashlib.sha256()
    for path in sorted(PAGES.glob("*.html")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def page_html(page: Page, variant: str) -> str:
    html = (PAGES / page.file).read_text(encoding="utf-8")
    if variant == "text":
        old, new = page.word
        if html.count(old) != 1:
            raise ValueError(f"{page.file}: {old!r} must occur exactly once for the text variant")
        html = html.replace(old, new)
    css = VARIANT_CSS.get(variant)
    if css:
        html = html.replace("</head>", f"<style>{css}</style>\n</head>", 1)
    return html


def shoot(browser: Browser, html: str, width: int, height: int, scale: int) -> bytes:
    # A fresh context per shot, so "identical" really means two independent renders.
    context = browser.new_context(
        viewport={"width": width, "height": height},
        device_scale_factor=scale,
        color_scheme="light",
        reduced_motion="reduce",
    )
    try:
        tab = context.new_page()
        tab.set_content(html, wait_until="load")
        tab.evaluate("document.fonts.ready.then(() => true)")
        return tab.screenshot(animations="disabled", caret="hide")
    finally:
        context.close()


def same_pixels(a: Path, b: Path) -> bool:
    with Image.open(a) as x, Image.open(b) as y:
        return x.size == y.size and x.convert("RGBA").tobytes() == y.convert("RGBA").tobytes()


def identical_check(a: Path, b: Path) -> str:
    if a.read_bytes() == b.read_bytes():
        return "byte-identical"
    return "pixel-identical" if same_pixels(a, b) else "DIFFERENT"


def render_base(browser: Browser, base: Base) -> list[Pair]:
    shot = base.slug + "-base.png"
    log(f"corpus: rendering {base.name}")
    (CORPUS / shot).write_bytes(
        shoot(browser, page_html(base.page, "base"), base.width, base.height, base.scale)
    )
    pairs = []
    for variant in VARIANTS:
        height = base.height + (TALLER_BY if variant == "taller" else 0)
        png = shoot(browser, page_html(base.page, variant), base.width, height, base.scale)
        candidate = f"{base.slug}-{variant}.png"
        (CORPUS / candidate).write_bytes(png)
        check = (
            identical_check(CORPUS / shot, CORPUS / candidate) if variant == "identical" else None
        )
        if check == "DIFFERENT":
            log(f"corpus: WARNING {base.name}: two renders of the same page differ")
        pairs.append(
            Pair(
                f"{base.name}/{variant}", base.page.name, base.size, variant, shot, candidate, check
            )
        )
    return pairs


def render() -> list[Pair]:
    CORPUS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
        try:
            version = browser.version
            pairs = [pair for base in BASES for pair in render_base(browser, base)]
        finally:
            browser.close()
    manifest: dict[str, Any] = {
        "version": CORPUS_VERSION,
        "pages": fingerprint(),
        "chromium": version,
        "flags": list(FLAGS),
        "pairs": [asdict(pair) for pair in pairs],
    }
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    checks = ", ".join(f"{p.name.split('/')[0]} {p.check}" for p in pairs if p.check)
    log(f"corpus: {len(pairs)} pairs written to {CORPUS} (identical pairs: {checks})")
    return pairs


def load() -> list[Pair] | None:
    """The manifest's pairs, or None when it is missing, stale or points at missing files."""
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("version") != CORPUS_VERSION or manifest.get("pages") != fingerprint():
        return None
    pairs = [Pair(**entry) for entry in manifest["pairs"]]
    if not all(p.base_path.is_file() and p.candidate_path.is_file() for p in pairs):
        return None
    return pairs


def ensure_corpus(force: bool = False) -> list[Pair]:
    pairs = None if force else load()
    if pairs is not None:
        log(f"corpus: {len(pairs)} pairs up to date in {CORPUS}")
        return pairs
    return render()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--force", action="store_true", help="render even when up to date")
    ensure_corpus(force=parser.parse_args().force)


if __name__ == "__main__":
    main()
