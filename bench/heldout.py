"""Held-out check of the change analysis: labelled pairs on page styles it was never tuned on
(bench/heldout_pages.py), at device scales 1, 2 and 3, light and dark, each with the style
corpus's variants and the analysis corpus's (tests/style_corpus.py, tests/analysis_corpus.py).

Run from the repository root with ``python -m bench.heldout``. The pairs are rendered with
Debian's Chromium when missing (into bench/.heldout/, ignored by git). Every pair is compared
as the server does by default and judged against its label: a real change called noise, a
noise pair reported as a change, the wrong kind, the wrong verdict where the label names one,
a move vector not found. Scale 3 (phones, as Playwright's iPhone devices render) is reported
apart, twice: as a client that does not say the scale gets it judged (the allowances are set
for scales 1 and 2), and as one that does (``scale=3``, analysis/reach.py). Each miss goes
to stderr, the ``heldout:`` line to stdout and every judgement to bench/.results/heldout.json.

This is a check, not a target: a rule changed until these pages pass would leave nothing to
tell whether the analysis holds on pages it has not seen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

from bench import heldout_pages
from tests import analysis_corpus, labelled, style_corpus, style_pages
from tests.chromium import CHROMIUM, FLAGS
from viewfinder.imaging import Comparison, compare

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / ".heldout"
RESULTS = REPO / "bench" / ".results"
# scale: viewport in CSS px (a phone's at scale 3)
SCALES = {1: (640, 560), 2: (640, 560), 3: (390, 700)}
THEMES = ("light", "dark")
CARD = '[data-t="card"]'
# The analysis corpus's block moves below: on these pages the card moved down lands on what
# follows it (an overlap, whatever the label says), so they are left out.
LEFT_OUT = {"move_down_24", "move_diag", "taller", "button_color"}


def variants() -> Iterator[tuple[str, str, str, str, Any]]:
    """(name, css, script, the base's script, label) of every variant; the label is a dict or
    a function of the scale. Style corpus variants edit the page's HTML too (``html_of``)."""
    for name, (_, css, script, label) in style_corpus.VARIANTS.items():
        yield name, css, script, "", label
    for name, (css, script, label) in analysis_corpus.VARIANTS.items():
        if name not in LEFT_OUT:
            yield name, css.replace(analysis_corpus.BLOCK, CARD), script, "", label
    for name, (src, caption, label) in analysis_corpus.PANEL_VARIANTS.items():
        panel = analysis_corpus.panel_script()
        yield name, "", analysis_corpus.panel_script(src, caption), panel, label


def html_of(style: str, variant: str, css: str) -> str:
    if variant in style_corpus.VARIANTS:
        return style_corpus.html_of(style, variant)
    html = style_pages.page(style)
    if variant == "text_char":
        word = style_pages.WORDS[style]
        html = html.replace(word, style_corpus.misspelt(word))
    return html.replace("</head>", f"<style>{css}</style></head>", 1) if css else html


def shoot(tab: Page, html: str, script: str) -> bytes:
    tab.set_content(html, wait_until="load")
    if script:
        tab.evaluate(f"async () => {{ {script} }}")
    tab.evaluate("() => document.fonts.ready")
    return tab.screenshot(animations="disabled", caret="hide")


def render(out: Path) -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = []
    with sync_playwright() as p, heldout_pages.registered() as styles:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
        for scale, (width, height) in SCALES.items():
            for theme in THEMES:
                context = browser.new_context(
                    viewport={"width": width, "height": height},
                    device_scale_factor=scale,
                    color_scheme=theme,  # type: ignore[arg-type]
                    reduced_motion="reduce",
                )
                tab = context.new_page()
                for style in styles:
                    stem = f"{style}-{theme}-{scale}x"
                    bases: dict[str, str] = {}
                    for name, css, script, base_script, label in variants():
                        if base_script not in bases:
                            bases[base_script] = f"{stem}-base{len(bases)}.png"
                            shot = shoot(tab, style_pages.page(style), base_script)
                            (out / bases[base_script]).write_bytes(shot)
                        candidate = f"{stem}-{name}.png"
                        shot = shoot(tab, html_of(style, name, css), script)
                        (out / candidate).write_bytes(shot)
                        found = dict(label(scale)) if callable(label) else dict(label)
                        if "moves" in found and not callable(label):
                            found["moves"] = [[dx * scale, dy * scale] for dx, dy in found["moves"]]
                        pairs.append(
                            {
                                "name": f"{stem}/{name}",
                                "scale": scale,
                                "base": bases[base_script],
                                "candidate": candidate,
                                **found,
                            }
                        )
                context.close()
        browser.close()
    return pairs


def fingerprint() -> str:
    digest = hashlib.sha256(repr((FLAGS, SCALES)).encode())
    for module in (heldout_pages, style_corpus, style_pages, analysis_corpus):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


def ensure(out: Path = OUT) -> list[dict[str, Any]]:
    """The labelled pairs, rendered when missing or when a page, a variant or this file
    changed."""
    return labelled.cached(out, fingerprint(), lambda: render(out), "the held-out pairs")


# What a judgement can get wrong, in the order the line gives them.
MISSES = {
    "called_noise": "real changes called noise",
    "noise_changed": "noise reported as changes",
    "kind": "kinds",
    "verdict": "verdicts",
    "moves": "move vectors",
}


def misses(pair: dict[str, Any], result: Comparison) -> list[tuple[str, str]]:
    """What the analysis got wrong about a pair by its label, as (one of MISSES, details)."""
    analysis = result.analysis
    if pair["kind"] == "noise":
        if result.changed or analysis.kind not in ("noise", "identical"):
            return [("noise_changed", f"noise reported as {analysis.kind}")]
        return []
    if analysis.noise or not result.changed:
        return [("called_noise", "real change called noise")]
    wrong = []
    if analysis.kind != pair["kind"]:
        wrong.append(("kind", f"kind {analysis.kind}, not {pair['kind']}"))
    if "verdict" in pair and analysis.verdict != pair["verdict"]:
        wrong.append(("verdict", f"verdict {analysis.verdict}, not {pair['verdict']}"))
    moves = {(c.dx, c.dy) for c in analysis.changes if c.kind == "move"}
    if "moves" in pair and not {tuple(m) for m in pair["moves"]} <= moves:
        wrong.append(("moves", f"moves {sorted(moves)}, not {pair['moves']}"))
    return wrong


def tally(judged: list[dict[str, Any]]) -> str:
    count = Counter(what for j in judged for what, _ in j["wrong"])
    wrong = sum(1 for j in judged if j["wrong"])
    each = ", ".join(f"{words} {count[what]}" for what, words in MISSES.items())
    return f"{wrong} of {len(judged)} wrong ({each})"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.heldout", description=__doc__)
    parser.add_argument("--force", action="store_true", help="render the pairs again")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.force:
        (OUT / "labels.json").unlink(missing_ok=True)
    pairs = ensure()
    judged, same = [], 0
    for pair in pairs:
        base, candidate = (OUT / pair["base"]).read_bytes(), (OUT / pair["candidate"]).read_bytes()
        if base == candidate:
            same += 1  # the variant changed nothing on this page: no label to judge
            continue
        result = compare(base, candidate, ignore_noise=True)
        wrong = misses(pair, result)
        if wrong:
            said = "; ".join(details for _, details in wrong)
            print(f"heldout: {pair['name']}: {said} ({result.analysis.summary})", file=sys.stderr)
        record = {"name": pair["name"], "scale": pair["scale"], "wrong": wrong}
        if pair["scale"] > 2:
            # As a client that sends the scale gets it judged (compare(scale=...)).
            result = compare(base, candidate, ignore_noise=True, scale=pair["scale"])
            record["told_wrong"] = misses(pair, result)
            for _, details in record["told_wrong"]:
                print(f"heldout: {pair['name']} told the scale: {details}", file=sys.stderr)
        judged.append(record)
    low = [j for j in judged if j["scale"] < 3]
    phone = [j for j in judged if j["scale"] == 3]
    phone_told = [{"wrong": j["told_wrong"]} for j in phone]
    line = (
        f"heldout ({len(heldout_pages.TEMPLATES)} page styles never tuned on, {same} pairs the "
        f"variant left identical): scales 1-2 {tally(low)}; scale 3 {tally(phone)}; scale 3 "
        f"told the scale {tally(phone_told)}"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "heldout.json").write_text(
        json.dumps({"line": line, "pairs": judged}, indent=1) + "\n", encoding="utf-8"
    )
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
