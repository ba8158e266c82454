"""Builds: stories compared with baselines, states, counts, verdicts, selectors, pagination."""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import threading
import zlib
from datetime import timedelta

import pytest
from sqlalchemy import update

from tests.conftest import Keys, drain, make_build, shot
from viewfinder.errors import Conflict, Forbidden, InvalidImage, InvalidInput, NotFound
from viewfinder.services import baselines, builds, images, pushes
from viewfinder.services.env import Env
from viewfinder.store.models import Blob, Build, Job, utcnow


def test_a_first_build_registers_every_story_as_new(env: Env, keys: Keys) -> None:
    build_id = make_build(
        env, keys.ci, "aaa1", {"home": shot(), "login": shot(box=(1, 1, 5, 5))}, variant="64x48"
    )
    detail = builds.get_build(env, keys.agent, build_id=build_id)
    assert (detail.status, detail.verdict, detail.review) == ("done", "unchanged", "none")
    assert detail.counts.new == 2 and detail.counts.changed == 0
    assert [s.name for s in detail.new.items] == ["home", "login"]


def test_a_second_build_reports_changed_unchanged_removed_and_new(env: Env, keys: Keys) -> None:
    make_build(
        env, keys.ci, "aaa1", {"home": shot(), "login": shot(), "gone": shot()}, variant="64x48"
    )
    second = make_build(
        env,
        keys.ci,
        "bbb2",
        {"home": shot(), "login": shot(box=(2, 2, 20, 20)), "fresh": shot()},
        variant="64x48",
    )
    detail = builds.get_build(env, keys.agent, build_id=second)
    counts = detail.counts
    assert (counts.unchanged, counts.changed, counts.removed, counts.new) == (1, 1, 1, 1)
    assert detail.verdict == "changed" and detail.review == "pending"
    (changed,) = detail.changed.items
    assert changed.name == "login" and changed.diff_ratio == pytest.approx(324 / 3072)
    assert changed.urls.baseline and changed.urls.candidate and changed.urls.diff
    assert [s.name for s in detail.removed.items] == ["gone"]


def test_byte_identical_stories_are_settled_without_a_job(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()}, variant="64x48")
    build = builds.create_build(env, keys.ci, commit_sha="bbb2")
    story = builds.add_story(env, keys.ci, build.id, name="home", variant="64x48", data=shot())
    assert story.state == "unchanged"
    with env.db.read() as s:
        assert s.query(Job).count() == 0


def test_a_build_completes_when_its_last_comparison_does(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()}, variant="64x48")
    build = builds.create_build(env, keys.ci, commit_sha="bbb2")
    builds.add_story(
        env, keys.ci, build.id, name="home", variant="64x48", data=shot(box=(0, 0, 9, 9))
    )
    assert builds.finalize_build(env, keys.ci, build.id).status == "comparing"
    assert builds.get_build(env, keys.ci, build_id=build.id).verdict == "pending"
    drain(env)
    done = builds.get_build(env, keys.ci, build_id=build.id)
    assert (done.status, done.verdict, done.counts.changed) == ("done", "changed", 1)
    assert done.completed_at is not None


def test_uploading_the_same_story_twice_is_safe_but_other_bytes_conflict(
    env: Env, keys: Keys
) -> None:
    build = builds.create_build(env, keys.ci, commit_sha="aaa1")
    first = builds.add_story(env, keys.ci, build.id, name="home", variant=None, data=shot())
    again = builds.add_story(env, keys.ci, build.id, name="home", variant=None, data=shot())
    assert again.id == first.id
    with pytest.raises(Conflict, match="already has a story 'home'"):
        builds.add_story(
            env, keys.ci, build.id, name="home", variant=None, data=shot(box=(0, 0, 2, 2))
        )


def test_a_finalized_build_takes_no_more_stories(env: Env, keys: Keys) -> None:
    build_id = make_build(env, keys.ci, "aaa1", {"home": shot()}, variant="64x48")
    with pytest.raises(Conflict, match="is finalized"):
        builds.add_story(env, keys.ci, build_id, name="new", variant=None, data=shot())
    assert builds.finalize_build(env, keys.ci, build_id).status == "done"  # idempotent


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": ""}, "name is empty"),
        ({"name": "x" * 201}, "name is 1 to 200 characters; this one has 201"),
        ({"variant": "wide"}, "viewport 'wide' is not WIDTHxHEIGHT"),
        ({"variant": "0x10"}, "is not WIDTHxHEIGHT"),
        ({"data": b"GIF89a"}, "not a PNG file"),
        ({"data": shot()[:-20]}, "truncated"),
    ],
)
def test_bad_stories_are_refused_and_nothing_is_stored(
    env: Env, keys: Keys, fields: dict[str, object], message: str
) -> None:
    build = builds.create_build(env, keys.ci, commit_sha="aaa1")
    story = {"name": "home", "variant": "64x48", "data": shot()} | fields
    with pytest.raises((InvalidInput, InvalidImage), match=message):
        builds.add_story(env, keys.ci, build.id, **story)  # type: ignore[arg-type]
    assert builds.finalize_build(env, keys.ci, build.id).counts.model_dump() == {
        "changed": 0,
        "new": 0,
        "removed": 0,
        "failed": 0,
        "unchanged": 0,
        "pending": 0,
    }


