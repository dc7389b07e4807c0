"""The day snapshot: one person's local day across the five life modules (tasks, calendar, drinks,
meals, places), read with one SQL statement however much data there is — and with four for any number of
people, each on their own local day. `SnapshotCache` keeps snapshots fresh from events."""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import CTE, Date, DateTime, and_, bindparam, exists, func, select
from sqlalchemy.dialects.postgresql import ARRAY, UUID, aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import column

from brain.events.catalog import DomainEvent
from brain.modules.calendar.models import CalendarEvent
from brain.modules.drink.models import DrinkEntry, DrinkGoal
from brain.modules.drink.service import DEFAULT_GOALS_ML
from brain.modules.food.models import Meal, NutritionGoal
from brain.modules.food.service import DEFAULT_CALORIE_GOAL
from brain.modules.places.models import Place, PlaceVisit, TrackingSession
from brain.modules.todo.models import Task
from brain.people.local_time import day_bounds, local_date
from brain.people.models import User
from brain.store.lean import Lean, session_connection

if TYPE_CHECKING:
    from brain.kernel import Kernel

MAX_DUE_LISTED = 5
MAX_UPCOMING = 5
DEFAULT_WATER_GOAL_ML = DEFAULT_GOALS_ML["water"]
# Enough for every active person of a family or a small server; the least recently read go first.
CACHE_MAX_USERS = 10_000


@dataclass(frozen=True)
class TaskSummary:
    id: str
    title: str
    due_date: date | None
    priority: int | None


@dataclass(frozen=True)
class EventSummary:
    id: str
    title: str
    start: datetime
    end: datetime
    is_all_day: bool


@dataclass(frozen=True)
class DaySnapshot:
    day: date  # the person's local date
    tasks_open: int
    tasks_done_today: int
    tasks_overdue: int
    tasks_due_today: list[TaskSummary]  # open tasks due today, at most MAX_DUE_LISTED, in task-list order
    events_today: int  # events overlapping the local day
    upcoming: list[EventSummary]  # the next MAX_UPCOMING from now (today's all-day events included)
    next_event: EventSummary | None
    water_ml: int
    water_goal_ml: int
    water_percent: int
    coffee_count: int
    coffee_ml: int
    other_ml: int
    meals: int
    kcal: int
    kcal_goal: int
    kcal_percent: int
    protein: int
    protein_goal: int | None
    places_visited: list[str]  # in the order of the first visit today
    tracking: bool
    # Timed events going on now (started, not over), soonest end first: not in `upcoming`, which lists what is
    # ahead; /today shows them as today's too.
    running: list[EventSummary] = field(default_factory=list)

    def as_data(self) -> dict[str, Any]:
        """JSON-safe (dates and instants as ISO strings), for tool results and the language model."""
        return _jsonable(asdict(self))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, date):  # datetime too
        return value.isoformat()
    return value


def percent(value: int, goal: int) -> int:
    """Half up, as people read percentages (250 of 2000 is 13 %); integer maths, so no float surprises."""
    return (value * 200 + goal) // (goal * 2) if goal > 0 else 0


def _day_params(users: Sequence[User], now: datetime) -> dict[str, Any]:
    """(user_id, day, day_start, day_end) per person as four arrays: each one's local day and its bounds as
    instants, worked out in Python (zones and DST) and passed as parameters, so one statement serves everyone."""
    ids, days, starts, ends = [], [], [], []
    for user in users:
        day = local_date(user, now)
        start, end = day_bounds(user, day)
        ids.append(user.id)
        days.append(day)
        starts.append(start)
        ends.append(end)
    return {"ids": ids, "days": days, "starts": starts, "ends": ends, "now": now}


