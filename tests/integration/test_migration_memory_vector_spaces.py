"""Migration 0029 on a database with memories: every memory stays, its vector marked as WordLlama's (the only
embedder before), the columns take vectors of any length, the default space's partial HNSW index is defined as the
model defines it; the downgrade refuses while vectors of another space exist, and works once none do."""

from __future__ import annotations

import psycopg
import pytest
from alembic import command
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex

from brain.memory.models import MemoryNode
from brain.memory.space import DEFAULT_SPACE
from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import VECTOR, database_at


def _definition(conn: psycopg.Connection, name: str) -> str | None:
    row = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (name,)).fetchone()
    return None if row is None else str(row[0])


def test_0029_keeps_every_memory_marks_its_space_and_indexes_the_default_space(pg_server) -> None:
    with database_at(pg_server, "0028") as (name, person):
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            for key in ("a", "b"):
                conn.execute(
                    "INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, w_raw, w_abs, w_decay, "
                    "captured_at) VALUES (%s, %s, 'user', 'Jürgen', %s, 0.5, 0.5, 0.5, now())", (person, key, VECTOR))
            conn.execute("INSERT INTO memory_short_term (id, user_id, speaker, text, at, embedding, status) "
                         "VALUES (gen_random_uuid(), %s, 'user', 'later', now(), %s, 'pending')", (person, VECTOR))

        upgrade(pg_server.url(name))
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert conn.execute("SELECT source_key, embedder, vector_dims(embedding) FROM memory_nodes "
                                "ORDER BY source_key").fetchall() == [("a", "wordllama@256", 256),
                                                                      ("b", "wordllama@256", 256)]
            assert conn.execute("SELECT embedder FROM memory_short_term").fetchall() == [("wordllama@256",)]
            # A vector of another length fits beside them now; the full-text column folds the words (0030).
            conn.execute("UPDATE memory_nodes SET embedding = %s, embedder = %s WHERE source_key = 'b'",
                         ("[" + ",".join(["0.05"] * DEFAULT_SPACE.dim) + "]", DEFAULT_SPACE.key))
            assert conn.execute("SELECT search FROM memory_nodes WHERE source_key = 'a'").fetchone() == ("'jurgen':1",)
            new = _definition(conn, DEFAULT_SPACE.index_name)
            assert new is not None and f"WHERE ((embedder)::text = '{DEFAULT_SPACE.key}'" in new, new
            # Autogenerate does not compare an index expression's type modifiers: the model's own DDL, built on the
            # same table under another name, must give the same definition.
            [model_index] = [ix for ix in MemoryNode.__table__.indexes if ix.name == DEFAULT_SPACE.index_name]
            ddl = str(CreateIndex(model_index).compile(dialect=postgresql.dialect()))
            conn.execute(ddl.replace(DEFAULT_SPACE.index_name, "ix_model_copy"))
            assert _definition(conn, "ix_model_copy") == new.replace(DEFAULT_SPACE.index_name, "ix_model_copy")
            conn.execute("DROP INDEX ix_model_copy")

        with pytest.raises(RuntimeError, match="EMBEDDER=wordllama"):
            command.downgrade(alembic_config(pg_server.url(name)), "0028")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute("UPDATE memory_nodes SET embedding = %s, embedder = 'wordllama@256'", (VECTOR,))
        command.downgrade(alembic_config(pg_server.url(name)), "0028")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM memory_nodes").fetchone() == (2,)
        upgrade(pg_server.url(name))
