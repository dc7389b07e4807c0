"""Migration 0027 on a database with entities: each existing entity gets the name key capture compares by (so a
"Jürgen" told about before it is found by "Jurgen" after it), the lookup index moves to the key, and the downgrade
brings the old one back."""

from __future__ import annotations

import psycopg
from alembic import command

from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import database_at


def _index(conn: psycopg.Connection, name: str) -> bool:
    return conn.execute("SELECT to_regclass(%s)", (name,)).fetchone() != (None,)


def test_0027_gives_existing_entities_their_name_key_and_downgrades(pg_server) -> None:
    with database_at(pg_server, "0026") as (name, person):
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            for kind, entity in (("person", "Jürgen"), ("place", "Café  Müller"), ("thing", "Game of Thrones")):
                conn.execute("INSERT INTO memory_entities (id, user_id, kind, name) "
                             "VALUES (gen_random_uuid(), %s, %s, %s)", (person, kind, entity))

        upgrade(pg_server.url(name))
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            keys = dict(conn.execute("SELECT name, name_key FROM memory_entities").fetchall())
            assert keys == {"Jürgen": "jurgen", "Café  Müller": "cafe muller", "Game of Thrones": "game of thrones"}
            assert _index(conn, "ix_memory_entities_user_name_key")
            assert not _index(conn, "ix_memory_entities_user_name")

        command.downgrade(alembic_config(pg_server.url(name)), "0026")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            columns = {row[0] for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memory_entities'")}
            assert "name_key" not in columns
            assert _index(conn, "ix_memory_entities_user_name")
        upgrade(pg_server.url(name))
