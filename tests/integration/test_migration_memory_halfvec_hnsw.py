"""Migration 0021 on a database with memories: the HNSW index over full-precision embeddings is replaced by one
over their half-precision cast (the same build parameters), defined as the model defines it, and the downgrade
brings the old index back."""

from __future__ import annotations

import psycopg
from alembic import command

from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import VECTOR, database_at

OLD, NEW = "ix_memory_nodes_embedding_hnsw", "ix_memory_nodes_embedding_half_hnsw"


def _definition(conn: psycopg.Connection, name: str) -> str | None:
    row = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (name,)).fetchone()
    return None if row is None else str(row[0])


def test_0021_replaces_the_hnsw_index_by_one_over_halfvec_and_downgrades(pg_server) -> None:
    with database_at(pg_server, "0020") as (name, person):
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute(
                "INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, w_raw, w_abs, w_decay, "
                "captured_at) VALUES (%s, 'a', 'user', 'a', %s, 0.5, 0.5, 0.5, now())", (person, VECTOR))
            old = _definition(conn, OLD)
            assert old is not None and "(embedding vector_cosine_ops)" in old
            assert _definition(conn, NEW) is None

        upgrade(pg_server.url(name), "0021")  # 0029 replaces this index by one per vector space
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert _definition(conn, OLD) is None
            new = _definition(conn, NEW)
            assert new is not None
            assert "USING hnsw (((embedding)::halfvec(256)) halfvec_cosine_ops)" in new, new
            assert "WITH (m='16', ef_construction='64')" in new, new
            # The node written before is in the new index: an index scan of it finds it.
            conn.execute("SET enable_seqscan = off")
            plan = "\n".join(str(r[0]) for r in conn.execute(
                "EXPLAIN SELECT id FROM memory_nodes ORDER BY CAST(embedding AS halfvec(256)) "
                "<=> CAST(%s AS halfvec(256)) LIMIT 1", (VECTOR,)).fetchall())
            assert NEW in plan, plan
            assert conn.execute("SELECT source_key FROM memory_nodes ORDER BY CAST(embedding AS halfvec(256)) "
                                "<=> CAST(%s AS halfvec(256)) LIMIT 1", (VECTOR,)).fetchone() == ("a",)

        command.downgrade(alembic_config(pg_server.url(name)), "0020")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert _definition(conn, NEW) is None
            assert _definition(conn, OLD) == old
        upgrade(pg_server.url(name), "0021")
