"""The HNSW index holds the embeddings in half precision: the statements that choose the nearest memories (the
promotion's candidates, the recall's vector channel and its search of a wide period) are planned on it, and every
similarity they return is still the one of the full-precision vectors, so thresholds and edge weights keep their
meaning."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import select, text

from brain.core import Brain
from brain.memory.candidates import NEAREST, Probe, gather_candidates
from brain.memory.candidates import candidates_sql as promotion_sql
from brain.memory.promotion import index_only_plans, vector_index_settings
from brain.memory.recall import LONGEST_ANCHOR, _use_index_scan, direct_candidates
from brain.memory.recall import candidates_sql as recall_sql
from brain.memory.settings import MemorySettings
from brain.memory.weights import MagnetFields
from tests.integration.conftest import new_user

SETTINGS = MemorySettings()
SPACE = SETTINGS.space
INDEX = SPACE.index_name
NOW = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
NODES = 3000


async def many_nodes(brain: Brain, user_id: uuid.UUID, rng: np.random.Generator) -> np.ndarray:
    """NODES memories with random unit vectors (stored as float32, as pgvector keeps them), analysed. The index is
    rebuilt first: the tests before this one in the same database left their memories in it as dead entries
    (emptied by DELETE, vacuumed now and then), and a graph full of them finds fewer of the true nearest, by how
    many tests ran before."""
    async with brain.transactions.begin() as uow:
        await uow.session.execute(text(f"REINDEX INDEX {INDEX}"))
    vectors = rng.normal(size=(NODES, SPACE.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [{"i": i, "at": (NOW - timedelta(minutes=NODES - i)).isoformat()} for i in range(NODES)]
    async with brain.transactions.begin() as uow:
        await uow.session.execute(text("""
            INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, embedder, w_raw, w_abs, w_decay,
                                      captured_at)
            SELECT :user_id, 'n' || r.i, 'user', 'memory ' || r.i, (CAST(:vectors AS vector[]))[r.i + 1], :space,
                   0.5, 0.5, 0.5, r.at
            FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(i int, at timestamptz)"""),
            {"user_id": user_id, "rows": json.dumps(rows), "vectors": list(vectors), "space": SPACE.key})
    async with brain.transactions.begin() as uow:
        await uow.session.execute(text("ANALYZE memory_nodes"))
    return vectors


async def test_the_statements_choosing_the_nearest_are_planned_on_the_halfvec_index(brain: Brain) -> None:
    person = await new_user(brain)
    vectors = await many_nodes(brain, person, np.random.default_rng(5))
    query = vectors[7]
    async with brain.transactions.read() as session:
        await session.execute(select(*vector_index_settings(SETTINGS.promotion_ef_search), *index_only_plans()))
        plan = "\n".join(await session.scalars(text("EXPLAIN " + promotion_sql(SPACE, 0, 0).text), {
            "probes": json.dumps([{"i": 0, "entities": [], "themes": []}]), "vectors": [query], "user_id": person,
            "nearest": SETTINGS.ann_candidates, "entities": SETTINGS.entity_candidates,
            "themes": SETTINGS.theme_candidates, "timeline": SETTINGS.timeline_candidates, "named": []}))
    assert f"Index Scan using {INDEX}" in plan, plan
    async with brain.transactions.read() as session:
        await _use_index_scan(session, SETTINGS)
        # A wide period (more memories than an exact search would read) is searched on the index too.
        plan = "\n".join(await session.scalars(text("EXPLAIN " + recall_sql(False, True, space=SPACE).text), {
            "user_id": person, "at": NOW, "q": query, "limit": 30, "cap": 1, "n": NODES, "lexemes": [],
            "start": NOW - timedelta(days=7), "end": NOW, "exact_max": 30, "precisions": list(LONGEST_ANCHOR),
            "longest": list(LONGEST_ANCHOR.values())}))
    assert plan.count(f"Index Scan using {INDEX}") == 2, plan  # the vector channel and the wide period


async def test_the_lexical_channel_reads_the_full_text_index_once_per_word(brain: Brain) -> None:
    # The words come as one array and are scanned in a lateral join: each word's scan must still be an index scan
    # (one per word, its term an outer value), never a scan of the person's memories.
    person = await new_user(brain)
    vectors = await many_nodes(brain, person, np.random.default_rng(8))
    async with brain.transactions.read() as session:
        await _use_index_scan(session, SETTINGS)
        plan = "\n".join(await session.scalars(text("EXPLAIN ANALYZE " + recall_sql(True, False, space=SPACE).text), {
            "user_id": person, "at": NOW, "q": vectors[3], "limit": 30, "cap": 41, "n": NODES,
            "lexemes": ["1234", "memory"], "terms": ["'1234'", "'memory'"]}))
    assert "Bitmap Index Scan on ix_memory_nodes_search" in plan, plan
    assert "Seq Scan on memory_nodes" not in plan, plan
    # Both words were looked up: the rare one (one memory) and the common one (stopped one past the cap).
    assert re.search(r"Bitmap Index Scan on ix_memory_nodes_search .*loops=2", plan), plan


async def test_similarities_leaving_sql_are_those_of_the_full_precision_vectors(brain: Brain) -> None:
    person = await new_user(brain)
    rng = np.random.default_rng(6)
    vectors = await many_nodes(brain, person, rng)
    query = rng.normal(size=SPACE.dim).astype(np.float32)
    query /= np.linalg.norm(query)
    exact = vectors.astype(np.float64) @ query.astype(np.float64)  # unit vectors: the cosines
    async with brain.transactions.read() as session:
        # What half precision would have given: if the statements returned it, the checks below would fail.
        half = dict((await session.execute(text(
            f"SELECT source_key, 1 - (CAST(embedding AS {SPACE.half}) <=> CAST(CAST(:q AS vector) AS {SPACE.half})) "
            "FROM memory_nodes WHERE user_id = :u"), {"q": query, "u": person})).all())
    assert max(abs(half[f"n{i}"] - exact[i]) for i in range(NODES)) > 1e-5
    async with brain.transactions.read() as session:
        source = {row.id: int(row.source_key[1:]) for row in await session.execute(text(
            "SELECT id, source_key FROM memory_nodes WHERE user_id = :u"), {"u": person})}
        await session.execute(select(*vector_index_settings(SETTINGS.promotion_ef_search), *index_only_plans()))
        [found] = await gather_candidates(session, SETTINGS, person,
                                          [Probe(query.tolist(), MagnetFields([], [], None, None))])
    nearest = [c for c in found if c.kinds & NEAREST]
    assert len(nearest) == SETTINGS.ann_candidates
    for candidate in nearest:
        assert candidate.cosine == pytest.approx(exact[source[candidate.id]], abs=1e-6)
    # They are the nearest by the index, not any 32: at least half of the exact top 32 are among them (random
    # vectors in 384 dimensions are a hard case for any approximate index: 22-23 here; 32 random nodes would share
    # one or none).
    top = {int(i) for i in np.argsort(-exact)[:SETTINGS.ann_candidates]}
    assert len(top & {source[c.id] for c in nearest}) >= SETTINGS.ann_candidates // 2
    async with brain.transactions.read() as session:
        await _use_index_scan(session, SETTINGS)
        direct = await direct_candidates(session, person, "", query.tolist(), NOW, 30)
    assert len(direct) == 30
    for candidate in direct:  # a parameter cast to halfvec in one place would be halfvec in all: about 1e-5 off
        assert candidate.vector == pytest.approx(exact[source[candidate.node_id]], abs=1e-6)


async def test_a_node_keeps_its_embedding_in_its_own_row(brain: Brain) -> None:
    # The candidate statement computes a cosine with the stored vector of ~70 nodes per new memory: a vector moved to
    # the TOAST table costs a TOAST index lookup each time. A node of the default space with a text of a few
    # sentences (a row of about 2.6 kB) keeps it inline (migration 0042); by PostgreSQL's default it would not.
    person = await new_user(brain)
    vector = np.random.default_rng(11).normal(size=SPACE.dim).astype(np.float32)
    words = ("We finally booked the cabin by the lake for the second week of August, the one with the old rowing "
             "boat and the sauna; Maria wants to bring her sister, and I promised to ask about the dog. ")
    async with brain.transactions.begin() as uow:
        await uow.session.execute(text("""
            INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, embedder, w_raw, w_abs, w_decay,
                                      captured_at)
            VALUES (:user_id, 'inline', 'user', :text, :vector, :space, 0.5, 0.5, 0.5, :at)"""),
            {"user_id": person, "text": words * 2, "vector": vector, "space": SPACE.key, "at": NOW})
    async with brain.transactions.read() as session:
        row_bytes, toast_chunk = (await session.execute(text(
            "SELECT pg_column_size(n.*), pg_column_toast_chunk_id(n.embedding) FROM memory_nodes n "
            "WHERE n.user_id = :user_id"), {"user_id": person})).one()
    assert row_bytes > 2032, row_bytes  # above PostgreSQL's default threshold, so the setting is what keeps it
    assert toast_chunk is None