def _days() -> CTE:
    """The people's days as rows (see `_day_params`), from the bound arrays."""
    rows = func.unnest(
        bindparam("ids", type_=ARRAY(UUID(as_uuid=True))), bindparam("days", type_=ARRAY(Date())),
        bindparam("starts", type_=ARRAY(DateTime(timezone=True))),
        bindparam("ends", type_=ARRAY(DateTime(timezone=True))),
    ).table_valued(
        column("user_id", UUID(as_uuid=True)), column("day", Date()), column("day_start", DateTime(timezone=True)),
        column("day_end", DateTime(timezone=True)),
    ).render_derived(name="person_day")
    return select(rows).cte("days")


def _one_day() -> CTE:
    """One person's day as a row of scalar parameters. For one person this, not the arrays: PostgreSQL plans a
    prepared statement once only where that plan is as cheap as one made for the values at hand, and over bound
    arrays it cannot know there is one person, so every /today was planned anew (about 2.5 ms of server CPU)."""
    return select(
        bindparam("user_id", type_=UUID(as_uuid=True)).label("user_id"), bindparam("day", type_=Date()).label("day"),
        bindparam("day_start", type_=DateTime(timezone=True)).label("day_start"),
        bindparam("day_end", type_=DateTime(timezone=True)).label("day_end"),
    ).cte("days")


@dataclass
class _Builder:
    day: date
    values: dict[str, Any] = field(default_factory=dict)
    due: list[TaskSummary] = field(default_factory=list)
    upcoming: list[EventSummary] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    now: datetime | None = None

    def build(self) -> DaySnapshot:
        v = self.values
        water_goal = v.get("water_goal") or DEFAULT_WATER_GOAL_ML
        kcal_goal = v.get("kcal_goal") or DEFAULT_CALORIE_GOAL
        water, kcal = int(v.get("water_ml") or 0), int(v.get("kcal") or 0)
        now = self.now
        running = sorted((e for e in self.upcoming if now is not None and not e.is_all_day and e.start < now),
                         key=lambda e: e.end)
        ahead = [e for e in self.upcoming if e not in running]
        return DaySnapshot(
            day=self.day, tasks_open=int(v.get("tasks_open") or 0), tasks_done_today=int(v.get("tasks_done") or 0),
            tasks_overdue=int(v.get("tasks_overdue") or 0), tasks_due_today=self.due,
            events_today=int(v.get("events_today") or 0), upcoming=ahead, running=running,
            next_event=ahead[0] if ahead else None,
            water_ml=water, water_goal_ml=water_goal, water_percent=percent(water, water_goal),
            coffee_count=int(v.get("coffee_count") or 0), coffee_ml=int(v.get("coffee_ml") or 0),
            other_ml=int(v.get("total_ml") or 0) - water - int(v.get("coffee_ml") or 0),
            meals=int(v.get("meals") or 0), kcal=kcal, kcal_goal=kcal_goal, kcal_percent=percent(kcal, kcal_goal),
            protein=int(v.get("protein") or 0), protein_goal=v.get("protein_goal"), places_visited=self.places,
            tracking=bool(v.get("tracking")),
        )


async def day_snapshot(session: AsyncSession, user: User, now: datetime) -> DaySnapshot:
    """One person's snapshot in one statement (the four of `day_snapshots`, their lists as arrays)."""
    day = local_date(user, now)
    builder = _Builder(day, now=now)
    start, end = day_bounds(user, day)
    found = await _IN_ONE_LEAN.one(await session_connection(session), {
        "user_id": user.id, "day": day, "day_start": start, "day_end": end, "now": now})
    row = builder.values = found._asdict()
    ids, titles, dates, priorities = (row[k] or [] for k in ("due_id", "due_title", "due_date", "due_priority"))
    builder.due = [TaskSummary(id=str(i), title=t, due_date=d, priority=p)
                   for i, t, d, p in zip(ids, titles, dates, priorities, strict=True)]
    ids, titles, starts, ends, all_day = (row[k] or [] for k in ("up_id", "up_title", "up_start", "up_end",
                                                                 "up_all_day"))
    builder.upcoming = [EventSummary(id=str(i), title=t, start=s, end=e, is_all_day=a)
                        for i, t, s, e, a in zip(ids, titles, starts, ends, all_day, strict=True)]
    builder.places = list(row["places"] or [])
    return builder.build()


