"""The goal tracker's rules and writes: which events feed goals and what one adds, how an amount changes a goal's
period, and when a period is reached. Events reach it through the bus (brain.goals.subscribers, one committed event
at a time); the roll-over job (brain.goals.rollover) closes ended periods, judges `<=` goals and opens the next.

`GoalReached` is emitted at most once per goal and period: the period row is unique per (goal,
period start), and `reached_at` is set by a conditional UPDATE that only one transaction can win."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import func, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.events.actor import system
from brain.events.catalog import GoalReached
from brain.goals.models import Goal, GoalPeriod
from brain.goals.periods import period_bounds
from brain.people.models import User
from brain.projections.streaks import streaks_for
from brain.store.unit_of_work import UnitOfWork

TRACKER = system("goal-tracker")
# Comparisons that can become true while a period runs; `<=` is only known once the period is over.
REACHED_ON_THE_WAY: frozenset[str] = frozenset({">=", "="})


@dataclass(frozen=True)
class EventSource:
    """An event type goals can count: the numeric payload fields they may sum and the fields they may filter on."""

    sum_fields: tuple[str, ...] = ()
    filter_fields: tuple[str, ...] = ()


EVENT_SOURCES: dict[str, EventSource] = {
    "DrinkLogged": EventSource(("quantity_ml",), ("drink_type", "name")),
    "MealLogged": EventSource(("calories", "protein", "carbs", "fat"), ("meal_type",)),
    "TaskCompleted": EventSource((), ("project_id",)),
    "TaskCreated": EventSource((), ("project_id",)),
    "PlaceCreated": EventSource((), ("category",)),
    "PlaceVisited": EventSource((), ("name",)),
    "CalendarEventCreated": EventSource((), ("calendar_id",)),
}
# Events that take back an earlier one of the same record. Their own payloads are thin (MealDeleted
# has no calories), so the tracker subtracts what the original event counted.
REVERSALS: dict[str, str] = {
    "DrinkEntryUndone": "DrinkLogged",
    "DrinkEntryDeleted": "DrinkLogged",
    "MealDeleted": "MealLogged",
    "TaskUncompleted": "TaskCompleted",
    "TaskDeleted": "TaskCreated",
    "PlaceDeleted": "PlaceCreated",
    "PlaceVisitDeleted": "PlaceVisited",
    "CalendarEventDeleted": "CalendarEventCreated",
}
# streak_days goals: the streak (brain.projections.streaks) and the event that mainly feeds it.
STREAK_SOURCES: dict[str, str] = {"water": "DrinkLogged", "tasks": "TaskCompleted", "meals": "MealLogged"}
TRACKED_EVENTS: frozenset[str] = frozenset(EVENT_SOURCES) | frozenset(REVERSALS)


# ---- pure rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoalMetric:
    metric: str
    field: str | None = None
    filter_field: str | None = None
    filter_value: str | None = None

    @classmethod
    def of(cls, goal: Goal) -> GoalMetric:
        return cls(goal.metric, goal.field, goal.filter_field, goal.filter_value)

    def counts(self, payload: Mapping[str, Any]) -> bool:
        """Whether an event with this payload feeds the goal (its filter, if any, matches)."""
        if self.filter_field is None:
            return True
        value = payload.get(self.filter_field)
        return value is not None and str(value).casefold() == (self.filter_value or "").casefold()

    def amount(self, payload: Mapping[str, Any]) -> float:
        """What one matching event adds: 1 for a count, the field's number for a sum (0 if it has none)."""
        if self.metric == "event_count":
            return 1.0
        value = payload.get(self.field or "")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return 0.0
        return float(value)


def is_met(comparison: str, value: float, target: float) -> bool:
    if comparison == ">=":
        return value >= target
    if comparison == "<=":
        return value <= target
    return math.isclose(value, target, abs_tol=1e-9)


def replay(metric: GoalMetric, events: Iterable[tuple[str, str, Mapping[str, Any]]]) -> float:
    """A period's value from its events, oldest first, as (event type, record id, payload): originals
    add, a reversal takes back what its record's original added (nothing if that was before)."""
    value = 0.0
    counted: dict[str, float] = {}
    for event_type, record_id, payload in events:
        if event_type in REVERSALS:
            value -= counted.pop(record_id, 0.0)
        elif metric.counts(payload):
            counted[record_id] = metric.amount(payload)
            value += counted[record_id]
    return max(value, 0.0)


