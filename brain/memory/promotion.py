"""Promotion: mature short-term entries become long-term nodes 1:1, with edges to earlier nodes over the
four layers. A reliable queue: entries are claimed with FOR UPDATE SKIP LOCKED and leave the queue only in
the transaction that writes their node; one promoter per person at a time (advisory lock), so nodes
promoted concurrently still see each other. Edge candidates come from indexes only, never a full scan."""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from brain.memory.models import MemoryEdge, MemoryNode, ShortTermEntry
from brain.memory.settings import MemorySettings
from brain.memory.weights import (
    MagnetFields,
    compare_layers,
    damp,
    edge_weights,
    half_reactivated,
    timeline_window_days,
)
from brain.pipeline_log import PipelineLog, Span, write_log_now
from brain.store.unit_of_work import Transactions

logger = logging.getLogger(__name__)


@dataclass
class PromotionReport:
    claimed: int = 0
    promoted: int = 0  # new nodes
    duplicates: int = 0  # matched an active node: no node, no reinforcement
    reactivated: int = 0  # matched an inactive node: half reactivation
    rejected: int = 0
    failed: int = 0  # kept pending for another attempt
    edges: int = 0  # directed rows written
    node_ids: list[int] = field(default_factory=list)

    def add(self, other: PromotionReport) -> None:
        for name in ("claimed", "promoted", "duplicates", "reactivated", "rejected", "failed", "edges"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.node_ids.extend(other.node_ids)


@dataclass(frozen=True)
class Candidate:
    id: int
    speaker: str
    active: bool
    w_abs: float
    cosine: float
    magnets: MagnetFields


def _lock_key(user_id: uuid.UUID) -> int:
    # A stable signed 64-bit key per person for pg_advisory_xact_lock.
    return int.from_bytes(uuid.uuid5(user_id, "memory.promotion").bytes[:8], "big", signed=True)


def vector_index_settings(ef_search: int) -> list[Any]:
    """Columns for a SELECT that set, for this transaction only, what HNSW needs with a per-user filter:
    iterative scans (or a filtered top-k can come back short) and the search breadth."""
    return [func.set_config("hnsw.iterative_scan", "relaxed_order", True),
            func.set_config("hnsw.ef_search", str(int(ef_search)), True)]


def index_only_plans() -> list[Any]:
    """Promotion reads through indexes only (HNSW, GIN, btree), never by scanning the table: sequential scans
    are priced out for this transaction, and each candidate query is planned for its actual values (a cached
    generic plan would treat a rare and a common entity alike)."""
    return [func.set_config("enable_seqscan", "off", True),
            func.set_config("plan_cache_mode", "force_custom_plan", True)]


async def use_vector_index(session: AsyncSession, ef_search: int) -> None:
    await session.execute(select(*vector_index_settings(ef_search)))


async def pending_entries(session: AsyncSession, user_id: uuid.UUID | None = None) -> int:
    stmt = select(func.count()).select_from(ShortTermEntry).where(ShortTermEntry.status == "pending")
    if user_id is not None:
        stmt = stmt.where(ShortTermEntry.user_id == user_id)
    return int(await session.scalar(stmt) or 0)


async def users_with_pending(session: AsyncSession, cutoff: datetime, limit: int = 100) -> list[uuid.UUID]:
    """Whose queues have mature work. Lists ids only; every query on memory content stays per person."""
    stmt = (select(ShortTermEntry.user_id)
            .where(ShortTermEntry.status == "pending", or_(ShortTermEntry.at.is_(None), ShortTermEntry.at <= cutoff))
            .group_by(ShortTermEntry.user_id).limit(limit))
    return list((await session.scalars(stmt)).all())


async def promote_pending(
    transactions: Transactions,
    settings: MemorySettings = MemorySettings(),
    *,
    user_id: uuid.UUID | None = None,
    batch: int | None = None,
    log: PipelineLog | None = None,
) -> PromotionReport:
    """One batch per person with mature entries (or for `user_id` only). Call repeatedly until `claimed` is 0."""
    report = PromotionReport()
    if user_id is not None:
        users = [user_id]
    else:
        async with transactions.read() as session:
            users = await users_with_pending(session, transactions.clock.now() - _maturity(settings))
    for uid in users:
        report.add(await _promote_user(transactions, settings, uid, batch or settings.promotion_batch, log))
    return report


def _maturity(settings: MemorySettings) -> timedelta:
    return timedelta(seconds=settings.promotion_maturity_s)


@contextlib.asynccontextmanager
async def _maybe_span(log: PipelineLog | None, name: str, user_id: uuid.UUID) -> AsyncIterator[Span | None]:
    if log is None:
        yield None
    else:
        async with log.span(name, user_id=user_id, turn_id=None) as span:
            yield span


@dataclass
class _Batch:
    """What a batch decided, written at its end in a few statements instead of several per entry."""

    report: PromotionReport = field(default_factory=PromotionReport)
    entries: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


async def _promote_user(transactions: Transactions, settings: MemorySettings, user_id: uuid.UUID, batch: int,
                        log: PipelineLog | None) -> PromotionReport:
    async with _maybe_span(log, "memory.promotion", user_id) as span, transactions.begin() as uow:
        session, now = uow.session, uow.now
        # One promoter per person at a time: a node promoted in a parallel transaction would be invisible
        # here and the pair would never get its edges.
        await session.execute(select(func.pg_advisory_xact_lock(_lock_key(user_id)), *index_only_plans(),
                                     *vector_index_settings(max(settings.promotion_ef_search,
                                                                settings.ann_candidates))))
        entries = list((await session.scalars(
            select(ShortTermEntry)
            .where(ShortTermEntry.user_id == user_id, ShortTermEntry.status == "pending",
                   or_(ShortTermEntry.at.is_(None), ShortTermEntry.at <= now - _maturity(settings)))
            .order_by(ShortTermEntry.at.asc().nulls_first(), ShortTermEntry.created_at, ShortTermEntry.id)
            .limit(batch)
            .with_for_update(skip_locked=True)
        )).all())
        if not entries:
            return PromotionReport()
        ids = [entry.id for entry in entries]
        try:
            async with session.begin_nested():
                done = await _run_batch(session, settings, entries, now)
        except Exception:
            # Something in the batch failed: redo it entry by entry so one bad entry cannot block the rest.
            logger.warning("memory promotion batch failed; retrying its %d entries one by one", len(ids))
            done = _Batch()
            for entry_id in ids:
                try:
                    async with session.begin_nested():
                        entry = await session.get(ShortTermEntry, entry_id, populate_existing=True)
                        assert entry is not None
                        single = await _run_batch(session, settings, [entry], now)
                except Exception as failure:
                    logger.exception("promotion of memory entry %s failed", entry_id)
                    await _record_failure(session, settings, entry_id, user_id, now, failure, done.report, span)
                else:
                    done.report.add(single.report)
                    done.notes.extend(single.notes)
        done.report.claimed = len(ids)
        for kind, content in done.notes:
            await _log(session, span, kind, content, user_id, now)
    return done.report


async def _run_batch(session: AsyncSession, settings: MemorySettings, entries: Sequence[ShortTermEntry],
                     now: datetime) -> _Batch:
    work = _Batch()
    for entry in entries:
        await _promote_entry(session, settings, entry, now, work)
    if work.edges:
        await insert_edges(session, work.edges)
    if work.entries:
        await session.execute(update(ShortTermEntry), work.entries)  # bulk update by primary key
    return work


# Array columns cannot be unnested from a 2-d array (rows differ in length), so they travel joined by a
# separator that never occurs in a layer name, a theme (word characters) or a uuid.
_SEP = "\x1f"
_INSERT_EDGES = text(f"""
    INSERT INTO memory_edges (user_id, a_id, b_id, w_raw, w_abs, reasons, shared_entity_ids, shared_themes,
                              timeline_days, cosine_initial, layers, created_at)
    SELECT e.user_id, e.a_id, e.b_id, e.w_raw, e.w_abs,
           string_to_array(e.reasons, '{_SEP}'),
           string_to_array(e.shared_entity_ids, '{_SEP}')::uuid[],
           string_to_array(e.shared_themes, '{_SEP}'),
           e.timeline_days, e.cosine_initial, e.layers, e.created_at
    FROM unnest(CAST(:user_id AS uuid[]), CAST(:a_id AS bigint[]), CAST(:b_id AS bigint[]),
                CAST(:w_raw AS float8[]), CAST(:w_abs AS float8[]), CAST(:reasons AS text[]),
                CAST(:shared_entity_ids AS text[]), CAST(:shared_themes AS text[]), CAST(:timeline_days AS int[]),
                CAST(:cosine_initial AS float8[]), CAST(:layers AS int[]), CAST(:created_at AS timestamptz[]))
         AS e(user_id, a_id, b_id, w_raw, w_abs, reasons, shared_entity_ids, shared_themes, timeline_days,
              cosine_initial, layers, created_at)
    ON CONFLICT (a_id, b_id) DO NOTHING
""")


async def insert_edges(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
    """All edge rows in one statement: thousands of rows per batch would otherwise cost a bind each."""
    def joined(values: Sequence[Any]) -> str:
        return _SEP.join(str(v) for v in values)

    columns: dict[str, list[Any]] = {name: [row[name] for row in rows] for name in (
        "user_id", "a_id", "b_id", "w_raw", "w_abs", "timeline_days", "cosine_initial", "layers", "created_at")}
    for name in ("reasons", "shared_entity_ids", "shared_themes"):
        columns[name] = [joined(row[name]) for row in rows]
    await session.execute(_INSERT_EDGES, columns)


async def _record_failure(session: AsyncSession, settings: MemorySettings, entry_id: uuid.UUID,
                          user_id: uuid.UUID, now: datetime, failure: Exception, report: PromotionReport,
                          span: Span | None) -> None:
    attempts = (await session.scalar(
        update(ShortTermEntry).where(ShortTermEntry.id == entry_id)
        .values(attempts=ShortTermEntry.attempts + 1, last_error=f"{type(failure).__name__}: {failure}"[:500])
        .returning(ShortTermEntry.attempts))) or 0
    if attempts >= settings.promotion_max_attempts:
        await session.execute(update(ShortTermEntry).where(ShortTermEntry.id == entry_id).values(status="rejected"))
        report.rejected += 1
    else:
        report.failed += 1
    await _log(session, span, "error", {"entry_id": str(entry_id), "type": type(failure).__name__,
                                        "message": str(failure)[:300], "attempts": attempts}, user_id, now)


async def _log(session: AsyncSession, span: Span | None, kind: str, content: Any, user_id: uuid.UUID,
               now: datetime) -> None:
    if span is not None:
        span.log(kind, "memory.promotion", content)
    elif kind == "error":
        # Without a buffered log, errors are still written, in the same transaction as the decision.
        await write_log_now(session, kind, "memory.promotion", content, at=now, user_id=user_id)


_INSERT_NODE = text("""
    INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, themes, entity_ids, timeline_start,
                              timeline_end, timeline_precision, emotion, sector, salience, w_raw, w_abs, w_decay,
                              frequency, active, captured_at, created_at, reinforced_at, decayed_at)
    VALUES (:user_id, :source_key, :speaker, :text, CAST(:embedding AS vector), CAST(:themes AS text[]),
            CAST(:entity_ids AS uuid[]), :timeline_start, :timeline_end, :timeline_precision, :emotion, :sector,
            :salience, :w_raw, :w_abs, :w_abs, 1, true, :captured_at, :now, :now, :now)
    ON CONFLICT (user_id, source_key) DO NOTHING
    RETURNING id
""")


def _settle(work: _Batch, entry_id: uuid.UUID, status: str, node_id: int | None, error: str | None = None) -> None:
    work.entries.append({"id": entry_id, "status": status, "node_id": node_id, "last_error": error})


async def _promote_entry(session: AsyncSession, settings: MemorySettings, entry: ShortTermEntry, now: datetime,
                         work: _Batch) -> None:
    report = work.report
    if entry.at is None or entry.embedding is None:
        reason = "missing or unreadable message time" if entry.at is None else "no embedding"
        _settle(work, entry.id, "rejected", None, reason)
        report.rejected += 1
        work.notes.append(("error", {"entry_id": str(entry.id), "reason": reason}))
        return
    vector = [float(x) for x in entry.embedding]
    magnets = MagnetFields(list(entry.entity_ids or []), list(entry.themes or []), entry.timeline_start,
                           entry.timeline_precision)
    candidates = await edge_candidates(session, settings, entry.user_id, vector, magnets)

    twin = max((c for c in candidates if c.speaker == entry.speaker), key=lambda c: c.cosine, default=None)
    if twin is not None and twin.cosine >= settings.duplicate_cosine:
        if twin.active:
            decision = "duplicate"
            report.duplicates += 1
        else:
            decision = "reactivated"
            report.reactivated += 1
            await session.execute(
                update(MemoryNode).where(MemoryNode.id == twin.id, MemoryNode.user_id == entry.user_id,
                                         MemoryNode.active.is_(False))
                .values(w_decay=half_reactivated(twin.w_abs, settings.min_weight), active=True, reinforced_at=now,
                        decayed_at=now))
        _settle(work, entry.id, "promoted", twin.id)
        work.notes.append(("switch", {"entry_id": str(entry.id), "decision": decision, "node_id": twin.id,
                                      "cosine": round(twin.cosine, 4)}))
        return

    source_key = entry.source_key or str(entry.id)
    w_raw = max(float(entry.salience), 0.0)
    w_abs = damp(w_raw, settings.cap, settings.damping_exp)
    node_id = await session.scalar(_INSERT_NODE, {
        "user_id": entry.user_id, "source_key": source_key, "speaker": entry.speaker, "text": entry.text,
        "embedding": vector_literal(vector), "themes": list(magnets.themes), "entity_ids": list(magnets.entity_ids),
        "timeline_start": entry.timeline_start, "timeline_end": entry.timeline_end,
        "timeline_precision": entry.timeline_precision, "emotion": entry.emotion, "sector": entry.sector,
        "salience": entry.salience, "w_raw": w_raw, "w_abs": w_abs, "captured_at": entry.at, "now": now,
    })
    if node_id is None:  # promoted before under the same key (e.g. a re-run import): leave the queue only
        existing = await session.scalar(select(MemoryNode.id).where(MemoryNode.user_id == entry.user_id,
                                                                    MemoryNode.source_key == source_key))
        _settle(work, entry.id, "promoted", existing)
        report.duplicates += 1
        return
    rows = _edge_rows(settings, entry.user_id, node_id, w_abs, magnets, candidates, now)
    work.edges.extend(rows)
    _settle(work, entry.id, "promoted", node_id)
    report.promoted += 1
    report.edges += len(rows)
    report.node_ids.append(node_id)
    work.notes.append(("db_write", {"table": "memory_nodes", "operation": "insert", "id": node_id,
                                    "entry_id": str(entry.id), "w_raw": w_raw, "w_abs": round(w_abs, 4),
                                    "candidates": len(candidates), "edges": len(rows)}))


_NEAREST = """(SELECT n.id FROM memory_nodes n WHERE n.user_id = :user_id
         ORDER BY n.embedding <=> CAST(:vector AS vector) LIMIT :ann)"""
_SHARING_ENTITY = """(SELECT n.id FROM memory_nodes n
         WHERE n.user_id = :user_id AND n.active AND n.entity_ids && CAST(:entity_ids AS uuid[])
         ORDER BY n.id DESC LIMIT :entities)"""
# The most recent nodes sharing a theme, from at most :theme_pool matches taken off the GIN index: ordering
# the GIN matches by id directly lets the planner walk the primary key backwards, which for a theme that is
# rare lately but common long ago reads most of the table.
_SHARING_THEME = """(SELECT pool.id FROM (
             SELECT n.id FROM memory_nodes n
             WHERE n.user_id = :user_id AND n.active AND n.themes && CAST(:themes AS text[])
             LIMIT :theme_pool) pool
         ORDER BY pool.id DESC LIMIT :themes_limit)"""
# Nearest anchors of the same precision on either side, each an ordered index scan that stops after :timeline
# rows (sorting a whole year-wide window by distance would not).
_NEAR_IN_TIME = """(SELECT n.id FROM memory_nodes n
         WHERE n.user_id = :user_id AND n.timeline_precision = CAST(:precision AS varchar) AND n.active
           AND n.timeline_start <= CAST(:start AS timestamptz) AND n.timeline_start >= CAST(:low AS timestamptz)
         ORDER BY n.timeline_start DESC LIMIT :timeline)
        UNION
        (SELECT n.id FROM memory_nodes n
         WHERE n.user_id = :user_id AND n.timeline_precision = CAST(:precision AS varchar) AND n.active
           AND n.timeline_start > CAST(:start AS timestamptz) AND n.timeline_start <= CAST(:high AS timestamptz)
         ORDER BY n.timeline_start ASC LIMIT :timeline)"""
_CANDIDATE_SQL: dict[tuple[bool, bool, bool], Any] = {}


def _candidate_query(entities: bool, themes: bool, timeline: bool) -> Any:
    """The candidate query with only the parts this entry has magnets for (an empty part still costs a plan
    and an index probe)."""
    key = (entities, themes, timeline)
    if key not in _CANDIDATE_SQL:
        parts = [_NEAREST] + [part for part, wanted in ((_SHARING_ENTITY, entities), (_SHARING_THEME, themes),
                                                         (_NEAR_IN_TIME, timeline)) if wanted]
        union_sql = "\n        UNION\n        ".join(parts)
        _CANDIDATE_SQL[key] = text(f"""
    WITH ids AS (
        {union_sql}
    )
    SELECT n.id, n.speaker, n.active, n.w_abs, n.entity_ids, n.themes, n.timeline_start, n.timeline_precision,
           1 - (n.embedding <=> CAST(:vector AS vector)) AS cosine
    FROM memory_nodes n JOIN ids ON ids.id = n.id
    WHERE n.user_id = :user_id
""")
    return _CANDIDATE_SQL[key]


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{float(x):.8g}" for x in vector) + "]"


async def edge_candidates(session: AsyncSession, settings: MemorySettings, user_id: uuid.UUID,
                          vector: Sequence[float], magnets: MagnetFields) -> list[Candidate]:
    """Earlier nodes worth comparing, from four indexes in one round trip: nearest by embedding (HNSW; active or
    not, so a duplicate of an inactive node is found), sharing an entity (GIN), sharing a theme (GIN), and
    anchored near in time with the same precision (btree on user_id, timeline_start). Never a scan."""
    params: dict[str, Any] = {"user_id": user_id, "vector": vector_literal(vector), "ann": settings.ann_candidates}
    if magnets.entity_ids:
        params.update(entity_ids=list(magnets.entity_ids), entities=settings.entity_candidates)
    if magnets.themes:
        params.update(themes=list(magnets.themes), themes_limit=settings.theme_candidates,
                      theme_pool=settings.theme_candidates * 4)
    timeline = magnets.timeline_start is not None and magnets.timeline_precision is not None
    if timeline:
        assert magnets.timeline_start is not None and magnets.timeline_precision is not None
        half = timedelta(days=timeline_window_days(magnets.timeline_precision, settings.timeline_tolerance))
        params.update(precision=magnets.timeline_precision, low=magnets.timeline_start - half,
                      high=magnets.timeline_start + half, start=magnets.timeline_start,
                      timeline=settings.timeline_candidates)
    query = _candidate_query(bool(magnets.entity_ids), bool(magnets.themes), timeline)
    rows = (await session.execute(query, params)).all()
    return [Candidate(row.id, row.speaker, row.active, row.w_abs, float(row.cosine),
                      MagnetFields(row.entity_ids or [], row.themes or [], row.timeline_start,
                                   row.timeline_precision)) for row in rows]


def _edge_rows(settings: MemorySettings, user_id: uuid.UUID, node_id: int, w_abs: float, magnets: MagnetFields,
               candidates: Sequence[Candidate], now: datetime) -> list[dict[str, Any]]:
    """Both directions for every earlier active node with a firing layer, the strongest pairs first, at most
    `max_edge_pairs` of them (recall follows only the few strongest edges of a node anyway)."""
    pairs: list[tuple[float, list[dict[str, Any]]]] = []
    for other in candidates:
        if not other.active or other.id == node_id:
            continue
        comparison = compare_layers(magnets, other.magnets, other.cosine, settings)
        if comparison is None:
            continue
        weights = edge_weights(w_abs, other.w_abs, comparison.hits, settings)
        if weights is None:
            continue
        frozen = {
            "user_id": user_id, "reasons": comparison.reasons, "shared_entity_ids": comparison.shared_entity_ids,
            "shared_themes": comparison.shared_themes, "timeline_days": comparison.timeline_days,
            "cosine_initial": round(comparison.cosine, 6), "layers": len(comparison.hits), "created_at": now,
        }
        pairs.append((max(weights.a_to_b, weights.b_to_a), [
            {**frozen, "a_id": node_id, "b_id": other.id, "w_raw": weights.a_to_b_raw, "w_abs": weights.a_to_b},
            {**frozen, "a_id": other.id, "b_id": node_id, "w_raw": weights.b_to_a_raw, "w_abs": weights.b_to_a},
        ]))
    pairs.sort(key=lambda pair: -pair[0])
    return [row for _, rows in pairs[:settings.max_edge_pairs] for row in rows]


async def recompute_edges(session: AsyncSession, user_id: uuid.UUID, node_ids: Sequence[int],
                          settings: MemorySettings = MemorySettings()) -> int:
    """Trigger 2 of the concept: after nodes' w_abs changed (reinforcement), recompute the weights of every edge
    touching them from the frozen layer values and the current node strengths. Returns edges updated."""
    if not node_ids:
        return 0
    edges = (await session.execute(
        select(MemoryEdge.id, MemoryEdge.a_id, MemoryEdge.b_id, MemoryEdge.cosine_initial)
        .where(MemoryEdge.user_id == user_id, or_(MemoryEdge.a_id.in_(node_ids), MemoryEdge.b_id.in_(node_ids)))
    )).all()
    if not edges:
        return 0
    touched = {e.a_id for e in edges} | {e.b_id for e in edges}
    nodes = {n.id: n for n in (await session.execute(
        select(MemoryNode.id, MemoryNode.w_abs, MemoryNode.entity_ids, MemoryNode.themes, MemoryNode.timeline_start,
               MemoryNode.timeline_precision)
        .where(MemoryNode.user_id == user_id, MemoryNode.id.in_(touched))
    )).all()}
    updates = []
    for edge in edges:
        a, b = nodes.get(edge.a_id), nodes.get(edge.b_id)
        if a is None or b is None:
            continue
        comparison = compare_layers(
            MagnetFields(a.entity_ids or [], a.themes or [], a.timeline_start, a.timeline_precision),
            MagnetFields(b.entity_ids or [], b.themes or [], b.timeline_start, b.timeline_precision),
            edge.cosine_initial if edge.cosine_initial is not None else 0.0, settings)
        weights = edge_weights(a.w_abs, b.w_abs, comparison.hits, settings) if comparison else None
        if weights is not None:
            updates.append({"id": edge.id, "w_raw": weights.a_to_b_raw, "w_abs": weights.a_to_b})
    if updates:
        await session.execute(update(MemoryEdge), updates)  # bulk update by primary key
    return len(updates)
