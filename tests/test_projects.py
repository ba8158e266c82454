"""Projects and keys: scoping, roles, hashed keys shown once, the first start."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.conftest import Keys, drain, shot
from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound, Unauthenticated
from viewfinder.services import (
    baselines,
    builds,
    diffs,
    images,
    projects,
    pushes,
    renders,
    threads,
)
from viewfinder.services.env import Env
from viewfinder.store.models import ApiKey


def test_another_projects_objects_read_as_not_found(env: Env, keys: Keys, other: Keys) -> None:
    pushes.push(env, keys.ci, shot(), name="home", context_key="docs", compare=True)
    result = pushes.push(
        env,
        keys.ci,
        shot(box=(0, 0, 5, 5)),
        name="home",
        context_key="docs",
        compare=True,
        wait_seconds=0,
    )
    drain(env)
    assert result.diff is not None
    build = builds.create_build(env, keys.ci, commit_sha="aaa1")
    comment = threads.create_comment(env, keys.agent, result.diff.id, "hi")
    (baseline,) = baselines.list_baselines(env, keys.agent).items
    calls = [
        lambda: builds.get_build(env, other.agent, build_id=build.id),
        lambda: builds.add_story(env, other.ci, build.id, name="x", variant=None, data=shot()),
        lambda: diffs.get_diff(env, other.agent, result.diff.id),  # type: ignore[union-attr]
        lambda: images.get_image(env, other.agent, result.image_id),
        lambda: images.expire_image(env, other.admin, result.image_id),
        lambda: threads.reply(env, other.agent, comment.id, "sneaky"),
        lambda: baselines.delete_baseline(env, other.admin, baseline.id),
        lambda: renders.render_diff(env, other.agent, result.diff.id),  # type: ignore[union-attr]
    ]
    for call in calls:
        with pytest.raises(NotFound):
            call()
    assert baselines.list_baselines(env, other.agent).items == []
    assert builds.list_builds(env, other.agent).items == []


def test_keys_are_stored_hashed_and_shown_once(env: Env, keys: Keys) -> None:
    new = projects.create_key(env, keys.admin, roles=["review", "upload"], label="bot")
    assert new.key.startswith("vf_proj_") and new.roles == ["upload", "review"]
    with env.db.read() as s:
        stored = list(s.scalars(select(ApiKey.key_hash)))
    assert all(new.key not in h and h != new.key for h in stored)
    assert all("key" not in k.model_dump() for k in projects.list_keys(env, keys.admin))


def test_missing_unknown_and_revoked_keys_are_unauthenticated(env: Env, keys: Keys) -> None:
    for key, message in (
        (None, "no API key"),
        ("abc", "keys start with vf_proj_"),
        ("vf_proj_nope", "unknown or revoked"),
    ):
        with pytest.raises(Unauthenticated, match=message):
            projects.authenticate(env, key)
    new = projects.create_key(env, keys.admin, roles=["review"])
    projects.revoke_key(env, keys.admin, new.id)
    with pytest.raises(Unauthenticated):
        projects.authenticate(env, new.key)


def test_a_missing_role_names_the_role_to_ask_for(env: Env, keys: Keys) -> None:
    with pytest.raises(Forbidden, match="needs the 'admin' role .* Ask a person"):
        projects.create_key(env, keys.agent, roles=["admin"])
    with pytest.raises(InvalidInput, match="roles must be one or more of upload, review"):
        projects.create_key(env, keys.admin, roles=["root"])


def test_the_first_start_creates_one_project_with_three_keys(env: Env, keys: Keys) -> None:
    assert projects.bootstrap(env) is None  # keys are printed once only
    assert {k.label: k.roles for k in projects.list_keys(env, keys.admin)} == {
        "admin": ["admin"],
        "ci": ["upload"],
        "agent": ["upload", "review"],
    }


def test_the_last_admin_key_cannot_be_revoked(env: Env, keys: Keys) -> None:
    with pytest.raises(Conflict, match="last admin key") as refused:
        projects.revoke_key(env, keys.admin, keys.admin.key_id)
    assert refused.value.details == {"key_id": keys.admin.key_id}
    second = projects.create_key(env, keys.admin, roles=["admin"], label="second admin")
    assert projects.revoke_key(env, keys.admin, keys.admin.key_id).revoked
    with pytest.raises(Unauthenticated):
        projects.authenticate(env, keys.secrets["admin"])
    other = projects.authenticate(env, second.key)
    with pytest.raises(Conflict, match="last admin key"):
        projects.revoke_key(env, other, second.id)


def test_a_checked_key_is_trusted_briefly_and_forgotten_at_once_when_revoked(
    env: Env, keys: Keys
) -> None:
    secret = keys.secrets["agent"]
    env.trusted_keys.clear()
    assert projects.known_actor(env, secret) is None  # not checked by this process yet
    checked = projects.authenticate(env, secret)
    assert projects.known_actor(env, secret) == checked
    assert projects.known_actor(env, secret, as_agent=True) == checked  # an agent key already
    projects.revoke_key(env, keys.admin, checked.key_id)
    assert projects.known_actor(env, secret) is None
    with pytest.raises(Unauthenticated, match="unknown or revoked"):
        projects.authenticate(env, secret)


def test_with_no_key_cache_every_request_checks_the_key(env: Env, keys: Keys) -> None:
    import dataclasses

    uncached = dataclasses.replace(
        env, settings=env.settings.model_copy(update={"key_cache_seconds": 0}), trusted_keys={}
    )
    projects.authenticate(uncached, keys.secrets["ci"])
    assert projects.known_actor(uncached, keys.secrets["ci"]) is None
