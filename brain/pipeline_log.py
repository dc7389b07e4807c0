"""The pipeline log: what each step of a turn took in, computed, decided, wrote and said, grouped by turn
and by span (one run of one step, with its parent). Writes are buffered in memory and flushed in batches
every 10 s and on shutdown, so logging never waits for the database; a crash loses at most that buffer."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, literal, select
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncSession

from brain import log_context
from brain.clock import Clock
from brain.memory.models import LOG_KINDS, PipelineLogEntry

logger = logging.getLogger(__name__)

RETENTION_DAYS = 365
# If the database stays unreachable, keep at most this many rows rather than grow without bound.
MAX_BUFFERED = 100_000


def _row(kind: str, name: str, content: Any, at: datetime, user_id: uuid.UUID | None, turn_id: uuid.UUID | None,
         span_id: uuid.UUID | None, parent_span_id: uuid.UUID | None) -> dict[str, Any]:
    if kind not in LOG_KINDS:
        raise ValueError(f"unknown pipeline log kind {kind!r}; one of {', '.join(LOG_KINDS)}")
    return {"kind": kind, "name": name, "content": content, "at": at, "user_id": user_id, "turn_id": turn_id,
            "span_id": span_id, "parent_span_id": parent_span_id}


async def write_log_now(
    session: AsyncSession, kind: str, name: str, content: Any, *, at: datetime, user_id: uuid.UUID | None = None,
    turn_id: uuid.UUID | None = None, span_id: uuid.UUID | None = None, parent_span_id: uuid.UUID | None = None,
) -> None:
    """Writes one row inside the caller's transaction: for callers without a buffered log, and for rows that
    must commit or roll back together with the change they describe."""
    await session.execute(insert(PipelineLogEntry), [_row(kind, name, content, at, user_id, turn_id, span_id,
                                                          parent_span_id)])


@dataclass
class Span:
    """One run of one step. Rows logged through it carry its span id and its parent's."""

    log_: PipelineLog
    name: str
    user_id: uuid.UUID | None
    turn_id: uuid.UUID | None
    parent_span_id: uuid.UUID | None
    span_id: uuid.UUID = field(default_factory=uuid.uuid4)
    status: dict[str, Any] = field(default_factory=lambda: {"status": "ok"})

    def log(self, kind: str, name: str, content: Any = None) -> None:
        self.log_.log(kind, name, content, user_id=self.user_id, turn_id=self.turn_id, span_id=self.span_id,
                      parent_span_id=self.parent_span_id)


class PipelineLog:
    """Buffered writer. `log` never blocks; a background task flushes every `flush_interval_s` seconds,
    `flush()` flushes now and `close()` flushes the rest and stops the task (call it on shutdown)."""

    def __init__(self, db_sessions: Callable[[], AsyncSession], clock: Clock, flush_interval_s: float = 10.0) -> None:
        self._sessions = db_sessions
        self._clock = clock
        self._interval = flush_interval_s
        self._buffer: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._closed = False
        self._flush_lock = asyncio.Lock()

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def log(self, kind: str, name: str, content: Any = None, *, user_id: uuid.UUID | None = None,
            turn_id: uuid.UUID | None = None, span_id: uuid.UUID | None = None,
            parent_span_id: uuid.UUID | None = None) -> None:
        self._buffer.append(_row(kind, name, content, self._clock.now(), user_id, turn_id, span_id, parent_span_id))
        self._ensure_writer()

    @contextlib.asynccontextmanager
    async def span(self, name: str, *, user_id: uuid.UUID | None, turn_id: uuid.UUID | None,
                   parent: Span | uuid.UUID | None = None) -> AsyncIterator[Span]:
        """span_start on entry, span_end on exit ({"status": "ok"}, or "error" plus an error row if the body
        raised; the exception propagates). Log lines written inside are about the span's person and turn."""
        parent_id = parent.span_id if isinstance(parent, Span) else parent
        span = Span(self, name, user_id, turn_id, parent_id)
        span.log("span_start", name)
        try:
            with log_context.about(user_id, turn_id):
                yield span
        except BaseException as failure:
            span.log("error", name, {"type": type(failure).__name__, "message": str(failure)[:500]})
            span.status = {"status": "error"}
            raise
        finally:
            span.log("span_end", name, span.status)

    def discard(self, user_id: uuid.UUID) -> int:
        """Drops one person's rows that are still in the buffer (forgetting must not be undone by a late flush)."""
        before = len(self._buffer)
        self._buffer = [row for row in self._buffer if row["user_id"] != user_id]
        return before - len(self._buffer)

    async def flush(self) -> int:
        async with self._flush_lock:
            rows, self._buffer = self._buffer, []
            if not rows:
                return 0
            try:
                async with self._sessions() as session, session.begin():
                    await session.execute(insert(PipelineLogEntry), rows)
            except Exception:
                # The log must never take the bot down; keep the rows for the next attempt.
                logger.exception("pipeline log flush failed; %d rows kept for retry", len(rows))
                self._buffer = (rows + self._buffer)[-MAX_BUFFERED:]
                return 0
            return len(rows)

    async def close(self) -> None:
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            self._wake.set()
            await task
        await self.flush()

    def _ensure_writer(self) -> None:
        if self._task is not None or self._closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (synchronous caller): rows wait for flush()/close()
        # In a context of its own: the writer outlives the span that started it and is about nobody.
        self._task = loop.create_task(self._run(), name="pipeline-log-writer", context=contextvars.Context())

    async def _run(self) -> None:
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._interval)
            if self._closed:
                return
            await self.flush()


async def query_turn(session: AsyncSession, turn_id: uuid.UUID, *,
                     user_id: uuid.UUID | None = None) -> list[PipelineLogEntry]:
    """Every row of one turn, in order."""
    stmt = select(PipelineLogEntry).where(PipelineLogEntry.turn_id == turn_id)
    if user_id is not None:
        stmt = stmt.where(PipelineLogEntry.user_id == user_id)
    return list((await session.scalars(stmt.order_by(PipelineLogEntry.at, PipelineLogEntry.id))).all())


async def query_span(session: AsyncSession, span_id: uuid.UUID, *,
                     user_id: uuid.UUID | None = None) -> list[PipelineLogEntry]:
    """The rows of one span and of all spans below it, in order."""
    tree = select(literal(span_id, type_=UUID(as_uuid=True)).label("span_id")).cte("span_tree", recursive=True)
    children = select(PipelineLogEntry.span_id).where(PipelineLogEntry.parent_span_id == tree.c.span_id)
    if user_id is not None:
        children = children.where(PipelineLogEntry.user_id == user_id)
    tree = tree.union(children)
    stmt = select(PipelineLogEntry).where(PipelineLogEntry.span_id.in_(select(tree.c.span_id)))
    if user_id is not None:
        stmt = stmt.where(PipelineLogEntry.user_id == user_id)
    return list((await session.scalars(stmt.order_by(PipelineLogEntry.at, PipelineLogEntry.id))).all())


async def prune_pipeline_log(session: AsyncSession, now: datetime, days: int = RETENTION_DAYS) -> int:
    """Retention: deletes rows older than `days` (365 by default); the caller commits."""
    result = await session.execute(delete(PipelineLogEntry).where(PipelineLogEntry.at < now - timedelta(days=days)))
    return int(getattr(result, "rowcount", 0) or 0)

