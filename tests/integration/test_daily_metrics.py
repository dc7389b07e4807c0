"""Daily metrics over the real database: each module's numbers land on the person's local day, unused
modules stay absent, overdue follows a task until it is done, the number of statements does not grow
with the window, another person's rows never count; and correlations found from logged days."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import event

from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.i18n import Renderer
from brain.modules.calendar import service as calendar
from brain.modules.drink import service as drink
from brain.modules.food import service as food
from brain.modules.places import service as places
from brain.modules.todo import service as todo
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.projections.correlations import correlations
from brain.projections.daily_metrics import METRICS, daily_metrics, haversine_km

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 11, 30)
ALEXANDERPLATZ = (52.521918, 13.413215)
BRANDENBURG_GATE = (52.516275, 13.377704)
MUSEUM_ISLAND = (52.5169, 13.4019)


def at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=BERLIN)


async def metrics(brain: Brain, user: User, start: date, end: date, **kw: Any) -> dict[str, dict[date, float]]:
    async with brain.transactions.read() as session:
        return await daily_metrics(session, user, start, end, **kw)


async def _other_user(brain: Brain) -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"other-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")


@contextmanager
def statements(brain: Brain) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        seen.append(statement)

    engine = brain.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


async def test_drinks_meals_and_events_are_summed_per_local_day(brain: Brain, clock: FixedClock, user: User) -> None:
    sunday, monday = MONDAY - timedelta(days=1), MONDAY
    for when, kind, ml in [(at(sunday, 9), "water", 500), (at(sunday, 15), "water", 250),
                           (at(sunday, 10), "coffee", 150), (at(sunday, 16), "coffee", 150),
                           (at(monday, 8), "tea", 250)]:
        clock.set(when)
        async with brain.transactions.begin() as uow:
            await drink.log_drink(uow, user, USER, kind, ml)
    for when, kcal, protein in [(at(sunday, 8), 400, 20), (at(sunday, 13), 700, None), (at(monday, 12), None, 30)]:
        clock.set(when)
        async with brain.transactions.begin() as uow:
            await food.log_meal(uow, user, USER, "something", kcal=kcal, protein=protein)
    async with brain.transactions.begin() as uow:
        await calendar.create_event(uow, user, USER, "Standup", at(monday, 9), at(monday, 9, 30))
        await calendar.create_event(uow, user, USER, "Review", at(monday, 14), at(monday, 16))
        await calendar.create_event(uow, user, USER, "Holiday", at(monday, 0), is_all_day=True)
        await calendar.create_event(uow, user, USER, "Late call", at(sunday, 23, 30), at(monday, 0, 30))

    got = await metrics(brain, user, sunday, monday)

    assert got["water_ml"] == {sunday: 750, monday: 0}
    assert got["coffee_count"] == {sunday: 2, monday: 0}
    assert got["kcal"] == {sunday: 1100, monday: 0}
    assert got["protein"] == {sunday: 20, monday: 30}
    assert got["meals"] == {sunday: 2, monday: 1}
    # Counted on the local day they start; all-day events add no meeting hours.
    assert got["events"] == {sunday: 1, monday: 3}
    assert got["meeting_hours"] == {sunday: pytest.approx(1.0), monday: pytest.approx(2.5)}


async def test_a_task_done_late_in_the_evening_counts_for_that_local_day(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    async with brain.transactions.begin() as uow:
        evening = await todo.create_task(uow, user, USER, "evening")
        past_midnight = await todo.create_task(uow, user, USER, "past midnight")
    clock.set(at(MONDAY, 23, 30))  # 22:30 UTC, still Monday in Berlin
    async with brain.transactions.begin() as uow:
        await todo.complete_task(uow, user, USER, evening.id)
    clock.set(at(MONDAY + timedelta(days=1), 0, 30))  # 23:30 UTC on Monday, Tuesday in Berlin
    async with brain.transactions.begin() as uow:
        await todo.complete_task(uow, user, USER, past_midnight.id)

    got = await metrics(brain, user, MONDAY, MONDAY + timedelta(days=1))

    assert got["tasks_done"] == {MONDAY: 1, MONDAY + timedelta(days=1): 1}


async def test_a_task_is_overdue_from_the_day_after_its_due_date_until_it_is_done(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    start = MONDAY - timedelta(days=7)
    days = [start + timedelta(days=i) for i in range(8)]
    async with brain.transactions.begin() as uow:
        late = await todo.create_task(uow, user, USER, "done late", due_date=days[1])
        await todo.create_task(uow, user, USER, "never done", due_date=days[3])
        await todo.create_task(uow, user, USER, "due later", due_date=MONDAY + timedelta(days=3))
        early = await todo.create_task(uow, user, USER, "done before the window", due_date=start - timedelta(days=5))
    clock.set(at(days[4], 12))
    async with brain.transactions.begin() as uow:
        await todo.complete_task(uow, user, USER, late.id)
    clock.set(at(start - timedelta(days=1), 12))
    async with brain.transactions.begin() as uow:
        await todo.complete_task(uow, user, USER, early.id)

    got = await metrics(brain, user, start, MONDAY)

    # "done late" is overdue on days 2 and 3 (done during day 4); "never done" from day 4 on.
    assert [got["tasks_overdue"][d] for d in days] == [0, 0, 1, 1, 1, 1, 1, 1]
    assert [got["tasks_done"][d] for d in days] == [0, 0, 0, 0, 1, 0, 0, 0]


async def test_places_count_distinct_places_and_the_distance_between_consecutive_locations(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    async with brain.transactions.begin() as uow:
        await places.create_place(uow, user, USER, "Cafe")
        await places.create_place(uow, user, USER, "Gym")
    for hour, name in [(8, "Cafe"), (12, "Gym"), (18, "Cafe")]:
        clock.set(at(MONDAY, hour))
        async with brain.transactions.begin() as uow:
            await places.visit_place(uow, user, USER, name)
    track = [ALEXANDERPLATZ, MUSEUM_ISLAND, BRANDENBURG_GATE]
    for minute, (lat, lng) in enumerate(track):
        clock.set(at(MONDAY, 19, minute))
        async with brain.transactions.begin() as uow:
            await places.log_location(uow, user, USER, lat, lng)
    # One lone log on Sunday: no step, so no distance.
    clock.set(at(MONDAY - timedelta(days=1), 20))
    async with brain.transactions.begin() as uow:
        await places.log_location(uow, user, USER, *ALEXANDERPLATZ)

    got = await metrics(brain, user, MONDAY - timedelta(days=1), MONDAY)

    expected = haversine_km(*ALEXANDERPLATZ, *MUSEUM_ISLAND) + haversine_km(*MUSEUM_ISLAND, *BRANDENBURG_GATE)
    assert got["places_visited"] == {MONDAY - timedelta(days=1): 0, MONDAY: 2}
    assert got["distance_km"][MONDAY] == pytest.approx(expected, rel=1e-9)
    assert got["distance_km"][MONDAY - timedelta(days=1)] == 0
    assert 2.0 < expected < 3.5


async def test_a_module_never_used_in_the_window_has_no_metrics(brain: Brain, clock: FixedClock, user: User) -> None:
    clock.set(at(MONDAY - timedelta(days=2), 10))
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, user, USER, "water", 300)

    got = await metrics(brain, user, MONDAY - timedelta(days=4), MONDAY)

    assert set(got) == {"water_ml", "coffee_count"}
    assert list(got["water_ml"].values()) == [0, 0, 300, 0, 0]


async def test_every_metric_has_a_module_and_a_label() -> None:
    assert {m.module for m in METRICS} == {"todo", "calendar", "drink", "food", "places"}
    assert all(m.label and Renderer("en")(m.label) for m in METRICS)
    assert len({m.id for m in METRICS}) == len(METRICS)


async def test_the_number_of_statements_does_not_grow_with_the_window(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    for back in range(0, 90, 3):
        clock.set(at(MONDAY - timedelta(days=back), 10))
        async with brain.transactions.begin() as uow:
            await drink.log_drink(uow, user, USER, "water", 250)
            await food.log_meal(uow, user, USER, "soup", kcal=300)
            task = await todo.create_task(uow, user, USER, "t", due_date=MONDAY - timedelta(days=back + 1))
            await todo.complete_task(uow, user, USER, task.id)

    with statements(brain) as week:
        await metrics(brain, user, MONDAY - timedelta(days=6), MONDAY)
    with statements(brain) as quarter:
        got = await metrics(brain, user, MONDAY - timedelta(days=89), MONDAY)

    assert len(week) == len(quarter) <= 6
    assert sum(got["water_ml"].values()) == 30 * 250 and sum(got["tasks_done"].values()) == 30


async def test_only_the_requested_modules_are_read(brain: Brain, clock: FixedClock, user: User) -> None:
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, user, USER, "water", 250)
        await food.log_meal(uow, user, USER, "soup", kcal=300)
    with statements(brain) as seen:
        got = await metrics(brain, user, MONDAY, MONDAY, modules=("drink",))
    assert set(got) == {"water_ml", "coffee_count"} and len(seen) == 1


async def test_another_persons_rows_never_count(brain: Brain, clock: FixedClock, user: User) -> None:
    other = await _other_user(brain)
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, other, USER, "water", 900)
        await food.log_meal(uow, other, USER, "cake", kcal=500)
        await todo.create_task(uow, other, USER, "theirs", due_date=MONDAY - timedelta(days=3))
        await calendar.create_event(uow, other, USER, "theirs", at(MONDAY, 10))
        await places.create_place(uow, other, USER, "Theirs")
        await places.visit_place(uow, other, USER, "Theirs")
        await places.log_location(uow, other, USER, *ALEXANDERPLATZ)

    assert await metrics(brain, user, MONDAY - timedelta(days=7), MONDAY) == {}


async def test_correlations_find_a_cross_module_link_in_logged_days(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    # 21 days: on days with more coffee, more tasks get done; water stays flat but noisy.
    today = MONDAY
    for back in range(1, 22):
        day = today - timedelta(days=back)
        coffees = back % 4
        clock.set(at(day, 9))
        async with brain.transactions.begin() as uow:
            for _ in range(coffees):
                await drink.log_drink(uow, user, USER, "coffee", 150)
            for i in range(coffees * 2 + back % 2):
                task = await todo.create_task(uow, user, USER, f"task {back}-{i}")
                await todo.complete_task(uow, user, USER, task.id)
    clock.set(at(today, 9))

    async with brain.transactions.read() as session:
        found = await correlations(session, user, today)

    link = next(c for c in found if {c.metric_a, c.metric_b} == {"coffee_count", "tasks_done"})
    # Only the 21 days since the first log count, not the 60-day lookback full of zeros.
    assert link.n == 21 and link.r > 0.9 and link.p < 0.001 and link.direction == "positive"
    assert all(c.module_a != c.module_b for c in found)
    text = Renderer("en")(link.sentence)
    assert text.startswith("On days with more ") and "% more" in text


async def test_correlations_ignore_today_and_need_fourteen_days(brain: Brain, clock: FixedClock, user: User) -> None:
    for back in range(0, 13):
        day = MONDAY - timedelta(days=back)
        clock.set(at(day, 9))
        async with brain.transactions.begin() as uow:
            for _ in range(back % 3):
                await drink.log_drink(uow, user, USER, "coffee", 150)
            await food.log_meal(uow, user, USER, "x", kcal=500 * (back % 3) + 100)
    async with brain.transactions.read() as session:
        assert await correlations(session, user, MONDAY) == []

