"""Per-day numbers of each life module over a window of the person's local days: the raw series that
correlations and the /week chart read. One grouped statement per table, whatever the window length."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Date, Float, and_, case, cast, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.i18n import N_
from brain.modules.calendar.models import CalendarEvent
from brain.modules.drink.models import DrinkEntry
from brain.modules.food.models import Meal
from brain.modules.places.models import LocationLog, PlaceVisit
from brain.modules.places.service import EARTH_RADIUS_M
from brain.modules.todo.models import Task
from brain.people.models import User

DailySeries = dict[date, float]


@dataclass(frozen=True)
class Metric:
    id: str
    module: str
    label: str  # an N_() msgid, a noun phrase that reads after "more" ("On days with more {label} ...")


METRICS: tuple[Metric, ...] = (
    Metric("tasks_done", "todo", N_("completed tasks")),
    Metric("tasks_overdue", "todo", N_("overdue tasks")),
    Metric("events", "calendar", N_("appointments")),
    Metric("meeting_hours", "calendar", N_("meeting time")),
    Metric("water_ml", "drink", N_("water")),
    Metric("coffee_count", "drink", N_("coffee")),
    Metric("kcal", "food", N_("calories")),
    Metric("protein", "food", N_("protein")),
    Metric("meals", "food", N_("meals")),
    Metric("places_visited", "places", N_("places visited")),
    Metric("distance_km", "places", N_("distance travelled")),
)
METRICS_BY_ID: dict[str, Metric] = {m.id: m for m in METRICS}
MODULES: tuple[str, ...] = ("todo", "calendar", "drink", "food", "places")


def metric_modules() -> dict[str, str]:
    """Metric id -> module, the mapping `correlate` needs to keep only cross-module pairs."""
    return {m.id: m.module for m in METRICS}


def _days(start: date, end: date) -> list[date]:
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def _local_midnight_utc(user: User, day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=ZoneInfo(user.timezone))


async def daily_metrics(
    session: AsyncSession, user: User, start: date, end: date, *, modules: Collection[str] = MODULES,
) -> dict[str, DailySeries]:
    """Metric id -> {local day -> value} for every day in [start, end].

    A module the person did not use at all in the window has no series (an untouched module says
    nothing, it is not "zero every day"); a module they used has a value on every day, 0 where empty.
    `modules` narrows the work to the modules a caller needs.
    """
    if end < start:
        return {}
    raw: dict[str, dict[date, float]] = defaultdict(dict)
    used: set[str] = set()
    readers = {"todo": _todo, "calendar": _calendar, "drink": _drink, "food": _food, "places": _places}
    for module in MODULES:
        if module in modules and await readers[module](session, user, start, end, raw):
            used.add(module)
    days = _days(start, end)
    return {
        metric.id: {day: raw[metric.id].get(day, 0.0) for day in days}
        for metric in METRICS if metric.module in used
    }


async def _todo(session: AsyncSession, user: User, start: date, end: date, raw: dict[str, DailySeries]) -> bool:
    """tasks_done: tasks by the local day of their completion. tasks_overdue at day D: tasks due before D
    that were still open at the end of D (completed later or not at all). A task's current due date is
    used for every past day, since reschedules keep no history; so is a task created after D with an
    earlier due date — the model has no trustworthy creation instant (created_at is the server's clock)."""
    window_start = _local_midnight_utc(user, start)
    done_day = cast(func.timezone(user.timezone, Task.completed_at), Date).label("done_day")
    # Grouped by (due date, completion day): every task in a group is overdue on the same days.
    rows = (await session.execute(
        select(Task.due_date, done_day, func.count())
        .where(Task.user_id == user.id,
               or_(and_(Task.completed_at.is_(None), Task.due_date < end), Task.completed_at >= window_start))
        .group_by(Task.due_date, done_day)
    )).all()
    done: dict[date, float] = defaultdict(float)
    # A difference array over the window: +n where a group turns overdue, -n the day it is done.
    delta: dict[date, int] = defaultdict(int)
    for due, completed_on, count in rows:
        if completed_on is not None and start <= completed_on <= end:
            done[completed_on] += count
        if due is None or due >= end:
            continue
        first = max(due + timedelta(days=1), start)
        last = end if completed_on is None else min(completed_on - timedelta(days=1), end)
        if first <= last:
            delta[first] += count
            delta[last + timedelta(days=1)] -= count
    overdue: dict[date, float] = {}
    running = 0
    for day in _days(start, end):
        running += delta.get(day, 0)
        if running:
            overdue[day] = float(running)
    raw["tasks_done"].update(done)
    raw["tasks_overdue"].update(overdue)
    return bool(done or overdue)


async def _calendar(session: AsyncSession, user: User, start: date, end: date, raw: dict[str, DailySeries]) -> bool:
    window_start, window_end = _local_midnight_utc(user, start), _local_midnight_utc(user, end + timedelta(days=1))
    start_day = cast(func.timezone(user.timezone, CalendarEvent.start_time), Date).label("start_day")
    hours = func.coalesce(func.sum(case(
        (CalendarEvent.is_all_day.is_(False),
         func.extract("epoch", CalendarEvent.end_time - CalendarEvent.start_time) / 3600.0),
        else_=0.0,
    )), 0.0)
    rows = (await session.execute(
        select(start_day, func.count(), cast(hours, Float))
        # end_time > window start lets the (user_id, end_time) index narrow the scan.
        .where(CalendarEvent.user_id == user.id, CalendarEvent.end_time > window_start,
               CalendarEvent.start_time >= window_start, CalendarEvent.start_time < window_end)
        .group_by(start_day)
    )).all()
    for day, count, meeting_hours in rows:
        raw["events"][day] = float(count)
        raw["meeting_hours"][day] = float(meeting_hours)
    return bool(rows)


async def _drink(session: AsyncSession, user: User, start: date, end: date, raw: dict[str, DailySeries]) -> bool:
    rows = (await session.execute(
        select(DrinkEntry.local_date,
               func.coalesce(func.sum(DrinkEntry.quantity_ml).filter(DrinkEntry.drink_type == "water"), 0),
               func.count().filter(DrinkEntry.drink_type == "coffee"))
        .where(DrinkEntry.user_id == user.id, DrinkEntry.local_date >= start, DrinkEntry.local_date <= end)
        .group_by(DrinkEntry.local_date)
    )).all()
    for day, water_ml, coffees in rows:
        raw["water_ml"][day] = float(water_ml)
        raw["coffee_count"][day] = float(coffees)
    return bool(rows)


async def _food(session: AsyncSession, user: User, start: date, end: date, raw: dict[str, DailySeries]) -> bool:
    rows = (await session.execute(
        select(Meal.local_date, func.coalesce(func.sum(Meal.calories), 0), func.coalesce(func.sum(Meal.protein), 0),
               func.count())
        .where(Meal.user_id == user.id, Meal.local_date >= start, Meal.local_date <= end)
        .group_by(Meal.local_date)
    )).all()
    for day, kcal, protein, meals in rows:
        raw["kcal"][day] = float(kcal or 0)
        raw["protein"][day] = float(protein or 0)
        raw["meals"][day] = float(meals)
    return bool(rows)


async def _places(session: AsyncSession, user: User, start: date, end: date, raw: dict[str, DailySeries]) -> bool:
    visits = (await session.execute(
        select(PlaceVisit.local_date, func.count(func.distinct(PlaceVisit.place_id)))
        .where(PlaceVisit.user_id == user.id, PlaceVisit.local_date >= start, PlaceVisit.local_date <= end)
        .group_by(PlaceVisit.local_date)
    )).all()
    for day, places in visits:
        raw["places_visited"][day] = float(places)

    # Consecutive logs of one local day, paired with lag(); the first log of a day starts a new track.
    ordered = (LocationLog.logged_at, LocationLog.id)
    steps = (
        select(
            LocationLog.local_date.label("day"), LocationLog.lat.label("lat"), LocationLog.lng.label("lng"),
            func.lag(LocationLog.lat).over(partition_by=LocationLog.local_date, order_by=ordered).label("prev_lat"),
            func.lag(LocationLog.lng).over(partition_by=LocationLog.local_date, order_by=ordered).label("prev_lng"),
        )
        .where(LocationLog.user_id == user.id, LocationLog.local_date >= start, LocationLog.local_date <= end)
        .subquery()
    )
    half_dlat = func.radians(steps.c.lat - steps.c.prev_lat) / 2
    half_dlng = func.radians(steps.c.lng - steps.c.prev_lng) / 2
    a = (func.power(func.sin(half_dlat), 2)
         + func.cos(func.radians(steps.c.prev_lat)) * func.cos(func.radians(steps.c.lat))
         * func.power(func.sin(half_dlng), 2))
    # least() guards asin against rounding just above 1. It also ignores NULLs, so the first log of a day
    # (no previous one) is filtered out explicitly rather than left to NULL arithmetic.
    metres = 2 * EARTH_RADIUS_M * func.asin(func.sqrt(func.least(a, 1.0)))
    tracks = (await session.execute(
        select(steps.c.day, func.coalesce(func.sum(metres).filter(steps.c.prev_lat.is_not(None)), 0.0))
        .group_by(steps.c.day)
    )).all()
    for day, total_m in tracks:
        raw["distance_km"][day] = float(total_m) / 1000.0
    return bool(visits or tracks)


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """The great-circle distance the SQL above computes, for tests and callers outside the database."""
    half_dlat = math.radians(lat2 - lat1) / 2
    half_dlng = math.radians(lng2 - lng1) / 2
    a = (math.sin(half_dlat) ** 2
         + math.cos(math.radians(lat1)) * math.cos(math.radians(lat2)) * math.sin(half_dlng) ** 2)
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(min(a, 1.0))) / 1000.0
