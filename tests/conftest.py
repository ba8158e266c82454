"""Shared fixtures: a real Env on SQLite and on PostgreSQL, bootstrapped keys, and jobs run
in-process (the worker's own function) so service tests need no worker processes."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
import pytest

from viewfinder.imaging import png
from viewfinder.jobs.worker import run_one
from viewfinder.services import projects
from viewfinder.services.env import Actor, Env
from viewfinder.settings import Settings

PG_ADMIN = os.environ.get("VIEWFINDER_TEST_PG", "postgresql://postgres@127.0.0.1/test")


def _pg_url(name: str) -> str:
    return PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + "/" + name


@pytest.fixture(scope="session")
def pg_template(worker_id: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated database to copy: CREATE DATABASE ... TEMPLATE is much faster than migrating."""
    name = f"vf_tpl_{worker_id}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    scratch = tmp_path_factory.mktemp("template")
    env = Env.open(Settings(data_dir=scratch, database_url=_pg_url(name), secret="t"))
    env.close()
    yield name
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class _Databases:
    """Copies of the template made one test ahead, in a thread. CREATE DATABASE spends most of
    its 0.3 s waiting for the disk, which the test before overlaps; dropping is as slow, and
    is done there too."""

    def __init__(self, template: str) -> None:
        self.template = template
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="test-databases")
        self.next: Future[str] = self.pool.submit(self._create)

    def _create(self) -> str:
        name = f"vf_t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
        return name

    def take(self) -> str:
        name = self.next.result()
        self.next = self.pool.submit(self._create)
        return name

    def drop(self, name: str) -> None:
        self.pool.submit(_drop, name)

    def close(self) -> None:
        spare = self.next.result()
        self.pool.submit(_drop, spare)
        self.pool.shutdown(wait=True)


def _drop(name: str) -> None:
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_databases(pg_template: str) -> Iterator[_Databases]:
    databases = _Databases(pg_template)
    yield databases
    databases.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite database to copy: migrating a new one takes half a second, copying it
    a millisecond."""
    data = tmp_path_factory.mktemp("sqlite-template")
    Env.open(Settings(data_dir=data, secret="t")).close()
    template = data / "viewfinder.db"
    # Closing the last connection checkpoints the write-ahead log into the file.
    assert not template.with_name("viewfinder.db-wal").exists()
    return template


@pytest.fixture(params=["sqlite", "postgresql"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Env]:
    url = None
    name = None
    databases: _Databases | None = None
    data = tmp_path / "data"
    if request.param == "postgresql":
        databases = request.getfixturevalue("pg_databases")
        name = databases.take()
        url = _pg_url(name)
    else:
        data.mkdir()
        shutil.copyfile(request.getfixturevalue("sqlite_template"), data / "viewfinder.db")
    settings = Settings(data_dir=data, database_url=url, workers=0, secret="test")
    opened = Env.open(settings)
    yield opened
    opened.close()
    if databases is not None and name is not None:
        databases.drop(name)


@dataclass
class Keys:
    admin: Actor
    ci: Actor
    agent: Actor
    secrets: dict[str, str]


def _keys(env: Env, name: str) -> Keys:
    if name == "default":
        boot = projects.bootstrap(env)
        assert boot is not None
        new = boot.keys
    else:
        projects.create_project(env, name)
        new = {
            role: projects.create_key(env, None, roles=[r], label=role, kind=kind, project=name)
            for role, r, kind in (
                ("admin", "admin", "person"),
                ("ci", "upload", "ci"),
                ("agent", "review", "agent"),
            )
        }
    actors = {role: projects.authenticate(env, k.key) for role, k in new.items()}
    return Keys(**actors, secrets={role: k.key for role, k in new.items()})


@pytest.fixture
def keys(env: Env) -> Keys:
    """The first project's admin, CI (upload) and agent (review) keys, as Actors."""
    return _keys(env, "default")


@pytest.fixture
def other(env: Env, keys: Keys) -> Keys:
    """Keys of a second project, for scoping tests."""
    return _keys(env, "other")


def drain(env: Env) -> int:
    """Run every queued job in this process, as a worker would. Returns how many ran."""
    count = 0
    while run_one(env, "test:0"):
        count += 1
    return count


def shot(
    color: tuple[int, int, int] = (255, 255, 255),
    box: tuple[int, int, int, int] | None = None,
    *,
    size: tuple[int, int] = (64, 48),
    fill: tuple[int, int, int] = (0, 0, 0),
) -> bytes:
    """A small PNG: a flat colour with an optional filled box (x0, y0, x1, y1)."""
    width, height = size
    pixels = np.full((height, width, 3), color, np.uint8)
    if box is not None:
        x0, y0, x1, y1 = box
        pixels[y0:y1, x0:x1] = fill
    return png.encode(pixels, level=1)


def make_build(
    env: Env,
    ci: Actor,
    sha: str,
    stories: Mapping[str, bytes | np.ndarray],
    *,
    variant: str | None = None,
    branch: str | None = None,
    pr: int | None = None,
    repo: str | None = None,
) -> str:
    """A build of these stories (PNG bytes or RGB arrays), uploaded in batches as the CLI does,
    finalized, with every comparison done. A PR build is of acme/shop unless ``repo`` says."""
    from viewfinder.services import builds

    record = builds.create_build(
        env,
        ci,
        commit_sha=sha,
        branch=branch,
        repo=repo or ("acme/shop" if pr else None),
        pr_number=pr,
    )
    uploads = [
        builds.StoryUpload(name, variant, data if isinstance(data, bytes) else png.encode(data))
        for name, data in stories.items()
    ]
    for start in range(0, len(uploads), builds.MAX_BATCH):
        builds.add_stories(env, ci, record.id, uploads[start : start + builds.MAX_BATCH])
    builds.finalize_build(env, ci, record.id)
    drain(env)
    return record.id


def pushed_diff(env: Env, ci: Actor, data: bytes, *, name: str = "home", **where: object) -> str:
    """Push a screenshot with compare into a context (``context_key=...`` or ``pr_number=...,
    repo=...``) and return its diff's id, computed."""
    from viewfinder.services import pushes

    result = pushes.push(env, ci, data, name=name, compare=True, wait_seconds=0, **where)  # type: ignore[arg-type]
    drain(env)
    assert result.diff is not None
    return result.diff.id
