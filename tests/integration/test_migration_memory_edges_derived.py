"""Migration 0017 on a database with memories: the themes of existing nodes are backfilled into
memory_node_themes, the edges lose their foreign keys, and the downgrade brings the keys back after removing
rows they would refuse."""

from __future__ import annotations

import psycopg
from alembic import command

from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import VECTOR, database_at


def _constraints(conn: psycopg.Connection) -> set[str]:
    return {row[0] for row in conn.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = 'memory_edges'::regclass AND contype IN ('f', 'u')")}


def test_0017_backfills_theme_rows_drops_edge_keys_and_downgrades(pg_server) -> None:
    with database_at(pg_server, "0016") as (name, person):
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            ids = [conn.execute(
                "INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, themes, w_raw, w_abs, "
                "w_decay, captured_at) VALUES (%s, %s, 'user', %s, %s, %s, 0.5, 0.5, 0.5, now()) RETURNING id",
                (person, key, key, VECTOR, themes)).fetchone()[0]  # type: ignore[index]
                for key, themes in (("a", ["harbour", "novel"]), ("b", ["novel"]), ("c", []))]
            for a, b in ((ids[0], ids[1]), (ids[1], ids[0])):
                conn.execute("INSERT INTO memory_edges (user_id, a_id, b_id, w_raw, w_abs) VALUES (%s, %s, %s, 1, 1)",
                             (person, a, b))
            assert {"fk_memory_edges_a_id_memory_nodes", "uq_memory_edges_a_id_b_id"} <= _constraints(conn)

        upgrade(pg_server.url(name), "0017")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            rows = set(conn.execute("SELECT user_id, theme, node_id FROM memory_node_themes").fetchall())
            assert rows == {(person, "harbour", ids[0]), (person, "novel", ids[0]), (person, "novel", ids[1])}
            assert _constraints(conn) == {"uq_memory_edges_user_id_a_id_b_id"}
            # Without keys an edge to a missing node is not refused (the code deletes edges with their nodes).
            conn.execute("INSERT INTO memory_edges (user_id, a_id, b_id, w_raw, w_abs) VALUES (%s, %s, -5, 1, 1)",
                         (person, ids[0]))

        command.downgrade(alembic_config(pg_server.url(name)), "0016")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('memory_node_themes')").fetchone() == (None,)
            assert {"fk_memory_edges_a_id_memory_nodes", "fk_memory_edges_b_id_memory_nodes",
                    "fk_memory_edges_user_id_users", "uq_memory_edges_a_id_b_id"} == _constraints(conn)
            assert sorted(conn.execute("SELECT a_id, b_id FROM memory_edges").fetchall()) == sorted(
                [(ids[0], ids[1]), (ids[1], ids[0])])
        upgrade(pg_server.url(name))