@pytest.mark.parametrize(
    ("offset", "message"), [(60, "image data does not inflate"), (-20, "IDAT. chunk fails")]
)
def test_a_corrupt_png_is_refused_at_upload_and_nothing_is_kept(
    env: Env, keys: Keys, offset: int, message: str
) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()}, variant="64x48")
    data = bytearray(shot(box=(0, 0, 30, 30)))
    if offset > 0:
        data[offset : offset + 10] = b"\xff" * 10  # inside the image data, CRC fixed below
        start = data.index(b"IDAT")
        (length,) = struct.unpack(">I", data[start - 4 : start])
        crc = zlib.crc32(bytes(data[start : start + 4 + length]))
        data[start + 4 + length : start + 8 + length] = struct.pack(">I", crc)
    else:
        data = data[:offset] + data[-12:]  # the IEND chunk is there, the data is not
    build = builds.create_build(env, keys.ci, commit_sha="bbb2")
    with pytest.raises(InvalidImage, match=message):
        builds.add_story(env, keys.ci, build.id, name="home", variant="64x48", data=bytes(data))
    assert builds.get_build(env, keys.ci, build_id=build.id).counts.pending == 0
    with env.db.read() as s:
        stored = s.get(Blob, hashlib.sha256(bytes(data)).hexdigest())
    assert stored is None and not env.blobs.exists(hashlib.sha256(bytes(data)).hexdigest())


def test_a_pr_build_needs_its_repository(env: Env, keys: Keys) -> None:
    with pytest.raises(InvalidInput, match="pass repo as owner/name together with pr_number"):
        builds.create_build(env, keys.ci, commit_sha="aaa1", pr_number=3)
    with pytest.raises(InvalidInput, match="is not a commit id: 4 to 40 hexadecimal digits"):
        builds.create_build(env, keys.ci, commit_sha="not a sha")


def test_a_build_is_selected_by_exactly_one_of_id_commit_and_pr(env: Env, keys: Keys) -> None:
    first = make_build(
        env, keys.ci, "aaaa1", {"home": shot()}, repo="acme/web", pr=4, variant="64x48"
    )
    second = make_build(
        env, keys.ci, "bbbb2", {"home": shot()}, repo="acme/web", pr=4, variant="64x48"
    )
    assert builds.get_build(env, keys.agent, commit_sha="AAAA1").id == first
    assert builds.get_build(env, keys.agent, pr_number=4).id == second  # the newest
    with pytest.raises(InvalidInput, match=r"exactly one of .* \(none given\)"):
        builds.get_build(env, keys.agent)
    with pytest.raises(InvalidInput, match=r"\(several given\)"):
        builds.get_build(env, keys.agent, build_id=first, pr_number=4)
    with pytest.raises(NotFound, match="no build for PR #9"):
        builds.get_build(env, keys.agent, pr_number=9)


def test_story_lists_page_25_at_a_time_with_signed_cursors(env: Env, keys: Keys) -> None:
    make_build(env, keys.ci, "aaa1", {f"s{i:02}": shot() for i in range(30)}, variant="64x48")
    second = make_build(
        env,
        keys.ci,
        "bbb2",
        {f"s{i:02}": shot(box=(0, 0, 3, 3)) for i in range(30)},
        variant="64x48",
    )
    detail = builds.get_build(env, keys.agent, build_id=second)
    assert len(detail.changed.items) == 25 and detail.changed.next_cursor
    assert detail.unchanged.next_cursor is None
    rest = builds.list_build_stories(
        env, keys.agent, second, state="changed", cursor=detail.changed.next_cursor
    )
    assert [s.name for s in rest.items] == [f"s{i}" for i in range(25, 30)]
    assert rest.next_cursor is None
    with pytest.raises(InvalidInput, match="invalid cursor"):
        builds.list_build_stories(env, keys.agent, second, cursor=detail.changed.next_cursor + "x")
    with pytest.raises(InvalidInput, match="belongs to another list"):
        builds.list_build_stories(
            env, keys.agent, second, state="new", cursor=detail.changed.next_cursor
        )
    with pytest.raises(InvalidInput, match="limit must be an integer from 1 to 100"):
        builds.list_build_stories(env, keys.agent, second, limit=101)
    assert len(builds.list_build_stories(env, keys.agent, second, limit=100).items) == 30


def test_builds_are_listed_newest_first_twenty_at_a_time(env: Env, keys: Keys) -> None:
    made = [builds.create_build(env, keys.ci, commit_sha=f"c{i:03x}").id for i in range(23)]
    page = builds.list_builds(env, keys.agent)
    assert [b.id for b in page.items] == made[::-1][:20] and page.next_cursor
    rest = builds.list_builds(env, keys.agent, cursor=page.next_cursor)
    assert [b.id for b in rest.items] == made[::-1][20:] and rest.next_cursor is None