# ---- changing a period --------------------------------------------------------------------------


async def current_streak(session: AsyncSession, user: User, streak: str, today: date) -> int:
    for view in await streaks_for(session, user, today):
        if view.streak == streak:
            return int(view.current) if view.status != "broken" else 0
    return 0


async def add_to_period(
    uow: UnitOfWork, user: User, goal: Goal, day: date, delta: float, caused_by: uuid.UUID | None
) -> None:
    """Adds `delta` to the period of `goal` that contains the local `day`; a first positive event opens
    the period row. A decrease never goes below zero and never takes a reached period back."""
    start, end = period_bounds(goal.period, day)
    if delta > 0:
        upsert = insert(GoalPeriod).values(
            user_id=user.id, goal_id=goal.id, period_start=start, period_end=end, value=delta, updated_at=uow.now,
        )
        value = await uow.session.scalar(
            upsert.on_conflict_do_update(
                index_elements=["goal_id", "period_start"],
                set_={"value": GoalPeriod.value + upsert.excluded.value, "updated_at": upsert.excluded.updated_at},
            ).returning(GoalPeriod.value)
        )
    else:
        value = await uow.session.scalar(
            update(GoalPeriod)
            .where(GoalPeriod.user_id == user.id, GoalPeriod.goal_id == goal.id, GoalPeriod.period_start == start)
            .values(value=func.greatest(GoalPeriod.value + delta, 0.0), updated_at=uow.now)
            .returning(GoalPeriod.value)
        )
    if value is not None and delta > 0 and goal.comparison in REACHED_ON_THE_WAY and \
            is_met(goal.comparison, value, goal.target):
        await reach(uow, user, goal, start, caused_by)


async def set_period_value(
    uow: UnitOfWork, user: User, goal: Goal, day: date, value: float, caused_by: uuid.UUID | None
) -> None:
    """Sets the period's value outright (streak goals: the streak as it stands), reaching it if met."""
    start, end = period_bounds(goal.period, day)
    upsert = insert(GoalPeriod).values(
        user_id=user.id, goal_id=goal.id, period_start=start, period_end=end, value=value, updated_at=uow.now,
    )
    await uow.session.execute(upsert.on_conflict_do_update(
        index_elements=["goal_id", "period_start"],
        set_={"value": upsert.excluded.value, "updated_at": upsert.excluded.updated_at},
    ))
    if goal.comparison in REACHED_ON_THE_WAY and is_met(goal.comparison, value, goal.target):
        await reach(uow, user, goal, start, caused_by)


async def reach(
    uow: UnitOfWork, user: User, goal: Goal, start: date, caused_by: uuid.UUID | None
) -> bool:
    """Marks the period reached and emits GoalReached, unless it already was: the UPDATE only matches
    while `reached_at` is NULL, and the row lock makes a concurrent second attempt match nothing."""
    value = await uow.session.scalar(
        update(GoalPeriod)
        .where(GoalPeriod.user_id == user.id, GoalPeriod.goal_id == goal.id, GoalPeriod.period_start == start,
               GoalPeriod.reached_at.is_(None))
        .values(reached_at=uow.now)
        .returning(GoalPeriod.value)
    )
    if value is None:
        return False
    uow.emit(
        GoalReached(goal_id=goal.id, title=goal.title, value=value, target=goal.target, period=goal.period,
                    period_start=start),
        user_id=user.id, record_id=goal.id, actor=TRACKER, caused_by=caused_by,
    )
    return True


async def open_period(uow: UnitOfWork, user: User, goal: Goal, day: date, value: float = 0.0) -> int:
    """Opens the period containing `day` with `value` unless it is open already; 1 if it was opened."""
    start, end = period_bounds(goal.period, day)
    opened = await uow.session.scalar(
        insert(GoalPeriod).values(user_id=user.id, goal_id=goal.id, period_start=start, period_end=end,
                                  value=value, updated_at=uow.now)
        .on_conflict_do_nothing(index_elements=["goal_id", "period_start"])
        .returning(GoalPeriod.goal_id)
    )
    return int(opened is not None)
