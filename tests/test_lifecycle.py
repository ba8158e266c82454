"""The lifecycle of threads on any subject: marks move open -> in_progress -> resolved ->
verified with the moves each actor may make, findings never hold a decision back, and each
record says what its viewer may do with it."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, drain, shot
from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound
from viewfinder.services import diffs, projects, pushes, reviews, threads
from viewfinder.services.env import Actor, Env
from viewfinder.services.threads import On

RECT = {"type": "rect", "x": 0.1, "y": 0.1, "w": 0.2, "h": 0.2}


@pytest.fixture
def person(env: Env, keys: Keys) -> Actor:
    """A person's key with the review role (not an agent)."""
    made = projects.create_key(env, None, roles=["review"], label="dana", kind="person")
    return projects.authenticate(env, made.key)


@pytest.fixture
def image(env: Env, keys: Keys) -> str:
    """A stored screenshot, the subject a checkup marks."""
    return pushes.push(env, keys.ci, shot(), name="home", context_key="checkup").image_id


@pytest.fixture
def diff(env: Env, keys: Keys) -> str:
    pushes.push(env, keys.ci, shot(), name="home", context_key="docs", compare=True)
    changed = shot(box=(0, 0, 9, 9))
    # No worker runs here: the comparison is drained below rather than waited for.
    result = pushes.push(
        env, keys.ci, changed, name="home", context_key="docs", compare=True, wait_seconds=0
    )
    drain(env)
    assert result.diff is not None
    return result.diff.id


def test_a_mark_on_a_stored_image_goes_from_open_to_verified(
    env: Env, keys: Keys, person: Actor, image: str
) -> None:
    mark = threads.create_thread(
        env, person, On("image", image), "Button is cut off", anchor=RECT, kind="mark",
        severity="must-fix",
    )  # fmt: skip
    assert (mark.subject.type, mark.subject.id, mark.side) == ("image", image, None)
    assert (mark.kind, mark.severity, mark.status, mark.unresolved) == (
        "mark",
        "must-fix",
        "open",
        True,
    )
    working = threads.set_status(env, keys.agent, mark.id, "in_progress")
    assert working.status == "in_progress" and working.unresolved
    fixed = threads.set_status(env, keys.agent, mark.id, "resolved")
    assert fixed.status == "resolved" and not fixed.unresolved and fixed.resolved_by
    assert fixed.moves == [], "an agent can neither verify nor reopen a resolved mark"
    with pytest.raises(Forbidden, match="only a person can make a resolved mark verified"):
        threads.set_status(env, keys.agent, mark.id, "verified")
    seen = threads.list_threads(env, person, On("image", image))[0]
    assert seen.moves == ["open", "verified"]
    verified = threads.set_status(env, person, mark.id, "verified")
    assert verified.status == "verified" and not verified.unresolved
    reopened = threads.set_status(env, person, mark.id, "open")
    assert reopened.status == "open" and reopened.resolved_at is None
    assert threads.set_status(env, person, mark.id, "open").status == "open", "idempotent"


def test_moves_that_the_lifecycle_has_not_are_refused_with_what_is_possible(
    env: Env, keys: Keys, person: Actor, image: str
) -> None:
    comment = threads.create_thread(env, person, On("image", image), "Looks fine?")
    with pytest.raises(Conflict, match="a comment that is open cannot become in_progress; it can "
                       "become resolved"):  # fmt: skip
        threads.set_status(env, keys.agent, comment.id, "in_progress")
    mark = threads.create_thread(
        env, person, On("image", image), "Tighter", kind="mark", severity="spacing"
    )
    with pytest.raises(Conflict, match="a mark that is open cannot become verified"):
        threads.set_status(env, person, mark.id, "verified")
    with pytest.raises(InvalidInput, match="status is one of open, in_progress"):
        threads.set_status(env, person, mark.id, "done")
    with pytest.raises(Forbidden, match="'review' role"):
        threads.set_status(env, keys.ci, mark.id, "resolved")