async def day_snapshots(session: AsyncSession, users: Sequence[User], now: datetime) -> dict[uuid.UUID, DaySnapshot]:
    """Snapshots of many people at one instant, each for their own local day, in four statements."""
    if not users:
        return {}
    builders = {user.id: _Builder(local_date(user, now), now=now) for user in users}
    params = _day_params(users, now)
    totals, due_today, upcoming, places = _STATEMENTS
    for row in (await session.execute(totals, params)).mappings():
        builders[row["user_id"]].values = dict(row)
    for row in (await session.execute(due_today, params)).mappings():
        builders[row["user_id"]].due.append(TaskSummary(
            id=str(row["id"]), title=row["title"], due_date=row["due_date"], priority=row["priority"],
        ))
    for row in (await session.execute(upcoming, params)).mappings():
        builders[row["user_id"]].upcoming.append(EventSummary(
            id=str(row["id"]), title=row["title"], start=row["start_time"], end=row["end_time"],
            is_all_day=row["is_all_day"],
        ))
    for row in (await session.execute(places, params)).mappings():
        builders[row["user_id"]].places.append(row["name"])
    return {user_id: builder.build() for user_id, builder in builders.items()}


def _totals(days: CTE) -> Any:
    """One row per person: task counts, today's calendar count, drink and meal sums, goals, tracking."""
    is_open = Task.completed_at.is_(None)
    tasks = (
        select(
            Task.user_id,
            func.count().filter(is_open).label("tasks_open"),
            func.count().filter(Task.completed_at >= days.c.day_start, Task.completed_at < days.c.day_end)
            .label("tasks_done"),
            func.count().filter(is_open, Task.due_date < days.c.day).label("tasks_overdue"),
        )
        .join(days, Task.user_id == days.c.user_id)
        .group_by(Task.user_id)
        .subquery()
    )
    events = (
        select(CalendarEvent.user_id, func.count().label("events_today"))
        .join(days, and_(CalendarEvent.user_id == days.c.user_id, CalendarEvent.end_time > days.c.day_start,
                         CalendarEvent.start_time < days.c.day_end))
        .group_by(CalendarEvent.user_id)
        .subquery()
    )
    is_water, is_coffee = DrinkEntry.drink_type == "water", DrinkEntry.drink_type == "coffee"
    drinks = (
        select(
            DrinkEntry.user_id,
            func.sum(DrinkEntry.quantity_ml).filter(is_water).label("water_ml"),
            func.sum(DrinkEntry.quantity_ml).filter(is_coffee).label("coffee_ml"),
            func.count().filter(is_coffee).label("coffee_count"),
            func.sum(DrinkEntry.quantity_ml).label("total_ml"),
        )
        .join(days, and_(DrinkEntry.user_id == days.c.user_id, DrinkEntry.local_date == days.c.day))
        .group_by(DrinkEntry.user_id)
        .subquery()
    )
    meals = (
        select(Meal.user_id, func.count().label("meals"), func.sum(Meal.calories).label("kcal"),
               func.sum(Meal.protein).label("protein"))
        .join(days, and_(Meal.user_id == days.c.user_id, Meal.local_date == days.c.day))
        .group_by(Meal.user_id)
        .subquery()
    )
    tracking = exists().where(TrackingSession.user_id == days.c.user_id, TrackingSession.stopped_at.is_(None))
    return (
        select(
            days.c.user_id, tasks.c.tasks_open, tasks.c.tasks_done, tasks.c.tasks_overdue, events.c.events_today,
            drinks.c.water_ml, drinks.c.coffee_ml, drinks.c.coffee_count, drinks.c.total_ml,
            meals.c.meals, meals.c.kcal, meals.c.protein,
            DrinkGoal.daily_ml.label("water_goal"), NutritionGoal.daily_calories.label("kcal_goal"),
            NutritionGoal.daily_protein.label("protein_goal"), tracking.label("tracking"),
        )
        .select_from(days)
        .outerjoin(tasks, tasks.c.user_id == days.c.user_id)
        .outerjoin(events, events.c.user_id == days.c.user_id)
        .outerjoin(drinks, drinks.c.user_id == days.c.user_id)
        .outerjoin(meals, meals.c.user_id == days.c.user_id)
        .outerjoin(DrinkGoal, and_(DrinkGoal.user_id == days.c.user_id, DrinkGoal.drink_type == "water"))
        .outerjoin(NutritionGoal, NutritionGoal.user_id == days.c.user_id)
    )


