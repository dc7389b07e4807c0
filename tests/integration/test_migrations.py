"""Models and migrations agree: on a freshly migrated database, autogenerate finds no difference."""

from __future__ import annotations

import psycopg
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from app.tables import target_metadata
from brain.store.migrate import alembic_config, upgrade


def test_autogenerate_finds_no_difference_after_upgrade(pg_server) -> None:
    name = pg_server.create_database(template=None)
    try:
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        upgrade(pg_server.url(name))
        engine = create_engine(pg_server.url(name))
        try:
            with engine.connect() as conn:
                context = MigrationContext.configure(conn, opts={"compare_type": True})
                diff = compare_metadata(context, target_metadata)
                heads = set(context.get_current_heads())
        finally:
            engine.dispose()
        assert diff == []
        assert heads == set(ScriptDirectory.from_config(alembic_config(pg_server.url(name))).get_heads())
    finally:
        pg_server.drop_database(name)


def test_every_table_with_personal_data_has_a_user_id() -> None:
    shared = {"alembic_version"}
    for table in target_metadata.tables.values():
        if table.name in shared:
            continue
        if table.name == "users":
            continue
        assert "user_id" in table.columns, f"{table.name} has no user_id"
