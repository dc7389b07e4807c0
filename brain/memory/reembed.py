"""Re-embedding after a change of embedder: the memories whose vectors are of another space get new ones, a batch at
a time, in the background. Each batch is committed on its own, so the work resumes where it stopped after a
restart. Meanwhile recall finds what is not re-embedded yet by its words (see brain.memory.recall), and promotion
waits for the entries captured before the change (see brain.memory.promotion)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text

from brain.memory.capture import embedded_text
from brain.memory.embedder import Embedder, embedded, space_of
from brain.store.unit_of_work import Transactions

log = logging.getLogger(__name__)

# Texts embedded per batch: e5 takes a few seconds for 64 on one core, and each batch is one short transaction.
REEMBED_BATCH = 64


@dataclass(frozen=True)
class ReembedProgress:
    """How many memories (nodes and queued entries) have vectors of the memory's space, and how many do not yet."""

    done: int
    remaining: int

    @property
    def total(self) -> int:
        return self.done + self.remaining


# Entries still to promote come first (promotion waits for them); promoted and rejected entries keep their old
# vectors, which nothing reads any more.
_STALE_ENTRIES = text("""
    SELECT id, speaker, text FROM memory_short_term
    WHERE status = 'pending' AND embedding IS NOT NULL AND embedder IS DISTINCT FROM :space
    ORDER BY id LIMIT :batch""")
_STALE_NODES = text("""
    SELECT id, speaker, text FROM memory_nodes WHERE embedder <> :space ORDER BY id LIMIT :batch""")
# Only rows still of another space: two processes that re-embed the same rows at once write the same vectors.
_UPDATE_ENTRIES = text("""
    UPDATE memory_short_term e SET embedding = v.embedding, embedder = :space
    FROM unnest(CAST(:ids AS uuid[]), CAST(:vectors AS vector[])) AS v(id, embedding)
    WHERE e.id = v.id AND e.embedder IS DISTINCT FROM :space""")
_UPDATE_NODES = text("""
    UPDATE memory_nodes n SET embedding = v.embedding, embedder = :space
    FROM unnest(CAST(:ids AS bigint[]), CAST(:vectors AS vector[])) AS v(id, embedding)
    WHERE n.id = v.id AND n.embedder <> :space""")
_PROGRESS = text("""
    SELECT (SELECT count(*) FROM memory_nodes WHERE embedder = :space)
           + (SELECT count(*) FROM memory_short_term WHERE status = 'pending' AND embedder = :space) AS done,
           (SELECT count(*) FROM memory_nodes WHERE embedder <> :space)
           + (SELECT count(*) FROM memory_short_term
              WHERE status = 'pending' AND embedding IS NOT NULL AND embedder IS DISTINCT FROM :space) AS remaining""")


async def reembed_progress(transactions: Transactions, embedder: Embedder) -> ReembedProgress:
    async with transactions.read() as session:
        row = (await session.execute(_PROGRESS, {"space": space_of(embedder).key})).one()
    return ReembedProgress(int(row.done), int(row.remaining))


async def reembed_batch(transactions: Transactions, embedder: Embedder, batch: int = REEMBED_BATCH) -> int:
    """Re-embeds up to `batch` memories of another space (queued entries first). Returns how many; 0 when none is
    left. The texts are embedded outside any transaction, in a thread: the event loop keeps serving meanwhile."""
    space = space_of(embedder).key
    for select_stale, update in ((_STALE_ENTRIES, _UPDATE_ENTRIES), (_STALE_NODES, _UPDATE_NODES)):
        async with transactions.read() as session:
            rows = (await session.execute(select_stale, {"space": space, "batch": batch})).all()
        if not rows:
            continue
        vectors = await embedded(embedder, [embedded_text(row.speaker, row.text) for row in rows])
        async with transactions.begin() as uow:
            await uow.session.execute(update, {"space": space, "ids": [row.id for row in rows],
                                               "vectors": [np.asarray(v, np.float32) for v in vectors]})
        return len(rows)
    return 0


async def reembed_all(transactions: Transactions, embedder: Embedder, *, batch: int = REEMBED_BATCH,
                      on_progress: Callable[[ReembedProgress], None] | None = None) -> ReembedProgress:
    """Re-embeds until no memory of another space is left, reporting progress after every batch (and in the log)."""
    progress = await reembed_progress(transactions, embedder)
    if progress.remaining == 0:
        return progress
    key = space_of(embedder).key
    log.warning("re-embedding %d memories with %s in the background; until then recall finds them by their words",
                progress.remaining, key)
    done = progress.done
    while (count := await reembed_batch(transactions, embedder, batch)) > 0:
        done += count
        progress = ReembedProgress(done, max(progress.total - done, 0))
        log.info("re-embedded %d of %d memories with %s", progress.done, progress.total, key)
        if on_progress is not None:
            on_progress(progress)
    progress = await reembed_progress(transactions, embedder)
    log.warning("re-embedding with %s done: %d memories", key, progress.done)
    return progress