def _due_today(days: CTE) -> Any:
    """Each person's first open tasks due today, in the task list's order (priority, then age)."""
    rank = func.row_number().over(partition_by=Task.user_id,
                                  order_by=(Task.priority.desc(), Task.created_at.asc(), Task.id.asc()))
    ranked = (
        select(Task.user_id, Task.id, Task.title, Task.due_date, Task.priority, rank.label("rank"))
        .join(days, and_(Task.user_id == days.c.user_id, Task.due_date == days.c.day))
        .where(Task.completed_at.is_(None))
        .subquery()
    )
    return select(ranked).where(ranked.c.rank <= MAX_DUE_LISTED).order_by(ranked.c.user_id, ranked.c.rank)


def _upcoming(days: CTE) -> Any:
    """Each person's next events from now (bound); an all-day event stays in view for the whole of its day."""
    now = bindparam("now", type_=DateTime(timezone=True))
    rank = func.row_number().over(
        partition_by=CalendarEvent.user_id,
        order_by=(CalendarEvent.start_time.asc(), CalendarEvent.end_time.asc(), CalendarEvent.created_at.asc(),
                  CalendarEvent.id.asc()),
    )
    ranked = (
        select(CalendarEvent.user_id, CalendarEvent.id, CalendarEvent.title, CalendarEvent.start_time,
               CalendarEvent.end_time, CalendarEvent.is_all_day, rank.label("rank"))
        .join(days, CalendarEvent.user_id == days.c.user_id)
        .where(CalendarEvent.end_time > now)  # running ones too: the builder tells them from those ahead
        .subquery()
    )
    return select(ranked).where(ranked.c.rank <= MAX_UPCOMING).order_by(ranked.c.user_id, ranked.c.rank)


def _places(days: CTE) -> Any:
    first = func.min(PlaceVisit.visited_at)
    return (
        select(PlaceVisit.user_id, Place.name, first.label("first_at"))
        .join(days, and_(PlaceVisit.user_id == days.c.user_id, PlaceVisit.local_date == days.c.day))
        .join(Place, and_(Place.id == PlaceVisit.place_id, Place.user_id == PlaceVisit.user_id))
        .group_by(PlaceVisit.user_id, Place.id, Place.name)
        .order_by(PlaceVisit.user_id, first, Place.name)
    )


def _statements() -> tuple[Any, Any, Any, Any]:
    days = _days()
    return _totals(days), _due_today(days), _upcoming(days), _places(days)


def _arrays(statement: Any, order: Sequence[str], **columns: str) -> Any:
    """`statement`'s rows (user_id and more) folded into one row per person: each named column an array of its
    values, in the `order` of the given columns."""
    rows = statement.subquery()
    by = [rows.c[name] for name in order]
    return (
        select(rows.c.user_id, *(func.array_agg(aggregate_order_by(rows.c[column], *by)).label(label)
                                 for label, column in columns.items()))
        .group_by(rows.c.user_id)
        .subquery()
    )


