"""Attaches the projections to the bus: streak states advance on each qualifying event (in their own
transaction, after the event's commit; an event whose day the streak already counts needs only a read), an event
that takes one back (an undone drink, an uncompleted task, a deleted meal) may return a streak to its state before
that day. Subscribed before goals and rules, so those read streaks that already count the event (the day-snapshot
cache, `brain.projections.day_snapshot.SnapshotCache`, subscribes itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.events.catalog import DomainEvent
from brain.projections.streaks import (
    QUALIFYING_EVENTS,
    TAKE_BACKS,
    record_activity_in,
    streak_of,
    streak_taken_back,
    take_back_activity,
    zone_to_count,
)

if TYPE_CHECKING:
    from brain.kernel import Kernel


def subscribe(brain: Kernel) -> None:
    async def on_activity(event: DomainEvent) -> None:
        streak = streak_of(event)
        if streak is None:
            return
        async with brain.db.autocommit() as connection:
            zone = await zone_to_count(connection, event.meta.user_id, streak, event.meta.timestamp)
        if zone is None:
            return
        async with brain.transactions.begin(caused_by=event.meta.id) as uow:
            await record_activity_in(uow, event.meta.user_id, zone, streak, event.meta.timestamp)

    async def on_take_back(event: DomainEvent) -> None:
        if streak_taken_back(event) is None:
            return
        async with brain.transactions.begin(caused_by=event.meta.id) as uow:
            await take_back_activity(uow, event)

    for event_type in QUALIFYING_EVENTS:
        brain.bus.subscribe(event_type, on_activity)
    for event_type in TAKE_BACKS:
        brain.bus.subscribe(event_type, on_take_back)
