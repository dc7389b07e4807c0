"""Recall in few round trips: its index settings once per pooled connection outside transactions, and the first
shell's edges brought along by the candidate statement, with the same results as asked for on their own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import event, select, text

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.promotion import PGVECTOR_MAX_SCAN_TUPLES, vector_index_settings
from brain.memory.recall import (
    _SESSION_SETTINGS,
    _SETTINGS_SQL,
    _direct_candidates,
    _use_index_scan,
    direct_candidates,
    outgoing_edges,
    query_vector,
    recall_nodes,
)
from brain.memory.settings import MemorySettings
from brain.memory.space import WORDLLAMA_256
from tests.integration.test_memory_recall import node_id, remember_all

MONDAY = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
SETTINGS = MemorySettings(space=WORDLLAMA_256)  # the tests embed with WordLlama
LINES = [
    "My sister Anna loves bouldering in the climbing gym.",
    "Anna invited me to her birthday party on the twelfth.",
    "Anna and I went bouldering again, she climbed the blue route.",
    "The washing machine makes a strange noise when spinning.",
    "Bought oat milk and bananas at the market.",
]


async def test_the_first_shell_comes_with_the_candidates_exactly_as_its_own_statement_gives_it(
        memory: Memory, brain: Brain, user) -> None:
    await remember_all(memory, user.id, LINES)
    climbs = await node_id(brain, user.id, "loves bouldering")
    query = "bouldering with Anna in the climbing gym"
    [vector] = memory.embedder.embed([query])
    space = memory.settings.space
    per_node = SETTINGS.k_edges_per_shell[1] + 1
    async with brain.transactions.glance() as session:
        await _use_index_scan(session, SETTINGS)
        found, first_hop = await _direct_candidates(
            session, user.id, query, query_vector(vector), MONDAY, 30, window=None, population=None, shares=None,
            space=space, first_hop=(per_node, SETTINGS.anchors, SETTINGS.anchor_min_similarity))
        alone = await direct_candidates(session, user.id, query, vector, MONDAY, 30, space=space)
        assert first_hop is not None and climbs in first_hop.sources
        assert first_hop.covers([climbs], per_node) and not first_hop.covers([climbs], per_node + 1)
        sources = sorted(first_hop.sources)
        asked = await outgoing_edges(session, user.id, sources, vector, MONDAY, per_node, space=space)
    assert sorted(found, key=lambda c: c.node_id) == sorted(alone, key=lambda c: c.node_id)
    brought = first_hop.outgoing(sources)
    assert brought == asked
    assert asked[0][climbs]  # the anchor has edges, so the comparison compares something
    assert first_hop.outgoing([climbs]) == ({climbs: asked[0][climbs]},
                                            {e.target: asked[1][e.target] for e in asked[0][climbs]})


async def test_recall_inside_a_transaction_gives_what_it_gives_outside(memory: Memory, brain: Brain, user) -> None:
    await remember_all(memory, user.id, LINES)
    query = "bouldering with Anna in the climbing gym"
    [vector] = memory.embedder.embed([query])
    results = []
    for scope in (brain.transactions.read, brain.transactions.glance):
        async with scope() as session:
            results.append(await recall_nodes(session, memory.settings, user_id=user.id, query_text=query, query=vector,
                                              at=MONDAY, k=4, mode="chat"))
    assert results[0] == results[1]
    assert any(item.why.startswith("via #") for item in results[0])  # the first shell took part


@pytest.mark.fresh_connections
async def test_recall_sets_its_index_settings_once_per_connection(memory: Memory, brain: Brain, user) -> None:
    await remember_all(memory, user.id, LINES[:3])
    settings_sent = []

    def count(conn, cursor, statement, params, context, executemany) -> None:
        if "set_config" in statement:
            settings_sent.append(statement)

    event.listen(brain.db.engine.sync_engine, "before_cursor_execute", count)
    try:
        async with brain.db.sharing():  # one connection for all of them
            for _ in range(3):
                assert await memory.recall(user.id, "bouldering", MONDAY, k=2)
            async with brain.transactions.glance() as session:
                connection = await session.connection()
                assert connection.info[_SESSION_SETTINGS] == (str(SETTINGS.hnsw_ef_search),
                                                              str(SETTINGS.hnsw_max_scan_tuples))
                assert await session.scalar(text("SHOW hnsw.ef_search")) == str(SETTINGS.hnsw_ef_search)
                assert await session.scalar(text("SHOW jit")) == "off"
    finally:
        event.remove(brain.db.engine.sync_engine, "before_cursor_execute", count)
    assert len(settings_sent) == 1


async def test_promotion_sets_every_hnsw_setting_it_needs_over_what_recall_left_on_the_connection(
        brain: Brain) -> None:
    async with brain.db.engine.connect() as connection:
        await connection.execute(_SETTINGS_SQL, {"ef": "100", "scan": "2000", "local": False})
        await connection.commit()
        assert await connection.scalar(text("SHOW hnsw.max_scan_tuples")) == "2000"
        await connection.execute(select(*vector_index_settings(48)))
        assert await connection.scalar(text("SHOW hnsw.max_scan_tuples")) == str(PGVECTOR_MAX_SCAN_TUPLES)
        assert await connection.scalar(text("SHOW hnsw.ef_search")) == "48"
        await connection.rollback()
        assert await connection.scalar(text("SHOW hnsw.max_scan_tuples")) == "2000"  # only for that transaction
        await connection.execute(text("RESET ALL"))
        await connection.commit()


async def test_recall_statements_are_never_prepared_and_the_connection_keeps_its_plans(
        memory: Memory, brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    """psycopg prepares a statement run five times on a connection, and PostgreSQL may then use one generic plan
    for any query vector and period: recall runs its statements unprepared. The connection's own setting and
    plan_cache_mode stay as they were for whatever runs on it next."""
    await remember_all(memory, user.id, LINES[:3])
    prepared = text("SELECT statement FROM pg_prepared_statements")
    async with brain.db.sharing():  # one connection for all of them
        async with brain.transactions.glance() as session:
            before = set((await session.scalars(prepared)).all())
        for _ in range(8):
            assert await memory.recall(user.id, "bouldering", MONDAY, k=2)
        async with brain.transactions.glance() as session:
            driver = (await (await session.connection()).get_raw_connection()).driver_connection
            assert driver is not None and driver.prepare_threshold == 5
            assert set((await session.scalars(prepared)).all()) == before
            assert await session.scalar(text("SHOW plan_cache_mode")) == "auto"
