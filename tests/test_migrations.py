"""The migrations build exactly the schema the models describe."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import text

from viewfinder.services.env import Env
from viewfinder.store.db import MIGRATIONS, Database
from viewfinder.store.models import Base, Project


def test_the_migrated_schema_matches_the_models(env: Env) -> None:
    with env.db.read_engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_migrating_again_changes_nothing(env: Env) -> None:
    env.db.migrate()
    env.db.migrate()


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