@pytest.mark.parametrize(
    ("kind", "severity", "message"),
    [
        ("mark", None, "a mark's severity is one of must-fix"),
        ("mark", "suggestion", "a mark's severity is one of"),
        ("finding", "must-fix", "a finding's severity is one of suggestion, a11y, polish"),
        ("comment", "nit", "a comment has no severity"),
        ("question", None, "kind is one of comment, mark, finding"),
    ],
)
def test_kinds_and_severities_are_checked(
    env: Env, person: Actor, image: str, kind: str, severity: str | None, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        threads.create_thread(env, person, On("image", image), "x", kind=kind, severity=severity)
    assert threads.list_threads(env, person, On("image", image)) == []


def test_a_thread_on_an_image_has_no_side_and_belongs_to_its_project(
    env: Env, keys: Keys, other: Keys, image: str
) -> None:
    with pytest.raises(InvalidInput, match="a thread on an image has no side"):
        threads.create_thread(env, keys.agent, On("image", image, "after"), "x")
    with pytest.raises(NotFound, match="no image"):
        threads.create_thread(env, other.agent, On("image", image), "x")
    with pytest.raises(InvalidInput, match="subject type is one of diff, image"):
        threads.create_thread(env, keys.agent, On("build", image), "x")


def test_findings_never_hold_a_diff_back_and_marks_do_until_resolved(
    env: Env, keys: Keys, person: Actor, diff: str
) -> None:
    on = On("diff", diff, "after")
    threads.create_thread(env, keys.agent, on, "Contrast 3.1:1", kind="finding", severity="a11y")
    assert diffs.get_diff(env, person, diff).can_accept
    mark = threads.create_thread(env, person, on, "Wrong icon", kind="mark", severity="must-fix")
    record = diffs.get_diff(env, person, diff)
    assert (record.can_accept, record.can_ignore, record.can_decide) == (False, False, True)
    assert record.blocked_by == [mark.id] and record.open_threads == 1
    with pytest.raises(Conflict, match="1 unresolved comment thread"):
        reviews.review_diff(env, person, diff, "accept")
    threads.set_status(env, keys.agent, mark.id, "resolved")
    assert diffs.get_diff(env, person, diff).can_accept
    assert reviews.review_diff(env, person, diff, "accept").diff.decision == "accepted"


def test_each_record_says_what_its_viewer_may_do(
    env: Env, keys: Keys, person: Actor, diff: str
) -> None:
    root = threads.create_comment(env, person, diff, "Why the new border?")
    assert (root.can_edit, root.can_delete, root.moves) == (True, True, ["resolved"])
    (as_agent,) = threads.list_comments(env, keys.agent, diff)
    assert (as_agent.can_edit, as_agent.can_delete) == (False, False)
    (as_admin,) = threads.list_comments(env, keys.admin, diff)
    assert (as_admin.can_edit, as_admin.can_delete) == (True, True)
    (as_ci,) = threads.list_comments(env, keys.ci, diff)
    assert (as_ci.can_edit, as_ci.moves) == (False, [])
    seen_by_ci = diffs.get_diff(env, keys.ci, diff)
    assert not seen_by_ci.can_decide and not seen_by_ci.can_accept
    assert not diffs.get_diff(env, keys.agent, diff).can_approve
    with pytest.raises(Forbidden):
        threads.update_comment(env, keys.agent, root.id, "edited")


def test_a_reply_takes_its_threads_subject_and_refuses_an_anchor(
    env: Env, person: Actor, image: str
) -> None:
    root = threads.create_thread(env, person, On("image", image), "Align?")
    with pytest.raises(InvalidInput, match="a reply has no anchor"):
        threads.reply(env, person, root.id, "here", anchor=RECT)
    reply = threads.reply(env, person, root.id, "left edge")
    assert (reply.subject.type, reply.subject.id, reply.moves) == ("image", image, [])
    with pytest.raises(InvalidInput, match="give the diff to open a thread on"):
        threads.post_comment(env, person, "x")
