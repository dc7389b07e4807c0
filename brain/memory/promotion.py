"""Promotion: mature short-term entries become long-term nodes 1:1, with edges to earlier nodes over the
four layers. A reliable queue: entries are claimed with FOR UPDATE SKIP LOCKED and leave the queue only in
the transaction that writes their node; one promoter per person at a time (advisory lock), so nodes
promoted concurrently still see each other. Edge candidates come from indexes only, never a full scan."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import re
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import func, or_, select, text, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, defer

from brain.memory.candidates import (
    BatchKeys,
    BatchNode,
    Candidate,
    Found,
    Probe,
    decoded,
    gather_candidates,
    search_candidates,
    unit_vector,
    with_batch_nodes,
)
from brain.memory.capture import fact_marks
from brain.memory.models import ASSISTANT, MemoryEdge, MemoryNode, ShortTermEntry
from brain.memory.settings import MemorySettings
from brain.memory.weights import (
    EntityKey,
    MagnetFields,
    compare_layers,
    damp,
    edge_weights,
    half_reactivated,
    pair_strengths,
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


def _lock_key(user_id: uuid.UUID) -> int:
    # A stable signed 64-bit key per person for pg_advisory_xact_lock.
    return int.from_bytes(uuid.uuid5(user_id, "memory.promotion").bytes[:8], "big", signed=True)


async def hold_promotion(session: AsyncSession, user_id: uuid.UUID) -> None:
    """Waits for a promotion of the person running now and keeps the next one out until this transaction ends.
    Whatever deletes a person's nodes takes it first: edges and theme rows have no foreign keys, so a promotion
    that had read a node as a candidate before it was deleted would otherwise still write edges to it."""
    await session.execute(select(func.pg_advisory_xact_lock(_lock_key(user_id))))


# pgvector's own default of hnsw.max_scan_tuples: how far an iterative scan goes at most.
PGVECTOR_MAX_SCAN_TUPLES = 20000


def vector_index_settings(ef_search: int) -> list[Any]:
    """Columns for a SELECT that set, for this transaction only, what HNSW needs with a per-user filter:
    iterative scans (or a filtered top-k can come back short), the search breadth, and how far an iterative scan
    may go (pgvector's default; set here because a pooled connection may hold recall's smaller bound for its
    session, see `brain.memory.recall._use_index_scan`)."""
    return [func.set_config("hnsw.iterative_scan", "relaxed_order", True),
            func.set_config("hnsw.ef_search", str(int(ef_search)), True),
            func.set_config("hnsw.max_scan_tuples", str(PGVECTOR_MAX_SCAN_TUPLES), True)]


def index_only_plans() -> list[Any]:
    """Promotion reads through indexes only (HNSW, GIN, btree), never by scanning the table: sequential scans
    are priced out for this transaction, and each candidate query is planned for its actual values (a cached
    generic plan would treat a rare and a common entity alike)."""
    return [func.set_config("enable_seqscan", "off", True),
            func.set_config("plan_cache_mode", "force_custom_plan", True)]


def unflushed_commit() -> list[Any]:
    """The promotion transaction commits without waiting for its WAL to reach the disk. Safe because the queue
    entries leave the queue in the same transaction that writes their nodes: a commit lost in a crash loses both,
    the entries are pending again and the next run promotes them anew. Nothing outside the database has seen
    the nodes by then (promotion sends nothing), and the database stays consistent either way."""
    return [func.set_config("synchronous_commit", "off", True)]


async def use_vector_index(session: AsyncSession, ef_search: int) -> None:
    await session.execute(select(*vector_index_settings(ef_search)))


async def pending_entries(session: AsyncSession, user_id: uuid.UUID | None = None) -> int:
    stmt = select(func.count()).select_from(ShortTermEntry).where(ShortTermEntry.status == "pending")
    if user_id is not None:
        stmt = stmt.where(ShortTermEntry.user_id == user_id)
    return int(await session.scalar(stmt) or 0)


def _of_space(settings: MemorySettings) -> Any:
    """Entries the memory can promote now: embedded by its embedder (an entry captured before a change of embedder
    waits until brain.memory.reembed has re-embedded it), or without a vector (which promotion rejects)."""
    return or_(ShortTermEntry.embedder == settings.space.key, ShortTermEntry.embedding.is_(None))


async def users_with_pending(session: AsyncSession, cutoff: datetime, limit: int = 100,
                             settings: MemorySettings = MemorySettings()) -> list[uuid.UUID]:
    """Whose queues have mature work. Lists ids only; every query on memory content stays per person."""
    stmt = (select(ShortTermEntry.user_id)
            .where(ShortTermEntry.status == "pending", or_(ShortTermEntry.at.is_(None), ShortTermEntry.at <= cutoff),
                   _of_space(settings))
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
            users = await users_with_pending(session, transactions.clock.now() - _maturity(settings),
                                             settings=settings)
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
    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


async def _promote_user(transactions: Transactions, settings: MemorySettings, user_id: uuid.UUID, batch: int,
                        log: PipelineLog | None) -> PromotionReport:
    async with _maybe_span(log, "memory.promotion", user_id) as span, transactions.begin() as uow:
        session, now = uow.session, uow.now
        # One promoter per person at a time: a node promoted in a parallel transaction would be invisible
        # here and the pair would never get its edges.
        await session.execute(select(func.pg_advisory_xact_lock(_lock_key(user_id)), *index_only_plans(),
                                     *vector_index_settings(max(settings.promotion_ef_search,
                                                                settings.ann_candidates)),
                                     *unflushed_commit()))
        entries = list((await session.scalars(
            select(ShortTermEntry)
            .where(ShortTermEntry.user_id == user_id, ShortTermEntry.status == "pending",
                   or_(ShortTermEntry.at.is_(None), ShortTermEntry.at <= now - _maturity(settings)),
                   _of_space(settings))
            .order_by(ShortTermEntry.at.asc().nulls_first(), ShortTermEntry.created_at, ShortTermEntry.id)
            .limit(batch)
            .options(defer(ShortTermEntry.embedding))  # read apart, in binary (see `_units_of`)
            .with_for_update(skip_locked=True)
        )).all())
        if not entries:
            return PromotionReport()
        ids = [entry.id for entry in entries]
        try:
            async with session.begin_nested(), _searcher(transactions, settings, len(entries)) as searcher:
                done = await _run_batch(session, settings, entries, now, searcher)
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


@contextlib.asynccontextmanager
async def _searcher(transactions: Transactions, settings: MemorySettings,
                    entries: int) -> AsyncIterator[AsyncSession | None]:
    """A second, read-only connection that searches the candidates of the next chunks while the promotion's own
    transaction writes the nodes already decided: two server processes at work instead of one taking turns. Only
    for a batch of more than one chunk; a small batch is not worth the second connection."""
    if entries <= max(settings.promotion_chunk, 1):
        yield None
        return
    async with transactions.read() as session:
        await session.execute(select(*index_only_plans(), *vector_index_settings(
            max(settings.promotion_ef_search, settings.ann_candidates))))
        yield session


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a batch. A batch allocates a few hundred thousand small objects
    (decoded candidate rows, candidates, edge rows) that all live until it ends and are then freed by reference
    counting; while they pile up, the collector would run again and again and each full run traverses every
    object of the process (a process holding many embeddings has millions of references to follow), for garbage
    that is not there. It runs as usual once the batch is done."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def _run_batch(session: AsyncSession, settings: MemorySettings, entries: Sequence[ShortTermEntry],
                     now: datetime, searcher: AsyncSession | None = None) -> _Batch:
    with _collector_paused():
        return await _decide_and_write(session, settings, entries, now, searcher)


async def _decide_and_write(session: AsyncSession, settings: MemorySettings, entries: Sequence[ShortTermEntry],
                            now: datetime, searcher: AsyncSession | None = None) -> _Batch:
    """Decides every entry of the batch in order, as if promoted one by one, with the candidates of a chunk of
    entries gathered in one statement; then writes nodes, edges and the entries' states in one statement each.

    With a `searcher` (a second connection), searching, deciding and writing run side by side
    (`_decide_pipelined`); without one, the next chunk is searched while one is decided (`_decide_serially`)."""
    work = _Batch()
    walk = _Walk(settings, work, now)
    walk.units_of = await _units_of(session, entries[0].user_id, [entry.id for entry in entries])
    usable = []
    for entry in entries:
        if entry.at is None or entry.id not in walk.units_of:
            reason = "missing or unreadable message time" if entry.at is None else "no embedding"
            _settle(work, entry.id, "rejected", None, reason)
            work.report.rejected += 1
            work.notes.append(("error", {"entry_id": str(entry.id), "reason": reason}))
        else:
            usable.append(entry)
    if usable:
        user_id = usable[0].user_id
        walk.taken = await _nodes_by_source_key(session, user_id, [_source_key(entry) for entry in usable])
        walk.reserved = await _reserve_ids(session, len(usable))
        done = 0
        if searcher is not None:
            done = await _decide_pipelined(session, searcher, settings, walk, usable)
            # A reactivated node is active from now on: the entries after it must find it through every index, as
            # they would if promoted one by one, so the rest is searched in this transaction, which sees the
            # reactivation and the nodes written already (`decide` takes those from memory only).
            await walk.reactivate(session, user_id)
            walk.visible = set(work.report.node_ids)
        if done < len(usable):
            await _decide_serially(session, settings, walk, usable, done)
    if work.entries:
        await session.execute(_SETTLE_ENTRIES, {
            "user_id": entries[0].user_id, **{name: [settled[name] for settled in work.entries]
                                              for name in ("id", "status", "node_id", "last_error")}})
    return work


def _chunk_bounds(total: int, chunk: int) -> list[tuple[int, int]]:
    """How a batch's entries are split into searches: chunks of `chunk`, but the first and the last a quarter of
    that, so deciding starts early and little is left to write once the last entry is decided."""
    small = max(chunk // 4, 1)
    bounds, position, size = [], 0, small
    while position < total:
        bounds.append((position, min(position + size, total)))
        position, size = position + size, chunk
    start, end = bounds[-1]
    if len(bounds) > 1 and end - start > small:
        bounds[-1:] = [(start, end - small), (end - small, end)]
    return bounds


# How many chunks the searcher may search ahead of the decisions. Each worker has its own process and there are
# three of them (the searcher's server process, the writer's, this interpreter): a searcher that runs far ahead only
# takes processor time from the writer, which is the slowest, and its results wait anyway.
_AHEAD = 2


async def _decide_pipelined(session: AsyncSession, searcher: AsyncSession, settings: MemorySettings, walk: _Walk,
                            usable: Sequence[ShortTermEntry]) -> int:
    """Three workers that do not wait for each other: the searcher searches the chunks' candidates one after the other,
    at most `_AHEAD` chunks ahead of the decisions, the promotion's own connection writes whatever has been decided
    whenever it is free, and the entries are decided in order (in a worker thread) as their candidates come. The
    searcher sees only what was committed before, never this transaction's nodes, which is what the decisions expect
    (the batch's own nodes come in from memory, `with_batch_nodes`). Returns how many entries were decided and
    written: all, or up to and including the first that reactivates a node (the rest must be searched again, see the
    caller). Every worker has finished when this returns or raises."""
    user_id = usable[0].user_id
    bounds = _chunk_bounds(len(usable), max(settings.promotion_chunk, 1))
    loop = asyncio.get_running_loop()
    found: list[asyncio.Future[Found]] = [loop.create_future() for _ in bounds]
    decided_parts: asyncio.Queue[_Decided | None] = asyncio.Queue()
    stop = False

    async def search(connection: AsyncSession, k: int) -> bool:
        """Searches chunk k's candidates into `found[k]`; False if it failed or the decisions have stopped."""
        if stop:
            return False
        start, end = bounds[k]
        try:
            found[k].set_result(await _candidates_of(connection, settings, usable[start:end]))
        except Exception as failure:  # raised where the decisions wait for this chunk
            found[k].set_exception(failure)
            return False
        return True

    taken = asyncio.Event()  # set whenever the decisions take a chunk's candidates
    chunks_taken = 0

    async def search_ahead() -> None:
        for k in range(1, len(bounds)):
            while k - chunks_taken > _AHEAD and not stop:
                taken.clear()
                await taken.wait()
            if not await search(searcher, k):
                return

    async def write_behind() -> None:
        # Nothing is decided before the first chunk's candidates are in: this connection searches them meanwhile,
        # beside the searcher's first.
        if not await search(session, 0):
            return
        while True:
            part = await decided_parts.get()
            # What was decided while the last write ran goes in one write (fewer statements, the same order).
            parts = [part]
            while part is not None and not decided_parts.empty():
                part = decided_parts.get_nowait()
                parts.append(part)
            written = [p for p in parts if p is not None]
            if written:
                await walk.write(session, user_id, _Decided.joined(written))
            if part is None:
                return

    workers = [asyncio.create_task(search_ahead()), asyncio.create_task(write_behind())]
    done = 0
    try:
        for (start, end), result in zip(bounds, found, strict=True):
            candidates = await result
            chunks_taken += 1
            taken.set()
            if workers[1].done():  # the writer stops early only by failing
                break
            done = start + await asyncio.to_thread(walk.decide_in_order, usable[start:end], candidates)
            decided_parts.put_nowait(walk.take_decided())
            if walk.reactivations:
                break
    finally:
        stop = True
        taken.set()
        decided_parts.put_nowait(None)
        outcomes = await asyncio.gather(*workers, return_exceptions=True)
        for result in found:  # a search that failed after the decisions stopped waiting
            if result.done() and not result.cancelled():
                result.exception()
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return done


async def _decide_serially(session: AsyncSession, settings: MemorySettings, walk: _Walk,
                           usable: Sequence[ShortTermEntry], done: int) -> None:
    """Decides `usable[done:]` with the candidates searched in the promotion's own transaction (a small batch, or
    the rest of one after a reactivation), the next chunk searched while one is decided; writes at the end, so the
    searches never see a node of this batch that `decide` has not been told about."""
    user_id = usable[0].user_id
    chunk = max(settings.promotion_chunk, 1)
    found = await _candidates_of(session, settings, usable[done:done + chunk])
    while done < len(usable):
        current = usable[done:done + found.probes]
        ahead = usable[done + len(current):done + len(current) + chunk]
        # Both always finish before anything else touches the session, a failure included.
        outcomes = await asyncio.gather(asyncio.to_thread(walk.decide_in_order, current, found),
                                        _candidates_of(session, settings, ahead), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        decided, found_ahead = outcomes
        assert isinstance(decided, int) and isinstance(found_ahead, Found)
        done += decided
        if walk.reactivations:
            await walk.reactivate(session, user_id)
            found = await _candidates_of(session, settings, usable[done:done + chunk])
        else:
            found = found_ahead
    await walk.write(session, user_id, walk.take_decided())


# The entries' states in one statement (an UPDATE per entry cost a round trip's worth of work on both ends each).
_SETTLE_ENTRIES = text("""
    UPDATE memory_short_term st SET status = s.status, node_id = s.node_id, last_error = s.last_error
    FROM unnest(CAST(:id AS uuid[]), CAST(:status AS text[]), CAST(:node_id AS bigint[]), CAST(:last_error AS text[]))
         AS s(id, status, node_id, last_error)
    WHERE st.id = s.id AND st.user_id = :user_id""")


async def _candidates_of(session: AsyncSession, settings: MemorySettings,
                         entries: Sequence[ShortTermEntry]) -> Found:
    if not entries:
        return Found(0, None, None)
    probes = [Probe(None, _magnets(entry), entry.id) for entry in entries]
    return await search_candidates(session, settings, entries[0].user_id, probes)


def _source_key(entry: ShortTermEntry) -> str:
    return entry.source_key or str(entry.id)


_RESERVE = text("SELECT nextval(pg_get_serial_sequence('memory_nodes', 'id')) AS id FROM generate_series(1, :n)")


async def _reserve_ids(session: AsyncSession, count: int) -> list[int]:
    """Node ids for the nodes a batch may make, taken from the table's sequence up front (ascending, as the nodes are
    made): a node's edges can then be formatted for COPY as soon as it is decided, off the writer's path. Ids of
    entries that make no node are left unused, as a rolled-back insert would leave them."""
    return sorted((await session.scalars(_RESERVE, {"n": count})).all())


# pgvector's binary form of a vector: its length (int16), two unused bytes, then the components as big-endian float4.
_UNITS = text("SELECT id, vector_send(embedding) AS v FROM memory_short_term "
              "WHERE user_id = :user_id AND id = ANY(CAST(:ids AS uuid[])) AND embedding IS NOT NULL")


async def _units_of(session: AsyncSession, user_id: uuid.UUID,
                    ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, np.ndarray]:
    """The entries' embeddings scaled to length 1, by entry id; an entry without one is left out. Read in pgvector's
    binary form: parsing 200 vectors from their text form took longer than deciding them."""
    rows = await session.execute(_UNITS, {"user_id": user_id, "ids": list(ids)})
    return {row.id: unit_vector(np.frombuffer(row.v, dtype=">f4", offset=4)) for row in rows}


def says_the_same(marks: tuple[str, ...], magnets: MagnetFields, candidate: Candidate) -> bool:
    """Whether an entry with these fact marks and magnets would only repeat the candidate: the same time anchor, and
    the same fact marks (`capture.fact_marks`), where the candidate has them (a node older than migration 0026 has
    none, and its embedding alone decides, as it did)."""
    if (candidate.magnets.timeline_start, candidate.magnets.timeline_precision) \
            != (magnets.timeline_start, magnets.timeline_precision):
        return False
    return candidate.marks is None or candidate.marks == marks


def _magnets(entry: ShortTermEntry) -> MagnetFields:
    # Entity ids as text, the form the candidate query returns them in.
    return MagnetFields([str(e) for e in entry.entity_ids or []], list(entry.themes or []), entry.timeline_start,
                        entry.timeline_precision)


async def _nodes_by_source_key(session: AsyncSession, user_id: uuid.UUID, keys: Sequence[str]) -> dict[str, int]:
    rows = await session.execute(select(MemoryNode.source_key, MemoryNode.id)
                                 .where(MemoryNode.user_id == user_id, MemoryNode.source_key.in_(keys)))
    return {row.source_key: row.id for row in rows}


class _Walk:
    """The decisions of one batch, entry by entry: duplicate, reactivation or a new node with its edges. New
    nodes take their ids from `reserved`, in order, and their edges are formatted for COPY when they are decided."""

    def __init__(self, settings: MemorySettings, work: _Batch, now: datetime) -> None:
        self.settings = settings
        self.work = work
        self.now = now
        self.taken: dict[str, int] = {}  # source key -> node id, of nodes written before this batch
        self.units_of: dict[uuid.UUID, np.ndarray] = {}  # the entries' unit vectors, by entry id
        self.made: list[BatchNode] = []
        self.made_keys: dict[str, int] = {}
        self.rows: list[dict[str, Any]] = []  # columns of the new nodes, in the order of `made`
        self.reserved: list[int] = []  # the ids of the nodes to be made, in order (`_reserve_ids`)
        self.edges: list[str] = []  # the edges of each new node, in COPY text, in the order of `made`
        self.units = np.empty((0, 0))  # the unit vectors of `made`, one row each; grows by doubling
        self.keys = BatchKeys()  # the entities and themes of `made`
        self.reactivations: list[Candidate] = []  # inactive twins to half-reactivate, not written yet
        self.taken_out = 0  # how many of `made` (and `rows`, `edges`) were taken out for writing
        # Ids of the batch's written nodes that the candidate search can see (it moved into this transaction after
        # they were written): `decide` takes them from memory only.
        self.visible: set[int] = set()

    def decide_in_order(self, entries: Sequence[ShortTermEntry], found: Found) -> int:
        """Decides entries in order and returns how many it decided: all of them, or up to and including the
        first that reactivates a node (the entries after it must find that node active through the indexes).
        Pure computation on objects already loaded (the candidates are decoded here too), so it may run in a
        worker thread."""
        for count, (entry, candidates) in enumerate(zip(entries, decoded(found), strict=True), start=1):
            if self.decide(entry, candidates) == "reactivated":
                return count
        return len(entries)

    async def reactivate(self, session: AsyncSession, user_id: uuid.UUID) -> bool:
        """Writes the half reactivations decided so far; True if there were any."""
        twins, self.reactivations = self.reactivations, []
        for twin in twins:
            await session.execute(
                update(MemoryNode).where(MemoryNode.id == twin.id, MemoryNode.user_id == user_id,
                                         MemoryNode.active.is_(False))
                .values(w_decay=half_reactivated(twin.w_abs, self.settings.min_weight), active=True,
                        reinforced_at=self.now, decayed_at=self.now))
        return bool(twins)

    def decide(self, entry: ShortTermEntry, found: Sequence[Candidate]) -> str:
        settings, work, report = self.settings, self.work, self.work.report
        magnets = _magnets(entry)
        unit = self.units_of[entry.id]
        if self.visible:
            found = [candidate for candidate in found if candidate.id not in self.visible]
        candidates = with_batch_nodes(settings, magnets, unit, found, self.made, self.units[:len(self.made)],
                                      self.keys)
        # A duplicate reads alike (cosine). What people say must also say the same: the same numbers, negation,
        # question and time; one that reads alike but corrects or contradicts an earlier memory is news, and becomes
        # a node of its own. The companion's replies restate and list (their numbers are mostly a list's), so one
        # that reads like an earlier reply repeats it, as before.
        marks = fact_marks(entry.text)
        first_hand = entry.speaker != ASSISTANT
        twin = max((c for c in candidates if c.speaker == entry.speaker and c.cosine >= settings.duplicate_cosine
                    and (not first_hand or says_the_same(marks, magnets, c))), key=lambda c: c.cosine, default=None)
        if twin is not None:
            if twin.active:
                decision = "duplicate"
                report.duplicates += 1
            else:
                decision = "reactivated"
                report.reactivated += 1
                self.reactivations.append(twin)
            _settle(work, entry.id, "promoted", twin.id)
            work.notes.append(("switch", {"entry_id": str(entry.id), "decision": decision, "node_id": twin.id,
                                          "cosine": round(twin.cosine, 4)}))
            return decision

        source_key = _source_key(entry)
        earlier = self.taken.get(source_key, self.made_keys.get(source_key))
        if earlier is not None:  # promoted before under the same key (e.g. a re-run import): leave the queue only
            _settle(work, entry.id, "promoted", earlier)
            report.duplicates += 1
            return "duplicate"
        w_raw = max(float(entry.salience), 0.0)
        w_abs = damp(w_raw, settings.cap, settings.damping_exp)
        node_id = self.reserved[len(self.made)]
        edges = _edge_rows(settings, entry.user_id, node_id, w_abs, magnets, candidates, self.now)
        if len(self.made) == len(self.units):
            grown = np.empty((max(2 * len(self.units), 16), len(unit)))
            if self.made:
                grown[:len(self.made)] = self.units
            self.units = grown
        self.units[len(self.made)] = unit
        self.keys.add(len(self.made), magnets)
        self.made.append(BatchNode(node_id, entry.speaker, w_abs, magnets, unit, marks))
        self.made_keys[source_key] = node_id
        self.rows.append({
            "id": node_id, "entry_id": entry.id, "source_key": source_key, "speaker": entry.speaker, "text": entry.text,
            "themes": _SEP.join(magnets.themes),
            "entity_ids": _SEP.join(str(e) for e in magnets.entity_ids), "timeline_start": entry.timeline_start,
            "timeline_end": entry.timeline_end, "timeline_precision": entry.timeline_precision,
            "emotion": entry.emotion, "sector": entry.sector, "salience": entry.salience, "w_raw": w_raw,
            "w_abs": w_abs, "captured_at": entry.at, "fact_marks": _SEP.join(marks),
        })
        self.edges.append(copy_lines(edges))
        _settle(work, entry.id, "promoted", node_id)
        report.promoted += 1
        report.edges += len(edges)
        work.notes.append(("db_write", {"table": "memory_nodes", "operation": "insert", "id": node_id,
                                        "entry_id": str(entry.id), "w_raw": w_raw, "w_abs": round(w_abs, 4),
                                        "candidates": len(candidates), "edges": len(edges)}))
        return "promoted"

    def take_decided(self) -> _Decided:
        """The nodes decided since the last call, with their edges, to be written (edges only ever point to
        nodes decided before or with their own node, so they can be written in this order)."""
        part = _Decided(self.made[self.taken_out:], self.rows[self.taken_out:], self.edges[self.taken_out:])
        self.taken_out = len(self.made)
        return part

    async def write(self, session: AsyncSession, user_id: uuid.UUID, part: _Decided) -> None:
        """Inserts the nodes of `part`, then their edges."""
        if not part.rows:
            return
        columns = {name: [row[name] for row in part.rows] for name in part.rows[0]}
        inserted = (await session.scalars(_INSERT_NODES, {**columns, "user_id": user_id, "now": self.now})).all()
        if len(inserted) != len(part.rows):
            # Another writer took a source key since the batch looked: the batch is redone entry by entry.
            raise RuntimeError("a source key of the batch was promoted concurrently")
        edges = "".join(part.edges)
        if edges:
            await insert_edges(session, edges)
        self.work.report.node_ids.extend(node.id for node in part.made)


class _Decided(NamedTuple):
    made: list[BatchNode]
    rows: list[dict[str, Any]]
    edges: list[str]  # per node, its edges in COPY text

    @staticmethod
    def joined(parts: Sequence[_Decided]) -> _Decided:
        """Parts decided one after the other, as one (edges only point to nodes decided before or with theirs)."""
        if len(parts) == 1:
            return parts[0]
        return _Decided([n for p in parts for n in p.made], [r for p in parts for r in p.rows],
                        [e for p in parts for e in p.edges])


class EdgeRow(NamedTuple):
    """One directed row of memory_edges, in the table's column order for COPY."""

    user_id: uuid.UUID
    a_id: int
    b_id: int
    w_raw: float
    w_abs: float
    reasons: list[str]
    shared_entity_ids: list[EntityKey]
    shared_themes: list[str]
    timeline_days: int | None
    cosine_initial: float
    layers: int
    created_at: datetime


_COPY_EDGES = f"COPY memory_edges ({', '.join(EdgeRow._fields)}) FROM STDIN"
# An array element in PostgreSQL's literal syntax needs quotes if it holds any of these (or is empty).
_QUOTE_ELEMENT = re.compile(r'[\s{}",\\]')


def _array_element(value: Any) -> str:
    text_value = str(value)
    if text_value and not _QUOTE_ELEMENT.search(text_value) and text_value.upper() != "NULL":
        return text_value
    return '"' + text_value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def copy_text(value: Any) -> str:
    """A value in COPY's text format (tab-separated, \\N for NULL, backslash escapes)."""
    if value is None:
        return "\\N"
    if isinstance(value, list):
        value = "{" + ",".join(_array_element(item) for item in value) + "}"
    elif isinstance(value, datetime):
        value = value.isoformat()
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


# Array elements that need quotes in an array literal, found in the elements joined by commas once every comma is
# known to be a separator: a quote-worthy character, the word NULL, or an empty element (",," or one at either end).
_PLAIN_JOINED = re.compile(r'[\s{}"\\]|null|^,|,$|,,', re.IGNORECASE)


def _copy_array(items: Sequence[Any]) -> str:
    if not items:
        return "{}"
    elements = [str(item) for item in items]
    joined = ",".join(elements)
    if not joined or joined.count(",") != len(elements) - 1 or _PLAIN_JOINED.search(joined):
        return copy_text(elements)  # quotes or escapes needed: the general path
    return "{" + joined + "}"


@functools.lru_cache(maxsize=64)
def _copy_scalar(value: Any) -> str:
    # The person and the batch's time repeat on every row of a batch.
    return copy_text(value)


_NULL = "\\N"


def _copy_line(row: EdgeRow) -> str:
    """One edge row as a line of COPY text, the same as `copy_text` per column, with the common cases (numbers,
    arrays of plain words) written directly."""
    return _copy_head(row, _copy_scalar(row.user_id)) + _copy_tail(row)


def _copy_head(row: EdgeRow, person: str) -> str:
    """The columns that differ between the two directions of a pair: the ends and the weights (after the person,
    formatted by the caller)."""
    return f"{person}\t{int(row.a_id)}\t{int(row.b_id)}\t{float(row.w_raw)!r}\t{float(row.w_abs)!r}\t"


def _copy_tail(row: EdgeRow) -> str:
    """The columns both directions of a pair share: why the pair is linked, and when."""
    days = _NULL if row.timeline_days is None else str(int(row.timeline_days))
    return (f"{_copy_array(row.reasons)}\t{_copy_array(row.shared_entity_ids)}\t"
            f"{_copy_array(row.shared_themes)}\t{days}\t{float(row.cosine_initial)!r}\t{int(row.layers)}\t"
            f"{_copy_scalar(row.created_at)}\n")


def _same_tail(row: EdgeRow, other: EdgeRow) -> bool:
    return (row.reasons is other.reasons and row.shared_entity_ids is other.shared_entity_ids
            and row.shared_themes is other.shared_themes and row.timeline_days == other.timeline_days
            and row.cosine_initial == other.cosine_initial and row.layers == other.layers
            and row.created_at == other.created_at)


def copy_lines(rows: Sequence[EdgeRow]) -> str:
    """The rows as COPY text. The two directions of a pair come one after the other with the same reasons, shared
    entities and themes (the same lists), so their common columns are formatted once."""
    lines: list[str] = []
    previous: EdgeRow | None = None
    tail = person = ""
    user_id: uuid.UUID | None = None
    for row in rows:
        if previous is None or not _same_tail(row, previous):
            tail = _copy_tail(row)
        if row.user_id is not user_id:  # all rows of a node are one person's: a uuid is formatted once
            user_id, person = row.user_id, _copy_scalar(row.user_id)
        previous = row
        lines.append(_copy_head(row, person) + tail)
    return "".join(lines)


async def insert_edges(session: AsyncSession, data: str) -> None:
    """Edge rows in COPY text (`copy_lines`: psycopg's row-by-row adaptation would cost more than the insert), in
    the session's transaction. Every pair involves a node new in this batch, so none can exist yet."""
    connection = await (await session.connection()).get_raw_connection()
    driver: Any = connection.driver_connection  # psycopg's AsyncConnection
    async with driver.cursor() as cursor, cursor.copy(_COPY_EDGES) as copy:
        await copy.write(data)


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


# Array columns cannot be unnested from a 2-d array (rows differ in length), so they travel joined by a
# separator that never occurs in a theme (word characters) or a uuid.
_SEP = "\x1f"
# The nodes' themes and entities go into memory_node_themes and memory_node_entities in the same statement (the
# theme and entity candidates are read from there).
_INSERT_NODES = text(f"""
    WITH inserted AS (
    INSERT INTO memory_nodes (id, user_id, source_key, speaker, text, embedding, embedder, themes, entity_ids,
                              timeline_start, timeline_end, timeline_precision, emotion, sector, salience, w_raw,
                              w_abs, w_decay, frequency, active, captured_at, created_at, reinforced_at,
                              decayed_at, fact_marks)
    SELECT n.id, :user_id, n.source_key, n.speaker, n.text, st.embedding, st.embedder,
           string_to_array(n.themes, '{_SEP}'), string_to_array(n.entity_ids, '{_SEP}')::uuid[], n.timeline_start,
           n.timeline_end, n.timeline_precision, n.emotion, n.sector, n.salience, n.w_raw, n.w_abs, n.w_abs, 1, true,
           n.captured_at, :now, :now, :now, string_to_array(n.fact_marks, '{_SEP}')
    FROM unnest(CAST(:id AS bigint[]), CAST(:entry_id AS uuid[]), CAST(:source_key AS text[]),
                CAST(:speaker AS text[]), CAST(:text AS text[]), CAST(:themes AS text[]), CAST(:entity_ids AS text[]),
                CAST(:timeline_start AS timestamptz[]), CAST(:timeline_end AS timestamptz[]),
                CAST(:timeline_precision AS text[]), CAST(:emotion AS text[]), CAST(:sector AS text[]),
                CAST(:salience AS float8[]), CAST(:w_raw AS float8[]), CAST(:w_abs AS float8[]),
                CAST(:captured_at AS timestamptz[]), CAST(:fact_marks AS text[])) WITH ORDINALITY
         AS n(id, entry_id, source_key, speaker, text, themes, entity_ids, timeline_start, timeline_end,
              timeline_precision, emotion, sector, salience, w_raw, w_abs, captured_at, fact_marks, position)
    JOIN memory_short_term st ON st.id = n.entry_id AND st.user_id = :user_id
    ORDER BY n.position
    ON CONFLICT (user_id, source_key) DO NOTHING
    RETURNING id, themes, entity_ids
    ), themed AS (
        INSERT INTO memory_node_themes (user_id, theme, node_id)
        SELECT DISTINCT :user_id, t.theme, i.id FROM inserted i CROSS JOIN LATERAL unnest(i.themes) AS t(theme)
    ), named AS (
        INSERT INTO memory_node_entities (user_id, entity_id, node_id)
        SELECT DISTINCT :user_id, e.entity_id, i.id
        FROM inserted i CROSS JOIN LATERAL unnest(i.entity_ids) AS e(entity_id)
    )
    SELECT id FROM inserted
""")


def _settle(work: _Batch, entry_id: uuid.UUID, status: str, node_id: int | None, error: str | None = None) -> None:
    work.entries.append({"id": entry_id, "status": status, "node_id": node_id, "last_error": error})


async def edge_candidates(session: AsyncSession, settings: MemorySettings, user_id: uuid.UUID,
                          vector: Sequence[float], magnets: MagnetFields) -> list[Candidate]:
    """The earlier nodes of the person worth comparing with one new memory (see `brain.memory.candidates`)."""
    [found] = await gather_candidates(session, settings, user_id, [Probe(vector, magnets)])
    return found


def _edge_rows(settings: MemorySettings, user_id: uuid.UUID, node_id: int, w_abs: float, magnets: MagnetFields,
               candidates: Sequence[Candidate], now: datetime) -> list[EdgeRow]:
    """Both directions for every earlier active node with a firing layer, the strongest pairs first, at most
    `max_edge_pairs` of them (recall follows only the few strongest edges of a node anyway). Every candidate is
    ranked by its pair strength at once; layers and weights in full are worked out for the kept pairs only."""
    others = [c for c in candidates if c.active and c.id != node_id]
    strengths = pair_strengths(magnets, w_abs, [c.magnets for c in others], [c.w_abs for c in others],
                               [c.cosine for c in others], settings)
    # Strongest first; equal strengths keep the candidates' order (a stable sort).
    ranked = sorted((i for i, strength in enumerate(strengths) if strength is not None),
                    key=lambda i: -(strengths[i] or 0.0))[:settings.max_edge_pairs]
    rows: list[EdgeRow] = []
    for i in ranked:
        other = others[i]
        comparison = compare_layers(magnets, other.magnets, other.cosine, settings)
        weights = edge_weights(w_abs, other.w_abs, comparison.hits, settings) if comparison else None
        assert comparison is not None and weights is not None  # pair_strengths found a firing layer
        reasons, layers, cosine = comparison.reasons, len(comparison.hits), round(comparison.cosine, 6)
        rows.append(EdgeRow(user_id, node_id, other.id, weights.a_to_b_raw, weights.a_to_b, reasons,
                            comparison.shared_entity_ids, comparison.shared_themes, comparison.timeline_days,
                            cosine, layers, now))
        rows.append(EdgeRow(user_id, other.id, node_id, weights.b_to_a_raw, weights.b_to_a, reasons,
                            comparison.shared_entity_ids, comparison.shared_themes, comparison.timeline_days,
                            cosine, layers, now))
    return rows


async def recompute_edges(session: AsyncSession, user_id: uuid.UUID, node_ids: Sequence[int],
                          settings: MemorySettings = MemorySettings()) -> int:
    """Trigger 2 of the concept: after nodes' w_abs changed (reinforcement), recompute the weights of every edge
    touching them from the frozen layer values and the current node strengths. Returns edges updated."""
    if not node_ids:
        return 0
    # The rows out of the nodes, and the reverse rows of those (the rows into the nodes), both through the
    # primary key (user_id, a_id, b_id); a pair between two of the nodes is among the rows out already.
    reverse = aliased(MemoryEdge)
    outgoing = (select(MemoryEdge.a_id, MemoryEdge.b_id, MemoryEdge.cosine_initial)
                .where(MemoryEdge.user_id == user_id, MemoryEdge.a_id.in_(node_ids)))
    incoming = (select(reverse.a_id, reverse.b_id, reverse.cosine_initial)
                .join(MemoryEdge, (reverse.a_id == MemoryEdge.b_id) & (reverse.b_id == MemoryEdge.a_id))
                .where(MemoryEdge.user_id == user_id, MemoryEdge.a_id.in_(node_ids), reverse.user_id == user_id,
                       reverse.a_id.not_in(node_ids)))
    edges = (await session.execute(union_all(outgoing, incoming))).all()
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
            updates.append({"user_id": user_id, "a_id": edge.a_id, "b_id": edge.b_id,
                            "w_raw": weights.a_to_b_raw, "w_abs": weights.a_to_b})
    if updates:
        await session.execute(update(MemoryEdge), updates)  # bulk update by primary key
    return len(updates)
