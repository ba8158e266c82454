"""Render the build benchmark's corpus: a base build of N stories and a head build with M of
them changed visibly, under bench/.corpus-build/<N>x<M>/{base,head}/ with a manifest.

Run alone with ``python -m bench.build_corpus [--stories 500] [--changed 25] [--force]``;
bench.build calls ensure_build_corpus().
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

from bench import build_pages
from bench.build_pages import Story, change_for, changed_indices, story
from bench.corpus import CHROMIUM, FLAGS

# Bump when the way stories are rendered changes, so stale corpora get re-rendered.
CORPUS_VERSION = 1

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".corpus-build"
WIDTH, HEIGHT, SCALE = 1280, 800, 1
PROGRESS_EVERY = 50
# What the pages are made of: a change to any of these re-renders even without a version bump.
SOURCES = (ROOT / "build_pages.py", ROOT / "build_words.py")


@dataclass(frozen=True)
class BuildCorpus:
    root: Path
    stories: list[Story]
    changed: dict[str, str]  # story name -> the kind of change made in the head build
    manifest: dict[str, Any]

    @property
    def base(self) -> Path:
        return self.root / "base"

    @property
    def head(self) -> Path:
        return self.root / "head"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fingerprint() -> str:
    digest = hashlib.sha256()
    for path in sorted(build_pages.TEMPLATES.iterdir()) + list(SOURCES):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    digest.update("\0".join(FLAGS).encode())
    return digest.hexdigest()[:16]


def plan(stories: int, changed: int) -> tuple[list[Story], dict[str, str]]:
    if not 0 < changed <= stories:
        raise ValueError("need 0 < changed <= stories")
    items = [story(i) for i in range(stories)]
    changes = {
        items[index].name: change_for(n)
        for n, index in enumerate(changed_indices(stories, changed))
    }
    return items, changes


def shoot(tab: Page, html: str) -> bytes:
    tab.set_content(html, wait_until="load")
    tab.evaluate("document.fonts.ready.then(() => true)")
    return tab.screenshot(animations="disabled", caret="hide")


def render_set(tab: Page, folder: Path, items: list[Story], changes: dict[str, str]) -> None:
    label = folder.name
    start = time.perf_counter()
    for n, item in enumerate(items, 1):
        path = folder / item.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(shoot(tab, build_pages.html(item, changes.get(item.name))))
        if n % PROGRESS_EVERY == 0 or n == len(items):
            rate = n / (time.perf_counter() - start)
            log(f"build corpus: {label} {n}/{len(items)} ({rate:.1f} shots/s)")


def check_head(corpus: BuildCorpus) -> dict[str, Any]:
    """Unchanged head stories must be byte-identical to base (or are replaced by base's bytes,
    and the manifest says so); changed ones must differ."""
    identical, copied = 0, []
    for item in corpus.stories:
        base, head = corpus.base / item.file, corpus.head / item.file
        same = base.read_bytes() == head.read_bytes()
        if item.name in corpus.changed:
            if same:
                change = corpus.changed[item.name]
                raise RuntimeError(f"{item.name}: the {change} change is not visible")
        elif same:
            identical += 1
        else:
            shutil.copyfile(base, head)
            copied.append(item.name)
    if copied:
        log(f"build corpus: WARNING {len(copied)} re-renders differed from base; copied base")
    return {
        "rerendered": len(corpus.stories) - len(corpus.changed),
        "byte_identical": identical,
        "copied_from_base": copied,
    }


def distinct_bases(corpus: BuildCorpus) -> int:
    digests = {hashlib.sha256((corpus.base / s.file).read_bytes()).digest() for s in corpus.stories}
    if len(digests) != len(corpus.stories):
        raise RuntimeError(f"only {len(digests)} distinct base images in {len(corpus.stories)}")
    return len(digests)


def render(root: Path, items: list[Story], changes: dict[str, str]) -> BuildCorpus:
    shutil.rmtree(root, ignore_errors=True)  # no stale stories from an older corpus
    corpus = BuildCorpus(root, items, changes, {})
    start = time.perf_counter()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
        try:
            # One context and one tab for every shot: a new context per shot costs more than
            # the shot itself, and the byte-identity check below shows whether reuse leaks.
            context = browser.new_context(
                viewport={"width": WIDTH, "height": HEIGHT},
                device_scale_factor=SCALE,
                color_scheme="light",
                reduced_motion="reduce",
            )
            tab = context.new_page()
            render_set(tab, corpus.base, items, {})
            render_set(tab, corpus.head, items, changes)
            version = browser.version
        finally:
            browser.close()
    manifest: dict[str, Any] = {
        "version": CORPUS_VERSION,
        "pages": fingerprint(),
        "stories": len(items),
        "changed": len(changes),
        "viewport": f"{WIDTH}x{HEIGHT}",
        "scale": SCALE,
        "chromium": version,
        "flags": list(FLAGS),
        "distinct_base_images": distinct_bases(corpus),
        "head_unchanged": check_head(corpus),
        "changed_stories": [{"name": n, "change": c} for n, c in changes.items()],
        "render_seconds": round(time.perf_counter() - start, 1),
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    unchanged = manifest["head_unchanged"]
    log(
        f"build corpus: {len(items)} stories in {root} ({manifest['render_seconds']} s); "
        f"{unchanged['byte_identical']}/{unchanged['rerendered']} unchanged re-renders "
        "byte-identical"
    )
    return BuildCorpus(root, items, changes, manifest)


def load(root: Path, items: list[Story], changes: dict[str, str]) -> BuildCorpus | None:
    """The cached corpus, or None when it is missing, stale or incomplete."""
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("version") != CORPUS_VERSION or manifest.get("pages") != fingerprint():
        return None
    corpus = BuildCorpus(root, items, changes, manifest)
    files = [folder / s.file for folder in (corpus.base, corpus.head) for s in items]
    return corpus if all(f.is_file() for f in files) else None


def ensure_build_corpus(stories: int, changed: int, force: bool = False) -> BuildCorpus:
    items, changes = plan(stories, changed)
    root = CACHE / f"{stories}x{changed}"
    corpus = None if force else load(root, items, changes)
    if corpus is not None:
        log(f"build corpus: {stories} stories ({changed} changed) up to date in {root}")
        return corpus
    return render(root, items, changes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stories", type=int, default=500)
    parser.add_argument("--changed", type=int, default=25)
    parser.add_argument("--force", action="store_true", help="render even when up to date")
    args = parser.parse_args()
    ensure_build_corpus(args.stories, args.changed, force=args.force)


if __name__ == "__main__":
    main()
