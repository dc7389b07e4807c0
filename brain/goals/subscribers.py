"""The goal tracker on the bus: each committed event that feeds a goal, or takes back one that did, changes the
person's current periods, in a transaction of its own. It listens to all events, after the projections' own
handlers, so a streak goal reads a streak that already counts the event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, bindparam, exists, or_, select
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncSession

from brain.events.catalog import DomainEvent
from brain.events.store import EventRecord
from brain.goals.models import Goal
from brain.goals.periods import local_date_at
from brain.goals.tracker import (
    EVENT_SOURCES,
    REVERSALS,
    TRACKED_EVENTS,
    GoalMetric,
    add_to_period,
    current_streak,
    set_period_value,
)
from brain.people.models import User
from brain.projections.streaks import streak_of, streak_taken_back
from brain.store.lean import Lean
from brain.store.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from brain.kernel import Kernel


def subscribe(brain: Kernel) -> None:
    async def on_event(event: DomainEvent) -> None:
        if event.type in TRACKED_EVENTS:
            await track_event(brain, event)

    brain.bus.subscribe_all(on_event)


def _fed_goals(person: Any, fed_type: Any) -> Any:
    return (Goal.user_id == person, Goal.status == "active",
            or_(Goal.event_type == fed_type, Goal.metric == "streak_days"))


# Built once and run lean (`Lean`: it runs for every event that can feed a goal): does the person have a goal
# it may feed?
_ANY_FED = Lean(select(exists().where(*_fed_goals(bindparam("person", type_=UUID(as_uuid=True)),
                                                  bindparam("fed", type_=String())))))


async def track_event(brain: Kernel, event: DomainEvent) -> None:
    """Applies one committed event to the person's active goals it feeds."""
    original_type = REVERSALS.get(event.type)
    fed_type = original_type or event.type
    if fed_type not in EVENT_SOURCES:
        return
    # Most events feed no goal: a look outside any transaction settles that without opening one.
    async with brain.db.autocommit() as connection:
        if not await _ANY_FED.scalar(connection, {"person": event.meta.user_id, "fed": fed_type}):
            return
    async with brain.transactions.begin(caused_by=event.meta.id) as uow:
        rows = (await uow.session.execute(
            select(Goal, User).join(User, User.id == Goal.user_id)
            .where(*_fed_goals(event.meta.user_id, fed_type))
            .order_by(Goal.created_at, Goal.id)
        )).all()
        if not rows:
            return
        user: User = rows[0][1]
        if original_type is None:
            payload: Mapping[str, Any] = event.payload.model_dump(mode="json")
            at, sign = event.meta.timestamp, 1.0
        else:
            original = await _original_of(uow.session, event, original_type)
            if original is None:
                return  # older than the event store keeps: no period that still matters
            payload, at, sign = original.payload, original.occurred_at, -1.0
        for goal, _ in rows:
            if goal.metric == "streak_days":
                await _track_streak(uow, user, goal, event)
                continue
            if goal.event_type != fed_type:
                continue
            metric = GoalMetric.of(goal)
            if not metric.counts(payload):
                continue
            delta = sign * metric.amount(payload)
            if delta:
                await add_to_period(uow, user, goal, local_date_at(at, user.timezone), delta, event.meta.id)


async def _original_of(session: AsyncSession, event: DomainEvent, original_type: str) -> EventRecord | None:
    return await session.scalar(
        select(EventRecord)
        .where(EventRecord.user_id == event.meta.user_id, EventRecord.type == original_type,
               EventRecord.record_id == event.meta.record_id, EventRecord.occurred_at <= event.meta.timestamp)
        .order_by(EventRecord.occurred_at.desc(), EventRecord.seq.desc()).limit(1)
    )


async def _track_streak(uow: UnitOfWork, user: User, goal: Goal, event: DomainEvent) -> None:
    if goal.field not in (streak_of(event), streak_taken_back(event)):
        return
    day = local_date_at(event.meta.timestamp, user.timezone)
    current = await current_streak(uow.session, user, goal.field or "", day)
    await set_period_value(uow, user, goal, day, float(current), event.meta.id)
