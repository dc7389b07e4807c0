"""Edge candidates of new memories: the earlier nodes worth comparing with each entry of a promotion batch.
They come from four indexes, for a chunk of the batch in one statement (pgvector HNSW, GIN on entities, the
btree of memory_node_themes, btree on the timeline), never from a scan of all nodes; the batch's own new nodes,
not written yet, are then merged in under the same limits, so every entry sees what it would see if promoted
alone."""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from brain.memory.settings import MemorySettings
from brain.memory.space import VectorSpace
from brain.memory.weights import MagnetFields, timeline_window_days

# Why a node is a candidate, as bit flags: one node may come through several indexes.
NEAREST = 1  # among the nearest by embedding (active or not, so a duplicate of an inactive node is found)
ENTITY = 2  # among the most recent active nodes sharing an entity
THEME = 4  # among the most recent active nodes sharing a theme
TIME = 8  # among the nearest active anchors of the same precision on either side, within the tolerance


class Candidate(NamedTuple):
    """An earlier node worth comparing with an entry. Its magnets hold, of its entities, only those some entry of
    the same search names (all a comparison with those entries can use). A named tuple: a promotion batch makes
    tens of thousands, and a tuple is made three times faster than a frozen dataclass."""

    id: int
    speaker: str
    active: bool
    w_abs: float
    cosine: float
    magnets: MagnetFields
    kinds: int = 0
    marks: tuple[str, ...] | None = None  # capture.fact_marks of its text; None for nodes older than migration 0026


@dataclass(frozen=True)
class Probe:
    """What the candidate query needs of one entry: its embedding, or the short-term entry to read it from in
    the database (no vector travels twice), and its magnets. Candidates carry their entity ids as text, so the
    probe's magnets must too for the layers to compare them."""

    vector: Sequence[float] | None
    magnets: MagnetFields
    entry_id: uuid.UUID | None = None


@dataclass(frozen=True)
class BatchNode:
    """A node made earlier in the same batch: not in the table yet (or not visible to the search), so the indexes
    cannot return it. `id` is the id reserved for it (`promotion._reserve_ids`)."""

    id: int
    speaker: str
    w_abs: float
    magnets: MagnetFields
    unit: np.ndarray  # the embedding scaled to length 1
    marks: tuple[str, ...] | None = None


