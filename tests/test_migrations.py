"""The migrations build exactly the schema the models describe."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from viewfinder.services.env import Env
from viewfinder.store.models import Base


def test_the_migrated_schema_matches_the_models(env: Env) -> None:
    with env.db.read_engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_migrating_again_changes_nothing(env: Env) -> None:
    env.db.migrate()
    env.db.migrate()
