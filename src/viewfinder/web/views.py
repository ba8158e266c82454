"""What each page shows, read through the services in one blocking call per page (run off the
event loop by the routes). Nothing here decides anything: it gathers records and arranges them
for the templates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from viewfinder.services import builds, diffs, images, threads
from viewfinder.services.builds.records import BuildRecord, StoryRecord
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.env import Actor, Env
from viewfinder.services.images import ImageRecord
from viewfinder.services.threads import ThreadRecord

# The order a person reads a build in; unchanged stories come last and start collapsed.
GROUPS = ("changed", "new", "removed", "failed", "unchanged")
GROUP_TITLES = {
    "changed": "Changed",
    "new": "New",
    "removed": "Removed",
    "failed": "Failed",
    "unchanged": "Unchanged",
    "pending": "Still comparing",
}
PAGE = 100
# A story list longer than this is cut, with a note: nobody scrolls through more on one page.
MAX_LISTED = 2000
MODES = (
    ("side", "Side by side"),
    ("overlay", "Overlay"),
    ("swipe", "Swipe"),
    ("diff", "Diff only"),
    ("changes", "Changes"),
)
# Images taller than this are loaded in pixel pages of this many rows as the person scrolls.
PAGE_ROWS = 1024


@dataclass(frozen=True)
class Group:
    state: str
    title: str
    stories: list[StoryRecord]
    total: int

    @property
    def cut(self) -> int:
        return self.total - len(self.stories)


@dataclass(frozen=True)
class BuildView:
    build: BuildRecord
    groups: list[Group]

    def sequence(self) -> list[StoryRecord]:
        return [story for group in self.groups for story in group.stories]


def _whole_list(
    env: Env, actor: Actor, build_id: str, state: str, first: list[StoryRecord], cursor: str | None
) -> list[StoryRecord]:
    items = list(first)
    while cursor and len(items) < MAX_LISTED:
        more = builds.list_build_stories(
            env, actor, build_id, state=state, cursor=cursor, limit=PAGE
        )
        items += more.items
        cursor = more.next_cursor
    return items


def build_view(env: Env, actor: Actor, build_id: str) -> BuildView:
    """A build with every story, grouped, in the services' order within each group."""
    detail = builds.get_build(env, actor, build_id=build_id, limit=PAGE)
    record = BuildRecord(**{k: getattr(detail, k) for k in BuildRecord.model_fields})
    groups = []
    for state in GROUPS:
        listed = getattr(detail, state)
        stories = _whole_list(env, actor, build_id, state, listed.items, listed.next_cursor)
        total = getattr(record.counts, state)
        groups.append(Group(state, GROUP_TITLES[state], stories, max(total, len(stories))))
    if record.counts.pending:
        first = builds.list_build_stories(env, actor, build_id, state="pending", limit=PAGE)
        pending = _whole_list(env, actor, build_id, "pending", first.items, first.next_cursor)
        groups.append(Group("pending", GROUP_TITLES["pending"], pending, record.counts.pending))
    return BuildView(record, groups)


@dataclass(frozen=True)
class Pane:
    """One image a viewer can show: where its pixels come from and how big it is (0 when the
    size is unknown and the image is loaded whole)."""

    which: str
    src: str
    width: int
    height: int

    def data(self) -> dict[str, Any]:
        return {"src": self.src, "width": self.width, "height": self.height}


@dataclass(frozen=True)
class StoryView:
    story: StoryRecord
    build: BuildView
    diff: DiffRecord | None
    threads: list[ThreadRecord]
    panes: dict[str, Pane]
    previous: StoryRecord | None
    next: StoryRecord | None
    position: int
    modes: list[tuple[str, str, bool]] = field(default_factory=list)


def _size(record: ImageRecord | None) -> tuple[int, int]:
    if record is None:
        return 0, 0
    return record.width or 0, record.height or 0


def _panes(env: Env, actor: Actor, story: StoryRecord, diff: DiffRecord | None) -> dict[str, Pane]:
    if diff is None:
        # A removed story has no comparison; its image is the baseline it no longer matches.
        if story.urls.baseline or story.urls.candidate:
            which = "before" if story.state == "removed" else "after"
            return {which: Pane(which, f"/ui/img/stories/{story.id}", 0, 0)}
        return {}
    base = f"/ui/img/diffs/{diff.id}"
    panes = {}
    after_w, after_h = _size(images.get_image(env, actor, diff.image_id))
    panes["after"] = Pane("after", f"{base}/after", after_w, after_h)
    if diff.baseline_image_id:
        before_w, before_h = _size(images.get_image(env, actor, diff.baseline_image_id))
        panes["before"] = Pane("before", f"{base}/before", before_w, before_h)
    if diff.urls.diff and diff.width and diff.height:
        panes["diff"] = Pane("diff", f"{base}/diff", diff.width, diff.height)
    return panes


def _modes(panes: dict[str, Pane], diff: DiffRecord | None) -> list[tuple[str, str, bool]]:
    both = "before" in panes and "after" in panes
    usable = {
        "side": both,
        "overlay": both,
        "swipe": both,
        "diff": "diff" in panes,
        "changes": both and diff is not None and bool(diff.regions),
    }
    return [(mode, title, usable[mode]) for mode, title in MODES]


def story_view(env: Env, actor: Actor, story_id: str) -> StoryView:
    story = builds.get_story(env, actor, story_id)
    diff = diffs.get_diff(env, actor, story.diff_id) if story.diff_id else None
    thread_list = threads.list_comments(env, actor, diff.id) if diff else []
    build = build_view(env, actor, story.build_id)
    sequence = build.sequence()
    ids = [s.id for s in sequence]
    index = ids.index(story.id) if story.id in ids else -1
    panes = _panes(env, actor, story, diff)
    return StoryView(
        story=story,
        build=build,
        diff=diff,
        threads=thread_list,
        panes=panes,
        previous=sequence[index - 1] if index > 0 else None,
        next=sequence[index + 1] if 0 <= index < len(sequence) - 1 else None,
        position=index + 1,
        modes=_modes(panes, diff),
    )


def pick_mode(view: StoryView, asked: str | None) -> str:
    """The asked view mode when this story has it, else the first it has ("image" when the
    story has a single image)."""
    usable = [mode for mode, _, ok in view.modes if ok]
    if asked in usable:
        return str(asked)
    return usable[0] if usable else "image"


def markers(thread_list: list[ThreadRecord]) -> list[dict[str, Any]]:
    """The anchored threads, numbered as the thread panel numbers them, for drawing."""
    return [
        {
            "id": t.id,
            "n": n,
            "side": t.side,
            "status": t.status,
            "anchor": t.anchor.model_dump() if t.anchor else None,
        }
        for n, t in enumerate(thread_list, 1)
    ]
