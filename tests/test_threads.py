"""Comment threads: bodies, anchors, sides, replies, resolution, authorship."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, drain, shot
from viewfinder.errors import Forbidden, InvalidInput, NotFound
from viewfinder.services import projects, pushes, threads
from viewfinder.services.env import Env


@pytest.fixture
def diff(env: Env, keys: Keys) -> str:
    pushes.push(env, keys.ci, shot(), name="home", context_key="docs", compare=True)
    result = pushes.push(
        env,
        keys.ci,
        shot(box=(0, 0, 9, 9)),
        name="home",
        context_key="docs",
        compare=True,
        wait_seconds=0,
    )
    drain(env)
    assert result.diff is not None
    return result.diff.id


def test_a_thread_keeps_its_anchor_side_and_author(env: Env, keys: Keys, diff: str) -> None:
    anchor = {"type": "rect", "x": 0.1, "y": 0.2, "w": 0.3, "h": 0.4}
    root = threads.create_comment(
        env, keys.agent, diff, "Misaligned?", anchor=anchor, side="before"
    )
    reply = threads.reply(env, keys.admin, root.id, "Intended.")
    assert reply.side == "before" and reply.anchor is None and reply.parent_id == root.id
    (listed,) = threads.list_comments(env, keys.ci, diff)
    assert listed.anchor is not None and listed.anchor.model_dump() == anchor
    assert listed.author.is_agent and not listed.replies[0].author.is_agent
    assert [r.body for r in listed.replies] == ["Intended."]


@pytest.mark.parametrize(
    "anchor",
    [
        {"type": "point", "x": 0.5, "y": 0.5},
        {"type": "path", "points": [{"x": 0, "y": 0}, {"x": 1, "y": 1}], "closed": True},
        None,
    ],
)
def test_point_path_and_whole_image_anchors_are_accepted(
    env: Env, keys: Keys, diff: str, anchor: object
) -> None:
    assert threads.create_comment(env, keys.agent, diff, "here", anchor=anchor).status == "open"


@pytest.mark.parametrize(
    ("body", "anchor", "side", "message"),
    [
        ("", None, "after", "empty"),
        ("x" * 4001, None, "after", "this one has 4001"),
        ("ok", {"type": "point", "x": 1.5, "y": 0}, "after", "coordinates are 0 to 1"),
        ("ok", {"type": "path", "points": [{"x": 0, "y": 0}]}, "after", "invalid anchor"),
        ("ok", {"type": "circle"}, "after", "invalid anchor"),
        ("ok", None, "left", "side is after"),
    ],
)
def test_bad_comments_are_refused(
    env: Env, keys: Keys, diff: str, body: str, anchor: object, side: str, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        threads.create_comment(env, keys.agent, diff, body, anchor=anchor, side=side)
    assert threads.list_comments(env, keys.agent, diff) == []


def test_resolving_and_replying_reopens(env: Env, keys: Keys, diff: str) -> None:
    root = threads.create_comment(env, keys.agent, diff, "?")
    reply = threads.reply(env, keys.agent, root.id, "answer")
    resolved = threads.resolve_comment(env, keys.agent, reply.id)  # a reply resolves its thread
    assert resolved.id == root.id and resolved.status == "resolved"
    assert threads.list_comments(env, keys.agent, diff, status="open") == []
    threads.reply(env, keys.agent, root.id, "one more thing")
    assert threads.list_comments(env, keys.agent, diff)[0].status == "open"


def test_only_the_author_or_an_admin_edits_and_deletes(env: Env, keys: Keys, diff: str) -> None:
    root = threads.create_comment(env, keys.agent, diff, "first")
    reply = threads.reply(env, keys.agent, root.id, "second")
    assert threads.update_comment(env, keys.agent, root.id, "edited").body == "edited"
    colleague = projects.authenticate(
        env, projects.create_key(env, keys.admin, roles=["review"], label="bot").key
    )
    with pytest.raises(Forbidden, match="only the author"):
        threads.update_comment(env, colleague, root.id, "hijack")
    threads.delete_comment(env, keys.admin, root.id)
    with pytest.raises(NotFound):
        threads.reply(env, keys.agent, reply.id, "gone")
    assert threads.list_comments(env, keys.agent, diff) == []


def test_a_rect_drawn_past_the_edge_is_clipped_to_the_image(
    env: Env, keys: Keys, diff: str
) -> None:
    rect = {"type": "rect", "x": 0.8, "y": 0.5, "w": 0.5, "h": 0.75}
    made = threads.create_comment(env, keys.agent, diff, "edge", anchor=rect)
    assert made.anchor is not None
    assert made.anchor.model_dump() == pytest.approx(
        {"type": "rect", "x": 0.8, "y": 0.5, "w": 0.2, "h": 0.5}
    )
