"""`viewfinder upload --storybook DIR`: every story of a Storybook static build captured by the
capture engine, at each viewport, and uploaded as one build named ``title/name@WxH``. A story
that throws or never renders is uploaded as failed with the reason (its placeholder image says
it too), never left out."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from viewfinder.cli.client import ClientError

# Storybook marks the preview's body when a story rendered (sb-show-main), threw
# (sb-show-errordisplay, with the message in #error-message) or is missing (sb-show-nopreview).
STORY_READY = """async () => {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    const body = document.body;
    if (body && body.classList.contains("sb-show-errordisplay")) {
      const shown = document.querySelector("#error-message");
      const text = shown ? shown.textContent.trim() : "";
      return "the story threw: " + (text || "an error (no message)");
    }
    if (body && body.classList.contains("sb-show-nopreview")) {
      return "Storybook shows no preview for this story";
    }
    if (body && body.classList.contains("sb-show-main")) {
      await new Promise((done) => requestAnimationFrame(() => done()));
      return null;
    }
    await new Promise((done) => setTimeout(done, 25));
  }
  return "the story did not render within 15 s";
}"""


@dataclass(frozen=True)
class Story:
    id: str
    title: str
    name: str

    @property
    def path(self) -> str:
        return f"{self.title}/{self.name}"


@dataclass(frozen=True)
class Captured:
    name: str  # title/name@WxH
    png: bytes
    failure: str | None


def read_index(directory: Path) -> list[Story]:
    """The build's stories (docs entries left out), from index.json (Storybook 7 and later)
    or stories.json (6). Raises ClientError naming what is missing."""
    for file in ("index.json", "stories.json"):
        path = directory / file
        if path.is_file():
            break
    else:
        raise ClientError(
            f"{directory} has no index.json: point --storybook at a static build "
            "(`storybook build -o DIR`)"
        )
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
        entries = index.get("entries") or index.get("stories") or {}
        found = [
            Story(str(e["id"]), str(e["title"]), str(e["name"]))
            for e in entries.values()
            if e.get("type", "story") == "story"
        ]
    except (ValueError, AttributeError, KeyError, TypeError) as exc:
        raise ClientError(f"{path} is not a Storybook index ({exc})") from None
    return sorted(found, key=lambda s: s.path)


def choose(stories: list[Story], pattern: str | None) -> list[Story]:
    if pattern is None:
        return stories
    chosen = [s for s in stories if fnmatch.fnmatchcase(s.path, pattern)]
    if not chosen:
        raise ClientError(
            f"no story matches --stories {pattern!r} (stories are named title/name, e.g. "
            f"{stories[0].path!r})"
            if stories
            else "the Storybook has no stories"
        )
    return chosen


def capture(
    directory: Path, stories: list[Story], viewports: list[tuple[int, int]]
) -> Iterator[Captured]:
    """Each story at each viewport (the viewports of one story are taken together)."""
    # Here rather than at the top: the replay package loads the capture engine, and every
    # `viewfinder` command line (even --help) imports this module through upload.
    from viewfinder.capture import Policy, Viewport, capture_url
    from viewfinder.cli.local import settings_for
    from viewfinder.replay.static import StaticServer

    with StaticServer(directory) as served:
        host = served.url.removeprefix("http://")
        policy = Policy.from_settings(settings_for(None), allow=[host])
        shown = [Viewport(f"{w}x{h}", w, h) for w, h in viewports]
        for story in stories:
            url = f"http://{host}/iframe.html?id={quote(story.id)}&viewMode=story"
            shots = capture_url(
                url, policy=policy, viewports=shown, accessibility=False, ready=STORY_READY
            )
            for shot in shots:
                failure = shot.reason if shot.origin == "capture_failed" else None
                yield Captured(f"{story.path}@{shot.label}", shot.png, failure)