def _in_one() -> Any:
    """The four statements as one, for one person: the totals row with the due tasks, upcoming events and places as
    arrays."""
    days = _one_day()
    due = _arrays(_due_today(days), ("rank",), due_id="id", due_title="title", due_date="due_date",
                  due_priority="priority")
    upcoming = _arrays(_upcoming(days), ("rank",), up_id="id", up_title="title", up_start="start_time",
                       up_end="end_time", up_all_day="is_all_day")
    places = _arrays(_places(days), ("first_at", "name"), places="name")
    return (
        _totals(days)
        .add_columns(due.c.due_id, due.c.due_title, due.c.due_date, due.c.due_priority, upcoming.c.up_id,
                     upcoming.c.up_title, upcoming.c.up_start, upcoming.c.up_end, upcoming.c.up_all_day,
                     places.c.places)
        .outerjoin(due, due.c.user_id == days.c.user_id)
        .outerjoin(upcoming, upcoming.c.user_id == days.c.user_id)
        .outerjoin(places, places.c.user_id == days.c.user_id)
    )


# Built once (a snapshot is read for /today, summaries and rules): the people, their days and the instant are
# bound parameters, so a read neither rebuilds these statements nor walks them for their cache key.
_STATEMENTS = _statements()
_IN_ONE = _in_one()
# Run lean (`Lean`), prepared at its first run on a connection: planning it costs 3-5 ms of server CPU.
_IN_ONE_LEAN = Lean(_IN_ONE)


class SnapshotCache:
    """Day snapshots kept in memory per person and local day. Any event of a person drops theirs; it
    is recomputed on the next read, or when their local day has changed or an upcoming event began.
    The cache lives in one process and hears only that process's bus."""

    def __init__(self, brain: Kernel) -> None:
        self._brain = brain
        self._entries: OrderedDict[uuid.UUID, tuple[str, date, datetime | None, DaySnapshot]] = OrderedDict()
        # Reads in flight per person, and a counter bumped by events that arrive during them, so a
        # snapshot computed while an event came in is returned but not kept as fresh.
        self._reading: dict[uuid.UUID, int] = {}
        self._generation: dict[uuid.UUID, int] = {}
        brain.bus.subscribe_all(self._on_event)

    def _on_event(self, event: DomainEvent) -> None:
        self.drop(event.meta.user_id)

    def drop(self, user_id: uuid.UUID) -> None:
        self._entries.pop(user_id, None)
        if user_id in self._reading:
            self._generation[user_id] = self._generation.get(user_id, 0) + 1

    async def get(self, user: User) -> DaySnapshot:
        now = self._brain.clock.now()
        day = local_date(user, now)
        cached = self._entries.get(user.id)
        if cached is not None:
            zone, cached_day, stale_at, snapshot = cached
            if zone == user.timezone and cached_day == day and (stale_at is None or now < stale_at):
                self._entries.move_to_end(user.id)
                return snapshot
        self._reading[user.id] = self._reading.get(user.id, 0) + 1
        generation = self._generation.get(user.id, 0)
        try:
            async with self._brain.transactions.glance() as session:  # four reads, no locks: no transaction
                snapshot = await day_snapshot(session, user, now)
        finally:
            self._reading[user.id] -= 1
            if not self._reading[user.id]:
                del self._reading[user.id]
        if self._generation.get(user.id, 0) == generation:
            self._store(user, snapshot)
        if user.id not in self._reading:
            self._generation.pop(user.id, None)
        return snapshot

    def _store(self, user: User, snapshot: DaySnapshot) -> None:
        # An upcoming event that starts moves to the running ones, and a running one that ends leaves them, so the
        # snapshot is stale from the first such instant on.
        changes = [e.start for e in snapshot.upcoming if not e.is_all_day] + [e.end for e in snapshot.running]
        self._entries[user.id] = (user.timezone, snapshot.day, min(changes) if changes else None, snapshot)
        self._entries.move_to_end(user.id)
        while len(self._entries) > CACHE_MAX_USERS:
            self._entries.popitem(last=False)
