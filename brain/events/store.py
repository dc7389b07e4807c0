"""The append-only event store. Rows are added in the same transaction as the write they describe
(see `brain.store.unit_of_work`); this module holds the table, the query API and retention."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import BigInteger, Index, String, delete, func, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from brain.events.actor import actor_from_json
from brain.events.catalog import DomainEvent, EventMeta, decode_payload
from brain.store.base import Base

RETENTION_DAYS = 90
RETENTION_MAX_PER_USER = 50_000
QUERY_MAX = 1000


class EventRecord(Base):
    __tablename__ = "events"

    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    id: Mapped[uuid.UUID] = mapped_column(unique=True)
    user_id: Mapped[uuid.UUID] = mapped_column()
    type: Mapped[str] = mapped_column(String(64))
    module: Mapped[str] = mapped_column(String(32))
    collection: Mapped[str] = mapped_column(String(64))
    record_id: Mapped[str] = mapped_column(String(64))
    actor: Mapped[dict[str, Any]] = mapped_column(JSONB)
    caused_by: Mapped[uuid.UUID | None] = mapped_column()
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    occurred_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        Index("ix_events_user_time", "user_id", "occurred_at"),
        Index("ix_events_user_type_time", "user_id", "type", "occurred_at"),
        Index("ix_events_user_module_time", "user_id", "module", "occurred_at"),
    )

    @classmethod
    def from_event(cls, event: DomainEvent) -> EventRecord:
        return cls(**event_row(event))

    def to_event(self) -> DomainEvent:
        return DomainEvent(
            type=self.type,
            payload=decode_payload(self.type, self.payload),
            meta=EventMeta(
                id=self.id, timestamp=self.occurred_at, module=self.module, collection=self.collection,
                record_id=self.record_id, user_id=self.user_id, actor=actor_from_json(self.actor),
                caused_by=self.caused_by,
            ),
        )


def event_row(event: DomainEvent) -> dict[str, Any]:
    """The event store's row of an event: every column but `seq`, which the database numbers."""
    m = event.meta
    return {"id": m.id, "user_id": m.user_id, "type": event.type, "module": m.module, "collection": m.collection,
            "record_id": m.record_id, "actor": m.actor.model_dump(mode="json"), "caused_by": m.caused_by,
            "payload": event.payload.model_dump(mode="json"), "occurred_at": m.timestamp}


async def query_events(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    module: str | None = None,
    types: str | list[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 100,
) -> list[DomainEvent]:
    """One person's events, newest first; `limit` is capped at 1000."""
    stmt = select(EventRecord).where(EventRecord.user_id == user_id)
    if module is not None:
        stmt = stmt.where(EventRecord.module == module)
    if types is not None:
        names = [types] if isinstance(types, str) else types
        stmt = stmt.where(EventRecord.type.in_(names))
    if since is not None:
        stmt = stmt.where(EventRecord.occurred_at >= since)
    if until is not None:
        stmt = stmt.where(EventRecord.occurred_at < until)
    stmt = stmt.order_by(EventRecord.occurred_at.desc(), EventRecord.seq.desc()).limit(
        max(1, min(limit, QUERY_MAX))
    )
    rows = (await session.scalars(stmt)).all()
    return [row.to_event() for row in rows]


async def count_events_by_type(
    session: AsyncSession, user_id: uuid.UUID, since: datetime, until: datetime
) -> dict[str, int]:
    stmt = (
        select(EventRecord.type, func.count())
        .where(EventRecord.user_id == user_id, EventRecord.occurred_at >= since, EventRecord.occurred_at < until)
        .group_by(EventRecord.type)
    )
    return {t: n for t, n in (await session.execute(stmt))}


@dataclass(frozen=True)
class PruneResult:
    by_age: int
    by_count: int


async def prune_events(
    session: AsyncSession,
    now: datetime,
    *,
    max_age_days: int = RETENTION_DAYS,
    max_per_user: int = RETENTION_MAX_PER_USER,
) -> PruneResult:
    """Retention job: drop events older than `max_age_days`, then each person's oldest beyond
    `max_per_user`. Runs per person over indexes; the caller commits."""
    aged = await session.execute(
        delete(EventRecord).where(EventRecord.occurred_at < now - timedelta(days=max_age_days))
    )
    ranked = (
        select(EventRecord.seq, func.row_number().over(
            partition_by=EventRecord.user_id,
            order_by=(EventRecord.occurred_at.desc(), EventRecord.seq.desc()),
        ).label("rank"))
        .subquery()
    )
    overflow = await session.execute(
        delete(EventRecord).where(
            EventRecord.seq.in_(select(ranked.c.seq).where(ranked.c.rank > max_per_user))
        )
    )
    return PruneResult(by_age=_rowcount(aged), by_count=_rowcount(overflow))


def _rowcount(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)
