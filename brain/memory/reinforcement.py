"""Usage reinforcement: after an answer, the (at most three) recalled memories the answer actually drew on,
measured as embedding similarity between the whole answer and each memory, get stronger. This is the only
place that reinforces: reading alone never does, and a duplicate write does not either.

A reinforced node gets w_raw + boost, is re-damped, is present again at full strength, and the edges of its
pairs are recomputed forward from their frozen layer values (old edges of other nodes stay untouched)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from brain.memory.promotion import recompute_edges
from brain.memory.settings import MemorySettings
from brain.memory.space import VectorSpace
from brain.memory.weights import reinforced


@dataclass(frozen=True)
class UsageDecision:
    """Which recalled memories the answer used, and why the rest did not count (for the pipeline log)."""

    chosen: tuple[int, ...]
    similarities: Mapping[int, float]
    closest_rejected: float | None
    outcome: str  # computed | empty_answer | no_candidate


def choose_used(similarities: Mapping[int, float], threshold: float, at_most: int) -> UsageDecision:
    """The most similar memories at or above the threshold, at most `at_most` of them."""
    if not similarities:
        return UsageDecision((), {}, None, "no_candidate")
    ordered = sorted(similarities.items(), key=lambda item: (-item[1], item[0]))
    above = [node for node, similarity in ordered if similarity >= threshold]
    chosen = tuple(above[:max(at_most, 0)])
    rejected = [similarity for node, similarity in ordered if node not in chosen]
    return UsageDecision(chosen, dict(similarities), max(rejected) if rejected else None, "computed")


_SIMILARITY_SQL = text("""
    SELECT id, 1 - (embedding <=> CAST(:answer AS vector)) AS similarity
    FROM memory_nodes WHERE user_id = :user_id AND id = ANY(CAST(:ids AS bigint[])) AND embedder = :space""")

_REINFORCE_SQL = text("""
    SELECT id, w_raw FROM memory_nodes WHERE user_id = :user_id AND id = ANY(CAST(:ids AS bigint[]))
    ORDER BY id FOR UPDATE""")


async def answer_similarities(session: AsyncSession, user_id: uuid.UUID, answer: Sequence[float],
                              node_ids: Sequence[int], space: VectorSpace) -> dict[int, float]:
    """The answer's similarity to each of these memories whose vector is of the answer's space (a memory not
    re-embedded yet after a change of embedder has none to compare)."""
    rows = await session.execute(_SIMILARITY_SQL, {"user_id": user_id, "answer": np.asarray(answer, np.float32),
                                                   "ids": list(dict.fromkeys(node_ids)), "space": space.key})
    return {int(row.id): float(row.similarity) for row in rows}


async def reinforce_nodes(session: AsyncSession, settings: MemorySettings, user_id: uuid.UUID,
                          node_ids: Sequence[int], now: datetime) -> list[int]:
    """Reinforces the person's nodes among `node_ids` (others are ignored) and recomputes their pairs'
    edges. Returns the ids reinforced."""
    ids = sorted(set(node_ids))
    if not ids:
        return []
    rows = (await session.execute(_REINFORCE_SQL, {"user_id": user_id, "ids": ids})).all()
    done: list[int] = []
    for row in rows:
        w_raw, w_abs = reinforced(float(row.w_raw), settings)
        await session.execute(text("""
            UPDATE memory_nodes SET w_raw = :w_raw, w_abs = :w_abs, w_decay = :w_abs, active = true,
                   frequency = frequency + 1, reinforced_at = :now, decayed_at = :now
            WHERE id = :id AND user_id = :user_id"""),
            {"w_raw": w_raw, "w_abs": w_abs, "now": now, "id": row.id, "user_id": user_id})
        done.append(int(row.id))
    if done:
        await recompute_edges(session, user_id, done, settings)
    return done
