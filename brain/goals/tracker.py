"""The goal tracker: which events feed goals, how one event changes a goal's current period
(incrementally, in its own transaction after the event's commit), and the roll-over job that closes
ended periods, judges `<=` goals, and opens the next period.

`GoalReached` is emitted at most once per goal and period: the period row is unique per (goal,
period start), and `reached_at` is set by a conditional UPDATE that only one transaction can win."""

from __future__ import annotations

import importlib
import logging
import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, bindparam, exists, func, or_, select, update
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.events.actor import system
from brain.events.catalog import DomainEvent, GoalReached
from brain.events.store import EventRecord
from brain.goals.models import Goal, GoalPeriod
from brain.goals.periods import local_date_at, period_bounds
from brain.people.models import User
from brain.pulse.vacation import vacation_days_between
from brain.store.lean import Lean
from brain.store.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from brain.core import Brain

log = logging.getLogger(__name__)

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


# ---- tracking one event -------------------------------------------------------------------------


def streaks_module() -> ModuleType | None:
    """brain.projections.streaks, imported late so goals work (without streak goals) where it is absent."""
    try:
        return importlib.import_module("brain.projections.streaks")
    except ModuleNotFoundError as missing:
        if missing.name in ("brain.projections", "brain.projections.streaks"):
            return None
        raise


async def current_streak(session: AsyncSession, user: User, streak: str, today: date) -> int | None:
    streaks = streaks_module()
    if streaks is None:
        return None
    for view in await streaks.streaks_for(session, user, today):
        if view.streak == streak:
            return int(view.current) if view.status != "broken" else 0
    return 0


def _fed_goals(person: Any, fed_type: Any) -> Any:
    return (Goal.user_id == person, Goal.status == "active",
            or_(Goal.event_type == fed_type, Goal.metric == "streak_days"))


# Built once and run lean (`Lean`: it runs for every event that can feed a goal): does the person have a goal
# it may feed?
_ANY_FED = Lean(select(exists().where(*_fed_goals(bindparam("person", type_=UUID(as_uuid=True)),
                                                  bindparam("fed", type_=String())))))


async def track_event(brain: Brain, event: DomainEvent) -> None:
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


async def _track_streak(uow: UnitOfWork, user: User, goal: Goal, event: DomainEvent) -> None:
    streaks = streaks_module()
    if streaks is None or goal.field not in (streaks.streak_of(event), streaks.streak_taken_back(event)):
        return
    day = local_date_at(event.meta.timestamp, user.timezone)
    current = await current_streak(uow.session, user, goal.field or "", day)
    if current is not None:
        await set_period_value(uow, user, goal, day, float(current), event.meta.id)


# ---- roll-over ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RollOver:
    """What one run of `close_periods` did."""

    closed: int
    reached: int
    opened: int


async def close_periods(brain: Brain, now: datetime) -> RollOver:
    """The roll-over job (run it every few minutes, or at least hourly, from the scheduler): for each
    person with goals, closes every period that ended before `now` in their zone, emits GoalReached
    for a closed period whose comparison held (this is where `<=` goals are judged), and opens the
    current period of each active goal. Safe to run repeatedly and concurrently."""
    async with brain.transactions.read() as session:
        # The one look across people: who has goals at all. Everything after is per person.
        user_ids = list((await session.scalars(
            select(Goal.user_id).where(Goal.status.in_(("active", "paused"))).distinct()
        )).all())
    closed = reached = opened = 0
    for user_id in user_ids:
        try:
            c, r, o = await _roll_over(brain, user_id, now)
        except Exception:
            # One person's broken data must not stop everyone else's roll-over.
            log.exception("goal roll-over failed for user %s", user_id)
            continue
        closed, reached, opened = closed + c, reached + r, opened + o
    return RollOver(closed=closed, reached=reached, opened=opened)


async def _roll_over(brain: Brain, user_id: uuid.UUID, now: datetime) -> tuple[int, int, int]:
    async with brain.transactions.begin() as uow:
        user = await uow.session.get(User, user_id)
        if user is None:
            return 0, 0, 0
        goals = {g.id: g for g in (await uow.session.scalars(
            select(Goal).where(Goal.user_id == user_id, Goal.status.in_(("active", "paused")))
        )).all()}
        today = local_date_at(now, user.timezone)
        current = {goal_id: period_bounds(goal.period, today) for goal_id, goal in goals.items()}
        open_rows = (await uow.session.scalars(
            select(GoalPeriod)
            .where(GoalPeriod.user_id == user_id, GoalPeriod.closed_at.is_(None),
                   GoalPeriod.goal_id.in_(list(goals)))
            .order_by(GoalPeriod.period_start)
            .with_for_update().execution_options(populate_existing=True)
        )).all()
        closed = reached = 0
        has_current: set[uuid.UUID] = set()
        for row in open_rows:
            goal = goals[row.goal_id]
            if row.period_start >= current[goal.id][0]:
                has_current.add(goal.id)
                continue
            row.closed_at = now
            closed += 1
            if goal.status == "active" and row.reached_at is None and is_met(goal.comparison, row.value, goal.target):
                await uow.session.flush()
                reached += await reach(uow, user, goal, row.period_start, None)
            elif row.reached_at is None:
                # Mostly on vacation: paused, not failed.
                away = await vacation_days_between(uow, user_id, row.period_start, row.period_end)
                row.paused = away * 2 >= (row.period_end - row.period_start).days
        opened = 0
        for goal in goals.values():
            if goal.status == "active" and goal.id not in has_current:
                opened += await open_period(uow, user, goal, today)
        return closed, reached, opened


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
