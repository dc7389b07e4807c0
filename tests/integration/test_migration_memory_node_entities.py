"""Migration 0019 on a database with memories: the entities of existing nodes are backfilled into
memory_node_entities, the GIN index on memory_nodes.entity_ids goes, and the downgrade brings it back."""

from __future__ import annotations

import uuid

import psycopg
from alembic import command

from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import VECTOR, database_at


def _has_gin(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT to_regclass('ix_memory_nodes_entity_ids')").fetchone() != (None,)


def test_0019_backfills_entity_rows_drops_the_gin_index_and_downgrades(pg_server) -> None:
    with database_at(pg_server, "0018") as (name, person):
        anna, tom = uuid.uuid4(), uuid.uuid4()
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            ids = [conn.execute(
                "INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, entity_ids, w_raw, w_abs, "
                "w_decay, captured_at) VALUES (%s, %s, 'user', %s, %s, %s, 0.5, 0.5, 0.5, now()) RETURNING id",
                (person, key, key, VECTOR, entities)).fetchone()[0]  # type: ignore[index]
                for key, entities in (("a", [anna, tom]), ("b", [tom]), ("c", []))]
            assert _has_gin(conn)

        upgrade(pg_server.url(name))
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            rows = set(conn.execute("SELECT user_id, entity_id, node_id FROM memory_node_entities").fetchall())
            assert rows == {(person, anna, ids[0]), (person, tom, ids[0]), (person, tom, ids[1])}
            assert not _has_gin(conn)

        command.downgrade(alembic_config(pg_server.url(name)), "0018")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('memory_node_entities')").fetchone() == (None,)
            assert _has_gin(conn)
        upgrade(pg_server.url(name))