def unit_vector(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


# One row per (entry, candidate). Each part keeps its own limit; the flags say which parts a node came through, so
# the batch's own nodes can be merged in under the same limits. Entities and themes: the newest active nodes sharing
# one of the entry's, from memory_node_entities and memory_node_themes (see `candidates_sql`); a common entity or
# theme costs no more than a rare one. The nearest are chosen on the HNSW index, which holds the embeddings in half
# precision, so they are ordered by its expression; every cosine returned is computed on the full vectors (the
# duplicate threshold and the edge weights keep their meaning). Only nodes of the memory's vector space are compared
# by cosine: a node not re-embedded yet after a change of embedder can still come by entity, theme or time, at
# cosine 0. The probes' vectors come as one `vector[]` parameter (pgvector's dumper), in probe order, or are read
# from their short-term entries: copied there through real[] into a value of their own, or the materialized probe
# would keep a pointer to the TOAST table and every cosine with it would fetch and copy the vector again (13 % of
# the statement for a chunk of 32).
_CANDIDATES = """
    WITH probe AS MATERIALIZED (
        SELECT e.i, coalesce((CAST(:vectors AS vector[]))[e.i + 1], (
                   SELECT CAST(CAST(st.embedding AS real[]) AS vector) FROM memory_short_term st
                   WHERE st.id = e.entry AND st.user_id = :user_id)
               ) AS v, e.entities, e.themes, e.prec, e.start, e.low, e.high
        FROM jsonb_to_recordset(CAST(:probes AS jsonb))
             AS e(i int, entry uuid, entities uuid[], themes text[], prec text, start timestamptz,
                  low timestamptz, high timestamptz)
    ), nearest AS (
        SELECT p.i, c.id, 1 AS kind FROM probe p CROSS JOIN LATERAL (
            SELECT n.id FROM memory_nodes n WHERE n.user_id = :user_id AND n.embedder = {space}
            ORDER BY {nearest} LIMIT :nearest) AS c
    ), sharing_entity AS (
        {sharing_entity}
    ), sharing_theme AS (
        {sharing_theme}
    ), near_in_time AS (
        SELECT p.i, c.id, 8 AS kind FROM probe p CROSS JOIN LATERAL (
            (SELECT n.id FROM memory_nodes n
             WHERE n.user_id = :user_id AND n.timeline_precision = p.prec AND n.active
               AND n.timeline_start <= p.start AND n.timeline_start >= p.low
             ORDER BY n.timeline_start DESC LIMIT :timeline)
            UNION ALL
            (SELECT n.id FROM memory_nodes n
             WHERE n.user_id = :user_id AND n.timeline_precision = p.prec AND n.active
               AND n.timeline_start > p.start AND n.timeline_start <= p.high
             ORDER BY n.timeline_start ASC LIMIT :timeline)) AS c
        WHERE p.prec IS NOT NULL
    ), pairs AS MATERIALIZED (
        SELECT u.i, u.id, bit_or(u.kind) AS kinds FROM (
            SELECT * FROM nearest UNION ALL SELECT * FROM sharing_entity
            UNION ALL SELECT * FROM sharing_theme UNION ALL SELECT * FROM near_in_time) AS u
        GROUP BY u.i, u.id
    )
    SELECT CAST((SELECT json_agg(json_build_array(pr.i, pr.id, pr.kinds,
                                             CASE WHEN n.embedder = {space} THEN 1 - (n.embedding <=> p.v) ELSE 0 END))
            FROM pairs pr JOIN probe p ON p.i = pr.i JOIN memory_nodes n ON n.id = pr.id
            WHERE n.user_id = :user_id) AS text) AS pairs,
           CAST((SELECT json_agg(json_build_array(n.id, n.speaker, n.active, n.w_abs,
                                             CASE WHEN n.entity_ids && CAST(:named AS uuid[])
                                                  THEN ARRAY(SELECT e FROM unnest(n.entity_ids) AS e
                                                             WHERE e = ANY(CAST(:named AS uuid[])))
                                                  ELSE '{{}}' END,
                                             n.themes, n.timeline_start, n.timeline_precision, n.fact_marks))
            FROM memory_nodes n WHERE n.id IN (SELECT id FROM pairs) AND n.user_id = :user_id) AS text) AS nodes
"""


# The newest active nodes sharing a key (an entity or a theme) of the entry: one backward scan of the side table's
# primary key per key, merged newest first (a Merge Append), so only as many nodes are read and checked for
# `active` as the limit needs, however common a key is.
_SHARING = """SELECT p.i, c.id, {kind} AS kind FROM probe p CROSS JOIN LATERAL (
            SELECT DISTINCT u.id FROM ({per_key}) AS u JOIN memory_nodes n ON n.id = u.id
            WHERE n.user_id = :user_id AND n.active
            ORDER BY u.id DESC LIMIT :{limit}) AS c
        WHERE cardinality(p.{keys}) > 0"""
_WITH_KEY = """(SELECT t.node_id AS id FROM {table} t
                  WHERE t.user_id = :user_id AND t.{column} = p.{keys}[{j}] ORDER BY t.node_id DESC)"""
_NONE = "SELECT 0 AS i, 0::bigint AS id, {kind} AS kind WHERE false"


def _sharing(kind: int, table: str, column: str, keys: str, limit: str, slots: int) -> str:
    if slots <= 0:
        return _NONE.format(kind=kind)
    per_key = "\n                  UNION ALL ".join(
        _WITH_KEY.format(table=table, column=column, keys=keys, j=j) for j in range(1, slots + 1))
    return _SHARING.format(kind=kind, per_key=per_key, limit=limit, keys=keys)


@functools.lru_cache(maxsize=256)
def candidates_sql(space: VectorSpace, entity_slots: int = 0, theme_slots: int = 0) -> Any:
    """The candidate statement for a chunk whose entries name at most `entity_slots` entities and have at most
    `theme_slots` themes. Each entity or theme of an entry is one backward scan of memory_node_entities or
    memory_node_themes."""
    return text(_CANDIDATES.format(
        space=space.literal, nearest=space.nearest("n.embedding", "p.v"),
        sharing_entity=_sharing(ENTITY, "memory_node_entities", "entity_id", "entities", "entities", entity_slots),
        sharing_theme=_sharing(THEME, "memory_node_themes", "theme", "themes", "themes", theme_slots)))


def _probe_row(settings: MemorySettings, i: int, probe: Probe) -> dict[str, Any]:
    magnets = probe.magnets
    row: dict[str, Any] = {"i": i, "entities": [str(e) for e in magnets.entity_ids], "themes": list(magnets.themes)}
    if probe.vector is None:
        row["entry"] = str(probe.entry_id)
    if magnets.timeline_start is not None and magnets.timeline_precision is not None:
        half = timedelta(days=timeline_window_days(magnets.timeline_precision, settings.timeline_tolerance))
        row.update(prec=magnets.timeline_precision, start=magnets.timeline_start.isoformat(),
                   low=(magnets.timeline_start - half).isoformat(), high=(magnets.timeline_start + half).isoformat())
    return row


class Found(NamedTuple):
    """The candidates of a chunk of probes as the statement returned them: two JSON documents, decoded by
    `decoded` where they are used. Promotion decodes them in the thread that decides, so the event loop that
    drives its connections is not held up by a few hundred kilobytes of JSON per chunk."""

    probes: int
    pairs: str | None
    nodes: str | None


async def search_candidates(session: AsyncSession, settings: MemorySettings, user_id: uuid.UUID,
                            probes: Sequence[Probe]) -> Found:
    """The earlier nodes of the person worth comparing with each probe, in one round trip, not decoded yet;
    expects the transaction's HNSW settings (iterative scan, ef_search) to be set."""
    if not probes:
        return Found(0, None, None)
    params = {"probes": json.dumps([_probe_row(settings, i, p) for i, p in enumerate(probes)]),
              "user_id": user_id, "nearest": settings.ann_candidates, "entities": settings.entity_candidates,
              "themes": settings.theme_candidates,
              "timeline": settings.timeline_candidates,
              "vectors": [None if p.vector is None else np.asarray(p.vector, np.float32) for p in probes]}
    # A candidate's entities matter only where they meet a probe's (the entity layer and the shared entities of
    # an edge): it carries just those, which keeps the uuids of unrelated people and places off the wire.
    params["named"] = sorted({str(e) for probe in probes for e in probe.magnets.entity_ids})
    # Thousands of rows per batch travel as two JSON documents: decoding JSON is far cheaper for the client than
    # decoding as many typed rows, and each node's fields come once however many entries it is a candidate for.
    entity_slots = max(len(probe.magnets.entity_ids) for probe in probes)
    theme_slots = max(len(probe.magnets.themes) for probe in probes)
    result = (await session.execute(candidates_sql(settings.space, entity_slots, theme_slots), params)).one()
    return Found(len(probes), result.pairs, result.nodes)


def decoded(found: Found) -> list[list[Candidate]]:
    """Each probe's candidates, in probe order."""
    nodes = {node_id: (speaker, active, w_abs, MagnetFields(entity_ids or [], themes or [],
                                                           datetime.fromisoformat(start) if start else None,
                                                           precision), None if marks is None else tuple(marks))
             for node_id, speaker, active, w_abs, entity_ids, themes, start, precision, marks
             in json.loads(found.nodes or "[]")}
    candidates: list[list[Candidate]] = [[] for _ in range(found.probes)]
    for i, node_id, kinds, cosine in json.loads(found.pairs or "[]"):
        speaker, active, w_abs, magnets, marks = nodes[node_id]
        candidates[i].append(Candidate(node_id, speaker, active, w_abs, cosine, magnets, kinds, marks))
    return candidates


async def gather_candidates(session: AsyncSession, settings: MemorySettings, user_id: uuid.UUID,
                            probes: Sequence[Probe]) -> list[list[Candidate]]:
    """The earlier nodes of the person worth comparing with each probe, decoded (`search_candidates`)."""
    return decoded(await search_candidates(session, settings, user_id, probes))


class BatchKeys:
    """Which of a batch's made nodes (by position in the batch, oldest first) name each entity and theme, so the
    newest ones sharing a key are found without testing every node made before."""

    def __init__(self) -> None:
        self.entity_ids: dict[Any, list[int]] = {}
        self.themes: dict[Any, list[int]] = {}

    def add(self, position: int, magnets: MagnetFields) -> None:
        for keys, index in ((magnets.entity_ids, self.entity_ids), (magnets.themes, self.themes)):
            for key in set(keys):
                index.setdefault(key, []).append(position)

    def newest(self, field: str, wanted: set[Any], limit: int) -> list[int]:
        """The positions of the `limit` newest nodes sharing one of `wanted`, newest first: each key's own newest
        `limit` hold them all."""
        index: dict[Any, list[int]] = getattr(self, field)
        picked: set[int] = set()
        for key in wanted:
            positions = index.get(key)
            if positions:
                picked.update(positions[-limit:])
        return sorted(picked, reverse=True)[:limit]


def with_batch_nodes(settings: MemorySettings, magnets: MagnetFields, unit: np.ndarray,
                     found: Sequence[Candidate], made: Sequence[BatchNode],
                     made_units: np.ndarray | None = None, made_keys: BatchKeys | None = None) -> list[Candidate]:
    """An entry's candidates from the indexes merged with the nodes made earlier in its batch, each part under
    its own limit as if those nodes had been in the table: nearest by cosine, the most recent (the batch's own
    nodes are the newest) for entities and themes, the nearest in time on either side. `made_units` may hold the
    made nodes' unit vectors stacked in one matrix (the batch keeps one), so all cosines are one product, and
    `made_keys` their entities and themes; only the batch nodes that can pass a limit become candidates."""
    if not made:
        return list(found)
    units = made_units if made_units is not None else np.stack([node.unit for node in made])
    cosines = units @ unit
    cosine_of = cosines.tolist()
    own_made: dict[int, Candidate] = {}

    def own(j: int) -> Candidate:
        candidate = own_made.get(j)
        if candidate is None:
            node = made[j]
            candidate = own_made[j] = Candidate(node.id, node.speaker, True, node.w_abs, cosine_of[j], node.magnets,
                                                marks=node.marks)
        return candidate

    chosen: dict[int, Candidate] = {}

    def keep(candidates: Sequence[Candidate], limit: int) -> None:
        for candidate in candidates[:limit]:
            chosen.setdefault(candidate.id, candidate)

    def newest_sharing(wanted: set[Any], field: str, limit: int) -> list[Candidate]:
        if made_keys is not None:
            return [own(j) for j in made_keys.newest(field, wanted, limit)] if limit > 0 else []
        sharing: list[Candidate] = []
        for j in range(len(made) - 1, -1, -1):
            if len(sharing) >= limit:
                break
            if not wanted.isdisjoint(getattr(made[j].magnets, field)):
                sharing.append(own(j))
        return sharing

    # The batch's nodes nearest by cosine, in a stable order (equal cosines keep the order they were made in):
    # no other batch node can be among the `ann_candidates` nearest of the merged list. Where the index gave that
    # many already, only a batch node nearer than the last of them can take a place (at an equal cosine the found
    # one stays ahead), so only those are sorted.
    limit = settings.ann_candidates
    if limit > 0:
        nearest_found = sorted((c for c in found if c.kinds & NEAREST), key=lambda c: -c.cosine)
        eligible = (np.flatnonzero(cosines > nearest_found[limit - 1].cosine) if len(nearest_found) >= limit
                    else np.arange(len(made)))
        order = eligible[np.argsort(-cosines[eligible], kind="stable")[:limit]]
        keep(sorted(nearest_found + [own(j) for j in order.tolist()], key=lambda c: -c.cosine), limit)
    entities, themes = set(magnets.entity_ids), set(magnets.themes)
    if entities:
        keep(newest_sharing(entities, "entity_ids", settings.entity_candidates)
             + sorted((c for c in found if c.kinds & ENTITY), key=lambda c: -c.id), settings.entity_candidates)
    if themes:
        keep(newest_sharing(themes, "themes", settings.theme_candidates)
             + sorted((c for c in found if c.kinds & THEME), key=lambda c: -c.id), settings.theme_candidates)
    start, precision = magnets.timeline_start, magnets.timeline_precision
    if start is not None and precision is not None:
        half = timedelta(days=timeline_window_days(precision, settings.timeline_tolerance))
        low, high = start - half, start + half
        timed = [c for c in found if c.kinds & TIME] + [
            own(j) for j, node in enumerate(made) if node.magnets.timeline_precision == precision
            and node.magnets.timeline_start is not None and low <= node.magnets.timeline_start <= high]
        offset = {c.id: (c.magnets.timeline_start - start).total_seconds() for c in timed
                  if c.magnets.timeline_start is not None}
        keep(sorted((c for c in timed if offset[c.id] <= 0), key=lambda c: -offset[c.id]), settings.timeline_candidates)
        keep(sorted((c for c in timed if offset[c.id] > 0), key=lambda c: offset[c.id]), settings.timeline_candidates)
    return list(chosen.values())
