"""Migration 0045: every space's HNSW index (the default one and one made at run time) inserts with
ef_construction 32 from then on, as a new index is built (brain.memory.space.index_ddl); no index is rebuilt, the
nodes in it stay findable, and the downgrade sets 64 again."""

from __future__ import annotations

import psycopg
from alembic import command

from brain.memory.space import DEFAULT_SPACE, HNSW_EF_CONSTRUCTION, WORDLLAMA_256, index_ddl
from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import database_at

OTHER = WORDLLAMA_256  # a space whose index the running memory makes when an installation changes to it


def _options(conn: psycopg.Connection, name: str) -> tuple[list[str], int]:
    row = conn.execute("SELECT c.reloptions, c.oid FROM pg_class c WHERE c.relname = %s", (name,)).fetchone()
    assert row is not None, name
    return sorted(row[0]), int(row[1])


def test_0045_sets_ef_construction_32_on_every_space_index_without_a_rebuild_and_downgrades(pg_server) -> None:
    vector = "[" + ",".join(["0.05"] * DEFAULT_SPACE.dim) + "]"
    with database_at(pg_server, "0044") as (name, person):
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute(index_ddl(OTHER).replace(f"ef_construction = {HNSW_EF_CONSTRUCTION}",
                                                  "ef_construction = 64"))
            conn.execute(
                "INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, embedder, w_raw, w_abs, "
                "w_decay, captured_at) VALUES (%s, 'a', 'user', 'a', %s, %s, 0.5, 0.5, 0.5, now())",
                (person, vector, DEFAULT_SPACE.key))
            before = {index: _options(conn, index) for index in (DEFAULT_SPACE.index_name, OTHER.index_name)}
            assert all(options == ["ef_construction=64", "m=16"] for options, _ in before.values()), before

        upgrade(pg_server.url(name), "0045")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            for index, (_, oid) in before.items():
                assert _options(conn, index) == (["ef_construction=32", "m=16"], oid)  # the same index, not rebuilt
            conn.execute("SET enable_seqscan = off")
            half = DEFAULT_SPACE.half
            query = (f"SELECT source_key FROM memory_nodes WHERE embedder = {DEFAULT_SPACE.literal} "
                     f"ORDER BY CAST(embedding AS {half}) <=> CAST(%s AS {half}) LIMIT 1")
            plan = "\n".join(str(r[0]) for r in conn.execute("EXPLAIN " + query, (vector,)).fetchall())
            assert DEFAULT_SPACE.index_name in plan, plan
            assert conn.execute(query, (vector,)).fetchone() == ("a",)

        command.downgrade(alembic_config(pg_server.url(name)), "0044")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            for index, (_, oid) in before.items():
                assert _options(conn, index) == (["ef_construction=64", "m=16"], oid)
        upgrade(pg_server.url(name), "0045")
