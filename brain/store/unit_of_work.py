"""One unit of work: a session in one transaction plus the domain events it emits. Events are
written to the event store inside the same transaction; the bus sees them only after commit, so a
rolled-back write leaves neither record nor event, and no subscriber hears of it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from brain.clock import Clock
from brain.events.bus import EventBus
from brain.events.catalog import ActorT, DomainEvent, EventPayload
from brain.events.store import EventRecord
from brain.store.database import Database


class UnitOfWork:
    def __init__(self, session: AsyncSession, clock: Clock, caused_by: uuid.UUID | None = None) -> None:
        self.session = session
        self.clock = clock
        self.caused_by = caused_by
        self.events: list[DomainEvent] = []
        self._now: datetime | None = None

    @property
    def now(self) -> datetime:
        """One instant per unit of work, so a record and its event carry the same time."""
        if self._now is None:
            self._now = self.clock.now()
        return self._now

    def emit(
        self,
        payload: EventPayload,
        *,
        user_id: uuid.UUID,
        record_id: object,
        actor: ActorT,
        caused_by: uuid.UUID | None = None,
    ) -> DomainEvent:
        event = DomainEvent.of(
            payload, user_id=user_id, record_id=record_id, actor=actor, at=self.now,
            caused_by=caused_by or self.caused_by,
        )
        self.session.add(EventRecord.from_event(event))
        self.events.append(event)
        return event


class Transactions:
    """Opens units of work on a database and publishes their events after commit."""

    def __init__(self, db: Database, bus: EventBus, clock: Clock) -> None:
        self.db = db
        self.bus = bus
        self.clock = clock

    @asynccontextmanager
    async def begin(self, caused_by: uuid.UUID | None = None) -> AsyncIterator[UnitOfWork]:
        await self.db.release()  # a transaction has a connection of its own: not two at once (`Database.sharing`)
        async with self.db.sessions() as session, session.begin():
            uow = UnitOfWork(session, self.clock, caused_by)
            yield uow
        # Reached only when the transaction committed.
        if uow.events:
            await self.bus.publish(uow.events)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A read-only session (its transaction is rolled back at the end)."""
        await self.db.release()
        async with self.db.sessions() as session:
            yield session

    @asynccontextmanager
    async def glance(self) -> AsyncIterator[AsyncSession]:
        """A session for a quick look outside any transaction (autocommit): spares the BEGIN and ROLLBACK round
        trips of `read`, which the checks run for every message can do without. Inside `Database.sharing`,
        consecutive glances share one connection. At READ COMMITTED each
        statement sees its own snapshot either way; what a glance cannot have is row locks or transaction-local
        settings (`SET LOCAL`, `set_config(..., true)`), which end with their statement."""
        async with self.db.autocommit() as connection, self.db.sessions(bind=connection) as session:
            yield session
