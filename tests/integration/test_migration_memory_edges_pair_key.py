"""Migration 0044 on a database with edges: the surrogate id goes, the pair (user_id, a_id, b_id) becomes the
primary key with every row kept, and the downgrade gives each row an id again."""

from __future__ import annotations

import psycopg
import pytest
from alembic import command

from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import VECTOR, database_at


def _primary_key(conn: psycopg.Connection) -> list[str]:
    return [row[0] for row in conn.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
        "WHERE i.indrelid = 'memory_edges'::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)")]


def _columns(conn: psycopg.Connection) -> set[str]:
    return {row[0] for row in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'memory_edges'")}


def test_0044_makes_the_pair_the_key_keeps_every_edge_and_downgrades(pg_server) -> None:
    with database_at(pg_server, "0043") as (name, person):
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            ids = [conn.execute(
                "INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, embedder, w_raw, w_abs, "
                "w_decay, captured_at) VALUES (%s, %s, 'user', %s, %s, 'wordllama@256', 0.5, 0.5, 0.5, "
                "now()) RETURNING id", (person, key, key, VECTOR)).fetchone()[0]  # type: ignore[index]
                for key in ("a", "b", "c")]
            pairs = [(ids[0], ids[1]), (ids[1], ids[0]), (ids[1], ids[2]), (ids[2], ids[1])]
            for number, (a, b) in enumerate(pairs, start=1):
                conn.execute("INSERT INTO memory_edges (user_id, a_id, b_id, w_raw, w_abs) VALUES (%s, %s, %s, %s, %s)",
                             (person, a, b, number, number / 10))
            assert _primary_key(conn) == ["id"]

        upgrade(pg_server.url(name), "0044")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert _primary_key(conn) == ["user_id", "a_id", "b_id"]
            assert "id" not in _columns(conn)
            assert sorted(conn.execute("SELECT a_id, b_id, w_raw FROM memory_edges").fetchall()) == sorted(
                (a, b, float(number)) for number, (a, b) in enumerate(pairs, start=1))
            with pytest.raises(psycopg.errors.UniqueViolation):  # one row per direction, as before
                conn.execute("INSERT INTO memory_edges (user_id, a_id, b_id, w_raw, w_abs) VALUES (%s, %s, %s, 1, 1)",
                             (person, ids[0], ids[1]))

        command.downgrade(alembic_config(pg_server.url(name)), "0043")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert _primary_key(conn) == ["id"]
            numbered = conn.execute("SELECT id, a_id, b_id FROM memory_edges").fetchall()
            assert len({row[0] for row in numbered}) == len(pairs)
            assert sorted((a, b) for _, a, b in numbered) == sorted(pairs)
            conn.execute("INSERT INTO memory_edges (user_id, a_id, b_id, w_raw, w_abs) VALUES (%s, %s, %s, 1, 1)",
                         (person, ids[0], ids[2]))  # the sequence hands out ids again
            with pytest.raises(psycopg.errors.UniqueViolation):
                conn.execute("INSERT INTO memory_edges (user_id, a_id, b_id, w_raw, w_abs) VALUES (%s, %s, %s, 1, 1)",
                             (person, ids[0], ids[1]))
        upgrade(pg_server.url(name))
