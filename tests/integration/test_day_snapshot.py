"""The day snapshot over the five life modules: what it counts on the person's local day, that it never
shows another person's data, that it keeps a constant number of SQL statements for 1 or 20 people, and
that the cache follows events and the local midnight."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import event, text

from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.modules.calendar import service as calendar
from brain.modules.drink import service as drink
from brain.modules.food import service as food
from brain.modules.places import service as places
from brain.modules.todo import service as todo
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.projections.day_snapshot import DaySnapshot, SnapshotCache, day_snapshot, day_snapshots, percent

BERLIN = ZoneInfo("Europe/Berlin")
TODAY = date(2026, 11, 30)  # the clock fixture: Monday 08:30 in Berlin


def berlin(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=BERLIN)


async def new_user(brain: Brain, timezone: str = "Europe/Berlin") -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="en",
                                      default_timezone=timezone)


async def snapshot_of(brain: Brain, user: User) -> DaySnapshot:
    async with brain.transactions.read() as session:
        return await day_snapshot(session, user, brain.clock.now())


async def fill_a_day(brain: Brain, user: User, *, tag: str = "") -> None:
    """Data in all five modules on 2026-11-30 (Berlin), plus some that must not count for that day."""
    async with brain.transactions.begin() as uow:
        await todo.create_task(uow, user, USER, f"{tag}Overdue", due_date=TODAY - timedelta(days=2))
        await todo.create_task(uow, user, USER, f"{tag}Due low", due_date=TODAY, priority=1)
        await todo.create_task(uow, user, USER, f"{tag}Due high", due_date=TODAY, priority=3)
        await todo.create_task(uow, user, USER, f"{tag}Later", due_date=TODAY + timedelta(days=5))
        done = await todo.create_task(uow, user, USER, f"{tag}Done", due_date=TODAY)
    async with brain.transactions.begin() as uow:
        await todo.complete_task(uow, user, USER, done.id)
        await calendar.create_event(uow, user, USER, f"{tag}Breakfast", berlin(TODAY, 7), berlin(TODAY, 8))
        await calendar.create_event(uow, user, USER, f"{tag}Standup", berlin(TODAY, 17, 30), berlin(TODAY, 17, 45))
        await calendar.create_event(uow, user, USER, f"{tag}Holiday", berlin(TODAY, 0), is_all_day=True)
        await calendar.create_event(uow, user, USER, f"{tag}Dentist", berlin(TODAY + timedelta(days=1), 14))
        for kind, ml in (("water", 250), ("water", 500), ("coffee", 150), ("coffee", 150), ("tea", 200)):
            await drink.log_drink(uow, user, USER, kind, ml)
        await food.set_nutrition_goal(uow, user, USER, 1800, protein=90)
        await food.log_meal(uow, user, USER, f"{tag}Pasta", meal_type="lunch", kcal=651, protein=30)
        await food.log_meal(uow, user, USER, f"{tag}Salad", meal_type="dinner", kcal=400)
        await places.create_place(uow, user, USER, f"{tag}Office")
        await places.create_place(uow, user, USER, f"{tag}Café Luna")
        await places.visit_place(uow, user, USER, f"{tag}Café Luna")
    assert isinstance(brain.clock, FixedClock)
    brain.clock.advance(timedelta(minutes=5))
    async with brain.transactions.begin() as uow:
        await places.visit_place(uow, user, USER, f"{tag}Office")
        await places.visit_place(uow, user, USER, f"{tag}Café Luna")
        await places.start_tracking(uow, user, USER)


async def test_snapshot_of_an_empty_day_uses_the_default_goals(brain: Brain, user: User) -> None:
    snap = await snapshot_of(brain, user)
    assert snap.day == TODAY
    assert (snap.tasks_open, snap.tasks_done_today, snap.tasks_overdue, snap.tasks_due_today) == (0, 0, 0, [])
    assert (snap.events_today, snap.upcoming, snap.next_event) == (0, [], None)
    assert (snap.water_ml, snap.water_goal_ml, snap.water_percent) == (0, 2000, 0)
    assert (snap.meals, snap.kcal, snap.kcal_goal, snap.kcal_percent, snap.protein_goal) == (0, 0, 2000, 0, None)
    assert (snap.places_visited, snap.tracking) == ([], False)


async def test_snapshot_counts_all_five_modules_on_the_local_day(brain: Brain, user: User) -> None:
    await fill_a_day(brain, user)
    snap = await snapshot_of(brain, user)

    assert snap.day == TODAY
    assert snap.tasks_open == 4 and snap.tasks_done_today == 1 and snap.tasks_overdue == 1
    assert [t.title for t in snap.tasks_due_today] == ["Due high", "Due low"]
    assert snap.tasks_due_today[0].due_date == TODAY and snap.tasks_due_today[0].priority == 3

    # Breakfast is over, the holiday runs all day, the standup and the dentist are ahead.
    assert snap.events_today == 3
    assert [e.title for e in snap.upcoming] == ["Holiday", "Standup", "Dentist"]
    assert snap.next_event is not None and snap.next_event.title == "Holiday"
    assert snap.upcoming[1].start == berlin(TODAY, 17, 30) and not snap.upcoming[1].is_all_day

    assert (snap.water_ml, snap.water_goal_ml, snap.water_percent) == (750, 2000, 38)
    assert (snap.coffee_count, snap.coffee_ml, snap.other_ml) == (2, 300, 200)
    assert (snap.meals, snap.kcal, snap.kcal_goal) == (2, 1051, 1800)
    assert snap.kcal_percent == 58  # 58.39 %
    assert (snap.protein, snap.protein_goal) == (30, 90)
    assert snap.places_visited == ["Café Luna", "Office"]
    assert snap.tracking is True


async def test_only_the_first_five_tasks_due_today_are_listed(brain: Brain, user: User) -> None:
    async with brain.transactions.begin() as uow:
        for n in range(7):
            await todo.create_task(uow, user, USER, f"Task {n}", due_date=TODAY)
    snap = await snapshot_of(brain, user)
    assert [t.title for t in snap.tasks_due_today] == [f"Task {n}" for n in range(5)]
    assert snap.tasks_open == 7


async def test_a_drink_late_last_night_belongs_to_yesterday(brain: Brain, clock: FixedClock, user: User) -> None:
    clock.set(berlin(TODAY - timedelta(days=1), 23, 30))  # 22:30 UTC, already Monday in UTC+2 and later
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, user, USER, "water", 400)
    clock.set(berlin(TODAY, 0, 30))  # Sunday 23:30 UTC, Monday in Berlin
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, user, USER, "water", 300)
    assert (await snapshot_of(brain, user)).water_ml == 300


async def test_snapshot_never_includes_another_persons_data(brain: Brain, user: User) -> None:
    other = await new_user(brain)
    await fill_a_day(brain, other, tag="Other ")
    mine = await snapshot_of(brain, user)
    assert mine == await snapshot_of(brain, await new_user(brain))
    assert (mine.tasks_open, mine.events_today, mine.water_ml, mine.meals, mine.places_visited) == (0, 0, 0, 0, [])
    assert mine.water_goal_ml == 2000 and mine.kcal_goal == 2000 and mine.tracking is False
    theirs = await snapshot_of(brain, other)
    assert all(t.title.startswith("Other ") for t in theirs.tasks_due_today)
    assert theirs.places_visited == ["Other Café Luna", "Other Office"]


async def test_snapshots_of_many_people_match_their_single_snapshots(brain: Brain, user: User) -> None:
    other = await new_user(brain, "America/New_York")
    await fill_a_day(brain, user)
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, other, USER, "water", 330)
    async with brain.transactions.read() as session:
        both = await day_snapshots(session, [user, other], brain.clock.now())
    assert both[user.id] == await snapshot_of(brain, user)
    assert both[other.id] == await snapshot_of(brain, other)
    assert both[other.id].water_ml == 330 and both[other.id].tasks_open == 0


async def test_people_in_two_zones_each_get_their_own_local_day(brain: Brain, clock: FixedClock) -> None:
    berliner, new_yorker = await new_user(brain), await new_user(brain, "America/New_York")
    clock.set(datetime(2026, 12, 1, 3, 0, tzinfo=UTC))  # Tue 04:00 in Berlin, Mon 22:00 in New York
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, berliner, USER, "water", 200)
        await drink.log_drink(uow, new_yorker, USER, "water", 300)
    async with brain.transactions.read() as session:
        snaps = await day_snapshots(session, [berliner, new_yorker], clock.now())
    assert snaps[berliner.id].day == date(2026, 12, 1) and snaps[berliner.id].water_ml == 200
    assert snaps[new_yorker.id].day == date(2026, 11, 30) and snaps[new_yorker.id].water_ml == 300
    clock.advance(timedelta(hours=3))  # Tue 01:00 in New York: yesterday's water no longer counts
    async with brain.transactions.read() as session:
        later = await day_snapshots(session, [berliner, new_yorker], clock.now())
    assert later[new_yorker.id].day == date(2026, 12, 1) and later[new_yorker.id].water_ml == 0
    assert later[berliner.id].water_ml == 200


@contextmanager
def counting_statements(brain: Brain) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(conn: object, cursor: object, statement: str, *rest: object) -> None:
        statements.append(statement)

    engine = brain.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)


async def test_statement_count_is_the_same_for_one_and_for_twenty_people(brain: Brain) -> None:
    people = [await new_user(brain, "America/New_York" if n % 2 else "Europe/Berlin") for n in range(20)]
    for n, person in enumerate(people):
        await fill_a_day(brain, person, tag=f"P{n} ")
    counts = []
    for group in (people[:1], people):
        async with brain.transactions.read() as session:
            await session.execute(text("SELECT 1"))  # check a connection out before counting
            with counting_statements(brain) as statements:
                snaps = await day_snapshots(session, group, brain.clock.now())
        assert len(snaps) == len(group)
        counts.append(len(statements))
    assert counts == [4, 4]  # totals, tasks due today, upcoming events, places
    async with brain.transactions.read() as session:
        snaps = await day_snapshots(session, people, brain.clock.now())
    for n, person in enumerate(people):
        assert snaps[person.id].water_ml == 750
        assert snaps[person.id].places_visited == [f"P{n} Café Luna", f"P{n} Office"]


def test_percent_rounds_half_up() -> None:
    assert [percent(250, 2000), percent(10, 2000), percent(5, 1000), percent(3000, 2000), percent(1, 0)] == [
        13, 1, 1, 150, 0,
    ]


# ---- the cache ---------------------------------------------------------------------------------


async def test_cache_is_attached_to_the_brain_and_serves_a_repeat_read_from_memory(brain: Brain, user: User) -> None:
    assert isinstance(brain.snapshots, SnapshotCache)
    first = await brain.snapshots.get(user)
    with counting_statements(brain) as statements:
        again = await brain.snapshots.get(user)
    assert again is first and statements == []


async def test_cache_shows_a_drink_logged_through_the_tool_executor(brain: Brain, user: User) -> None:
    assert (await brain.snapshots.get(user)).water_ml == 0
    result = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water", "quantity_ml": 300}, USER)
    assert result.ok
    assert (await brain.snapshots.get(user)).water_ml == 300


async def test_another_persons_event_does_not_drop_my_cached_snapshot(brain: Brain, user: User) -> None:
    other = await new_user(brain)
    first = await brain.snapshots.get(user)
    await brain.tools.execute(other.id, "log_drink", {"drink_type": "water"}, USER)
    assert await brain.snapshots.get(user) is first


async def test_cache_recomputes_after_local_midnight(brain: Brain, clock: FixedClock, user: User) -> None:
    await brain.tools.execute(user.id, "log_drink", {"drink_type": "water", "quantity_ml": 500}, USER)
    assert (await brain.snapshots.get(user)).water_ml == 500
    clock.set(berlin(TODAY, 23, 59))
    assert (await brain.snapshots.get(user)).day == TODAY
    clock.set(berlin(TODAY + timedelta(days=1), 0, 1))
    fresh = await brain.snapshots.get(user)
    assert fresh.day == TODAY + timedelta(days=1) and fresh.water_ml == 0


async def test_cache_recomputes_once_an_upcoming_event_has_started(brain: Brain, clock: FixedClock,
                                                                    user: User) -> None:
    async with brain.transactions.begin() as uow:
        await calendar.create_event(uow, user, USER, "Standup", berlin(TODAY, 9), berlin(TODAY, 9, 15))
    assert [e.title for e in (await brain.snapshots.get(user)).upcoming] == ["Standup"]
    clock.set(berlin(TODAY, 9, 1))
    running = await brain.snapshots.get(user)
    assert running.upcoming == [] and [e.title for e in running.running] == ["Standup"]  # going on now
    clock.set(berlin(TODAY, 9, 16))
    assert (await brain.snapshots.get(user)).running == []  # over: the cached snapshot was stale at 9:15


async def test_an_event_during_a_read_keeps_the_result_from_being_cached(brain: Brain, user: User) -> None:
    cache = SnapshotCache(brain)
    stale = await cache.get(user)
    cache.drop(user.id)
    # Simulate an event arriving while a read is in flight: the read's result must not stick.
    cache._reading[user.id] = 1
    cache.drop(user.id)
    cache._reading.pop(user.id)
    assert cache._generation == {user.id: 1}
    assert (await cache.get(user)) == stale
    assert cache._generation == {}


async def test_day_snapshot_tool_returns_json_safe_data(brain: Brain, user: User) -> None:
    await fill_a_day(brain, user)
    result = await brain.tools.execute(user.id, "get_day_snapshot", {}, USER)
    assert result.ok
    data = json.loads(json.dumps(result.data))
    assert data["day"] == "2026-11-30" and data["water_ml"] == 750 and data["tracking"] is True
    assert data["next_event"]["title"] == "Holiday" and data["upcoming"][1]["start"] == "2026-11-30T16:30:00+00:00"
    assert [t["title"] for t in data["tasks_due_today"]] == ["Due high", "Due low"]


async def test_one_persons_snapshot_is_one_statement_and_the_same_as_among_many(brain: Brain, user: User) -> None:
    await fill_a_day(brain, user)
    other = await new_user(brain, "America/New_York")
    await fill_a_day(brain, other, tag="Other ")
    async with brain.transactions.read() as session:
        await session.execute(text("SELECT 1"))  # check a connection out before counting
        with counting_statements(brain) as statements:
            alone = await day_snapshot(session, user, brain.clock.now())
        among = await day_snapshots(session, [other, user], brain.clock.now())
    assert len(statements) == 1
    assert alone == among[user.id]
    assert alone.tasks_due_today and alone.upcoming and alone.places_visited  # the lists, not only the totals
