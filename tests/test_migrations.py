"""The migrations build exactly the schema the models describe."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from viewfinder.services.env import Env
from viewfinder.store.db import MIGRATIONS, Database
from viewfinder.store.models import Base, Blob, Comparison, Project, Thread


def test_the_migrated_schema_matches_the_models(env: Env) -> None:
    with env.db.read_engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_migrating_again_changes_nothing(env: Env) -> None:
    def schema() -> tuple[str | None, list[str]]:
        with env.db.read_engine.connect() as connection:
            revision = MigrationContext.configure(connection).get_current_revision()
            return revision, sorted(inspect(connection).get_table_names())

    before = schema()
    env.db.migrate()
    env.db.migrate()
    assert schema() == before
    assert before[0] == ScriptDirectory.from_config(_config()).get_current_head()


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def test_a_database_of_the_first_schema_upgrades_with_its_data(tmp_path: Path) -> None:
    # A project, a build and a story made before comparisons carried their analysis.
    db = Database(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with db.write_engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.execute(
            text("INSERT INTO projects (id, name, created_at) VALUES ('prj_1', 'p', :now)"),
            {"now": datetime.now(UTC)},
        )
    db.migrate()
    with db.read() as s:
        project = s.get(Project, "prj_1")
        assert project is not None and project.ignore_noise is True
    db.dispose()


def test_threads_and_comparisons_of_the_second_schema_get_their_subjects_and_owners(
    tmp_path: Path,
) -> None:
    db = Database(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    now = datetime.now(UTC)
    rows = [
        "INSERT INTO projects (id, name, created_at) VALUES ('prj_1', 'p', :now)",
        "INSERT INTO blobs (sha256, size, width, height, created_at) VALUES ('ab', 3, 1, 1, :now)",
        "INSERT INTO builds (id, project_id, commit_sha, status, created_by, created_at) "
        "VALUES ('bld_1', 'prj_1', 'abcd', 'done', 'key_1', :now)",
        "INSERT INTO images (id, project_id, sha256, media_type, size, name, variant, source, "
        "tags, created_by, created_at) VALUES ('img_1', 'prj_1', 'ab', 'image/png', 3, 'home', "
        "'', 'build', '[]', 'key_1', :now), ('img_2', 'prj_1', 'ab', 'image/png', 3, 'home', '', "
        "'push', '[]', 'key_1', :now)",
        "INSERT INTO comparisons (id, project_id, image_id, build_id, name, variant, registered, "
        "state, masks, max_diff_ratio, threshold, regions, decision, baseline_image_id, "
        "requested_at) VALUES ('dif_1', 'prj_1', 'img_1', 'bld_1', 'home', '', 0, 'done', '[]', "
        "0, 0.1, '[]', 'pending', 'img_2', :now), ('dif_2', 'prj_1', 'img_2', NULL, 'home', '', "
        "1, 'done', '[]', 0, 0.1, '[]', 'pending', NULL, :now)",
        "INSERT INTO stories (id, project_id, build_id, name, variant, image_id, comparison_id, "
        "state, created_at) VALUES ('sty_1', 'prj_1', 'bld_1', 'home', '', 'img_1', 'dif_1', "
        "'changed', :now)",
        "INSERT INTO threads (id, project_id, comparison_id, body, side, status, author_key_id, "
        "author_name, author_is_agent, created_at, updated_at) VALUES ('cmt_1', 'prj_1', "
        "'dif_1', 'why?', 'before', 'open', 'key_1', 'ci', 0, :now, :now)",
    ]
    with db.write_engine.begin() as connection:
        config = _config()
        config.attributes["connection"] = connection
        command.upgrade(config, "0002")
        for statement in rows:
            connection.execute(text(statement), {"now": now})
    db.migrate()
    with db.read() as s:
        thread = s.get(Thread, "cmt_1")
        assert thread is not None
        assert (thread.subject_type, thread.subject_id, thread.side, thread.kind) == (
            "diff",
            "dif_1",
            "before",
            "comment",
        )
        story_diff, push_diff = s.get(Comparison, "dif_1"), s.get(Comparison, "dif_2")
        assert story_diff is not None and push_diff is not None
        assert (story_diff.owner_kind, story_diff.owner_id) == ("story", "sty_1")
        assert story_diff.base_image_id == "img_2"
        assert (push_diff.owner_kind, push_diff.owner_id) == ("push", "img_2")
        blob = s.get(Blob, "ab")
        assert blob is not None and blob.media_type == "image/png"
    db.dispose()