def test_only_upload_keys_create_builds(env: Env, keys: Keys) -> None:
    from viewfinder.services import projects

    reviewer = projects.authenticate(
        env, projects.create_key(env, keys.admin, roles=["review"]).key
    )
    with pytest.raises(Forbidden, match="'upload' role"):
        builds.create_build(env, reviewer, commit_sha="aaa1")


def test_a_build_finalized_while_its_last_comparison_finishes_still_completes(
    env: Env, keys: Keys
) -> None:
    make_build(env, keys.ci, "aaa1", {"home": shot()}, variant="64x48")
    for round_no in range(15):
        build = builds.create_build(env, keys.ci, commit_sha=f"{round_no:04x}")
        builds.add_story(
            env,
            keys.ci,
            build.id,
            name="home",
            variant="64x48",
            data=shot(box=(0, 0, round_no + 2, 3)),
        )
        finalizer = threading.Thread(target=builds.finalize_build, args=(env, keys.ci, build.id))
        finalizer.start()
        drain(env)
        finalizer.join()
        assert builds.get_build(env, keys.ci, build_id=build.id).status == "done", round_no


def test_a_build_never_finalized_registers_no_baseline_and_expires(env: Env, keys: Keys) -> None:
    abandoned = builds.create_build(env, keys.ci, commit_sha="aaa1")
    builds.add_story(env, keys.ci, abandoned.id, name="home", variant=None, data=shot())
    assert baselines.list_baselines(env, keys.agent).items == []
    later = make_build(env, keys.ci, "bbb2", {"home": shot(box=(1, 1, 9, 9))})
    assert builds.get_build(env, keys.agent, build_id=later).counts.new == 1
    aged = dataclasses.replace(
        env, settings=env.settings.model_copy(update={"build_expiry_seconds": 60})
    )
    assert builds.expire_stale(aged) == 0, "not old enough yet"
    with env.db.write() as s:
        s.execute(
            update(Build)
            .where(Build.id == abandoned.id)
            .values(created_at=utcnow() - timedelta(minutes=2))
        )
    assert builds.expire_stale(aged) == 1
    record = builds.get_build(env, keys.agent, build_id=abandoned.id)
    assert (record.status, record.verdict) == ("expired", "failed")
    (story,) = builds.list_build_stories(env, keys.agent, abandoned.id, state="new").items
    assert images.get_image(env, keys.agent, story.image_id or "").expired
    with pytest.raises(Conflict, match="is finalized"):
        builds.add_story(env, keys.ci, abandoned.id, name="late", variant=None, data=shot())


def test_removed_stories_are_those_of_the_build_before_not_every_baseline(
    env: Env, keys: Keys
) -> None:
    pushes.push(env, keys.ci, shot(), name="pushed-only", context_key="docs", compare=True)
    names = [f"s{i}" for i in range(8)]
    make_build(env, keys.ci, "aaa1", dict.fromkeys(names, shot()), branch="main")
    again = make_build(env, keys.ci, "bbb2", dict.fromkeys(names, shot()), branch="main")
    record = builds.get_build(env, keys.agent, build_id=again)
    assert (record.verdict, record.counts.unchanged, record.counts.removed) == ("unchanged", 8, 0)
    fewer = make_build(env, keys.ci, "ccc3", dict.fromkeys(names[1:], shot()), branch="main")
    detail = builds.get_build(env, keys.agent, build_id=fewer)
    assert [s.name for s in detail.removed.items] == ["s0"]
    assert detail.removed.items[0].urls.baseline, "a removed story shows its baseline"


def test_opening_a_build_again_with_its_idempotency_key_returns_the_same_build(
    env: Env, keys: Keys
) -> None:
    first = builds.create_build(env, keys.ci, commit_sha="aaa1", idempotency_key="ci-run-7")
    again = builds.create_build(env, keys.ci, commit_sha="aaa1", idempotency_key="ci-run-7")
    assert again.id == first.id
    assert builds.list_builds(env, keys.ci).items == [again]
    with pytest.raises(Conflict, match="opened build .* of another commit"):
        builds.create_build(env, keys.ci, commit_sha="bbb2", idempotency_key="ci-run-7")
    other = builds.create_build(env, keys.admin, commit_sha="aaa1", idempotency_key="ci-run-8")
    assert other.id != first.id


def test_two_builds_bringing_the_same_new_name_register_it_once(env: Env, keys: Keys) -> None:
    one = builds.create_build(env, keys.ci, commit_sha="aaa1")
    two = builds.create_build(env, keys.ci, commit_sha="bbb2")
    builds.add_story(env, keys.ci, one.id, name="home", variant=None, data=shot())
    builds.add_story(env, keys.ci, two.id, name="home", variant=None, data=shot(box=(0, 0, 5, 5)))
    builds.finalize_build(env, keys.ci, one.id)
    assert builds.finalize_build(env, keys.ci, two.id).status == "comparing"
    drain(env)
    second = builds.get_build(env, keys.agent, build_id=two.id)
    assert (second.counts.new, second.counts.changed) == (0, 1)
    (base,) = baselines.list_baselines(env, keys.agent).items
    assert base.image_id == builds.get_build(env, keys.agent, build_id=one.id).new.items[0].image_id
