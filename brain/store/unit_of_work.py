"""One unit of work: a session in one transaction plus the domain events it emits. Events are
written to the event store inside the same transaction; the bus sees them only after commit, so a
rolled-back write leaves neither record nor event, and no subscriber hears of it.

An event is written by one lean statement (`Lean`) when its unit commits, not as an ORM object flushed by the
session: the ORM's flush of one event costs more client CPU than the write it describes. Until then
it is pending, and everything that could read it first writes it: a statement the session executes (the ORM's
autoflush point) and any commit of the session (`_write_pending`), so a unit reads its own events as before. A lean
statement of the unit does not write them; none reads events."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

from sqlalchemy import Table, bindparam, event, insert
from sqlalchemy.ext.asyncio import AsyncSession, AsyncSessionTransaction
from sqlalchemy.orm import ORMExecuteState, Session

from brain.clock import Clock
from brain.events.bus import EventBus
from brain.events.catalog import ActorT, DomainEvent, EventPayload
from brain.events.store import EventRecord, event_row
from brain.store.database import Database
from brain.store.lean import Lean

_EVENTS: Table = EventRecord.__table__  # type: ignore[assignment]
# `inline`: the database numbers `seq`, and nothing reads it back.
_WRITE_EVENT = Lean(insert(_EVENTS).inline().values({column.key: bindparam(column.key) for column in _EVENTS.columns
                                                      if column.key != "seq"}))
_UNIT = "companion_unit_of_work"  # the unit a session serves, in its `info`


class UnitOfWork:
    def __init__(self, session: AsyncSession, clock: Clock, caused_by: uuid.UUID | None = None) -> None:
        self.session = session
        self.clock = clock
        self.caused_by = caused_by
        self.events: list[DomainEvent] = []
        self._now: datetime | None = None
        self._written = 0  # `events[:_written]` are in the event store (in this transaction)
        session.sync_session.info[_UNIT] = self

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
        self.events.append(event)  # written before anything could read it (see the module docstring)
        return event

    async def write_events(self) -> None:
        """Writes the pending events (lean, on the unit's connection): called as the unit commits."""
        if self._written < len(self.events):
            connection = await self.session.connection()
            while self._written < len(self.events):
                await _WRITE_EVENT.run(connection, event_row(self.events[self._written]))
                self._written += 1

    async def savepoint(self) -> tuple[AsyncSessionTransaction, int]:
        """A savepoint of the unit, and the number of events emitted before it (for `drop_events_since`). Those
        are written first: written inside the savepoint, its rollback would remove them."""
        await self.write_events()
        return await self.session.begin_nested(), len(self.events)

    def drop_events_since(self, count: int) -> None:
        """Forgets the events emitted after the first `count`, when the `savepoint` that `count` came from was
        rolled back (which removed those of them already written)."""
        del self.events[count:]
        self._written = min(self._written, count)

    def _write_pending(self, session: Session) -> None:
        """The same, from inside the session (sync, on its connection): before a statement it executes or a
        commit that `write_events` did not precede."""
        if self._written < len(self.events):
            rows = [event_row(e) for e in self.events[self._written:]]
            session.connection().execute(insert(_EVENTS).inline(), rows)
            self._written = len(self.events)


def _pending_unit(session: Session) -> UnitOfWork | None:
    unit = session.info.get(_UNIT)
    return unit if isinstance(unit, UnitOfWork) and unit._written < len(unit.events) else None


@event.listens_for(Session, "do_orm_execute")
def _before_execute(state: ORMExecuteState) -> None:
    unit = _pending_unit(state.session)
    if unit is not None:
        unit._write_pending(state.session)


@event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    unit = _pending_unit(session)
    if unit is not None:
        unit._write_pending(session)


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
            await uow.write_events()
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
