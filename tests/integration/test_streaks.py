"""Streaks from events, on the person's local dates: growth, status (active / at risk / broken), reset
after a gap, skip days that bridge a gap without touching habit strength, the skip limit, two time zones,
and that an update costs the same few statements however long the history is."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import event, func, select

from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.events.catalog import DomainEvent, StreakDaySkipped
from brain.events.store import EventRecord, query_events
from brain.people.local_time import local_date
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.projections.habit_strength import next_score, score_over
from brain.projections.models import StreakSkip, StreakState
from brain.projections.streaks import (
    NO_PROGRESS,
    StreakView,
    advance,
    record_activity_in,
    skip_allowed,
    status_on,
    streaks_for,
    streaks_for_users,
)
from brain.tools.spec import ToolResult

MONDAY = date(2026, 11, 30)


def day(n: int) -> date:
    return MONDAY + timedelta(days=n)


def local(user: User, d: date, hour: int, minute: int = 0) -> datetime:
    return datetime(d.year, d.month, d.day, hour, minute, tzinfo=ZoneInfo(user.timezone))


async def new_user(brain: Brain, timezone: str = "Europe/Berlin") -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="en",
                                      default_timezone=timezone)


async def water(brain: Brain, user: User, drink_type: str = "water") -> None:
    assert (await brain.tools.execute(user.id, "log_drink", {"drink_type": drink_type}, USER)).ok


async def water_on(brain: Brain, clock: FixedClock, user: User, d: date, hour: int = 9, minute: int = 0) -> None:
    clock.set(local(user, d, hour, minute))
    await water(brain, user)


async def streaks(brain: Brain, user: User) -> dict[str, StreakView]:
    async with brain.transactions.read() as session:
        views = await streaks_for(session, user, local_date(user, brain.clock.now()))
    return {v.streak: v for v in views}


async def skip(brain: Brain, user: User, streak: str = "water", on: date | None = None) -> ToolResult:
    args = {"streak": streak} | ({"date": on.isoformat()} if on else {})
    return await brain.tools.execute(user.id, "skip_streak_day", args, USER)


# ---- pure rules ---------------------------------------------------------------------------------


def test_advance_counts_a_day_once_and_resets_after_a_gap() -> None:
    one = advance(NO_PROGRESS, day(0), set())
    assert (one.current, one.longest, one.last_active) == (1, 1, day(0))
    assert advance(one, day(0), set()) == one
    two = advance(one, day(1), set())
    assert (two.current, two.longest) == (2, 2)
    again = advance(two, day(3), set())
    assert (again.current, again.longest, again.last_active) == (1, 2, day(3))
    assert advance(two, day(3), {day(2)}).current == 3


def test_status_follows_the_local_dates_and_skip_days() -> None:
    assert status_on(None, day(5), set()) == "broken"
    assert status_on(day(5), day(5), set()) == "active"
    assert status_on(day(4), day(5), set()) == "at_risk"
    assert status_on(day(3), day(5), set()) == "broken"
    assert status_on(day(3), day(5), {day(4)}) == "at_risk"
    assert status_on(day(1), day(5), {day(2), day(4)}) == "broken"


def test_skip_allowed_permits_two_in_any_seven_days() -> None:
    assert skip_allowed(set(), day(0))
    assert skip_allowed({day(0)}, day(1))
    assert not skip_allowed({day(0), day(1)}, day(2))
    assert not skip_allowed({day(0), day(6)}, day(3))
    assert skip_allowed({day(0), day(1)}, day(7))
    assert not skip_allowed({day(1), day(7)}, day(4))


# ---- from events ------------------------------------------------------------------------------


async def test_streak_grows_over_local_days_in_berlin(brain: Brain, clock: FixedClock, user: User) -> None:
    await water_on(brain, clock, user, day(0), 8)
    # 00:30 on Tuesday in Berlin is still Monday 23:30 in UTC: it counts for Tuesday.
    await water_on(brain, clock, user, day(1), 0, 30)
    assert clock.now().date() == day(0)
    assert (await streaks(brain, user))["water"].current == 2
    await water_on(brain, clock, user, day(1), 23, 30)  # same local day again: no change
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.longest, view.last_active, view.status) == (2, 2, day(1), "active")
    await water_on(brain, clock, user, day(2), 9)
    assert (await streaks(brain, user))["water"].current == 3


async def state_row(brain: Brain, user: User, streak: str) -> StreakState:
    async with brain.transactions.read() as session:
        row = await session.get(StreakState, (user.id, streak))
    assert row is not None
    return row


async def test_undoing_the_only_drink_of_today_takes_the_day_back(brain: Brain, clock: FixedClock,
                                                                 user: User) -> None:
    await water_on(brain, clock, user, day(0))
    await water_on(brain, clock, user, day(1))
    before = await state_row(brain, user, "water")
    await water_on(brain, clock, user, day(2))
    assert (await streaks(brain, user))["water"].current == 3
    assert (await brain.tools.execute(user.id, "undo_last_drink", {}, USER)).ok
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.longest, view.last_active, view.status) == (2, 2, day(1), "at_risk")
    after = await state_row(brain, user, "water")
    assert (after.strength, after.strength_date) == (before.strength, before.strength_date)
    assert after.prev_current is None  # restored once; an older day is not taken back
    await water_on(brain, clock, user, day(2), 18)  # done again today: the streak goes on as before
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.longest, view.status) == (3, 3, "active")
    assert view.strength == pytest.approx(score_over([True] * 3), abs=1e-12)


async def test_a_take_back_keeps_the_day_while_another_activity_still_counts_it(brain: Brain, clock: FixedClock,
                                                                                 user: User) -> None:
    await water_on(brain, clock, user, day(0))
    await water_on(brain, clock, user, day(1), 8)
    await water_on(brain, clock, user, day(1), 9)
    clock.set(local(user, day(1), 10))
    await water(brain, user, "coffee")  # not water: takes nothing back when undone
    assert (await brain.tools.execute(user.id, "undo_last_drink", {}, USER)).ok
    assert (await brain.tools.execute(user.id, "undo_last_drink", {}, USER)).ok  # one of the two waters
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.last_active, view.status) == (2, day(1), "active")
    assert (await brain.tools.execute(user.id, "undo_last_drink", {}, USER)).ok  # the last water of the day
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.last_active, view.status) == (1, day(0), "at_risk")


async def test_cups_logged_together_and_undone_together_take_the_day_back_once(brain: Brain, clock: FixedClock,
                                                                               user: User) -> None:
    await water_on(brain, clock, user, day(0))
    clock.set(local(user, day(1), 9))
    logged = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water", "count": 2}, USER)
    assert logged.ok
    ids = ",".join(logged.data["entry_ids"])
    assert (await streaks(brain, user))["water"].current == 2
    assert (await brain.tools.execute(user.id, "undo_last_drink", {"entry_ids": ids}, USER)).ok
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.last_active) == (1, day(0))


async def test_an_earlier_days_deletion_leaves_the_streak_as_lived(brain: Brain, clock: FixedClock,
                                                                   user: User) -> None:
    clock.set(local(user, day(0), 12))
    first = await brain.tools.execute(user.id, "log_meal", {"description": "Soup"}, USER)
    clock.set(local(user, day(1), 12))
    assert (await brain.tools.execute(user.id, "log_meal", {"description": "Salad"}, USER)).ok
    assert (await brain.tools.execute(user.id, "delete_meal", {"meal_id": first.data["meal"]["meal_id"]}, USER)).ok
    view = (await streaks(brain, user))["meals"]
    assert (view.current, view.last_active) == (2, day(1))
    assert (await brain.tools.execute(user.id, "delete_meal", {"meal_id": "last"}, USER)).ok
    view = (await streaks(brain, user))["meals"]
    assert (view.current, view.last_active, view.status) == (1, day(0), "at_risk")


async def test_reopening_the_only_task_done_today_takes_the_day_back(brain: Brain, clock: FixedClock,
                                                                     user: User) -> None:
    clock.set(local(user, day(0), 12))
    assert (await brain.tools.execute(user.id, "create_task", {"title": "Call mom"}, USER)).ok
    assert (await brain.tools.execute(user.id, "complete_task", {"task": "Call mom"}, USER)).ok
    assert (await streaks(brain, user))["tasks"].current == 1
    assert (await brain.tools.execute(user.id, "uncomplete_task", {"task": "Call mom"}, USER)).ok
    view = (await streaks(brain, user))["tasks"]
    assert (view.current, view.longest, view.last_active, view.status, view.strength) == (0, 0, None, "broken", 0.0)
    assert (await brain.tools.execute(user.id, "complete_task", {"task": "Call mom"}, USER)).ok  # done after all
    assert (await streaks(brain, user))["tasks"].current == 1


async def test_late_evening_in_new_york_counts_for_that_local_day(brain: Brain, clock: FixedClock) -> None:
    new_yorker = await new_user(brain, "America/New_York")
    await water_on(brain, clock, new_yorker, day(0), 23, 30)  # Tuesday 04:30 in UTC
    assert clock.now().date() == day(1)
    await water_on(brain, clock, new_yorker, day(1), 8)
    view = (await streaks(brain, new_yorker))["water"]
    assert (view.current, view.last_active, view.status) == (2, day(1), "active")


async def test_status_is_active_then_at_risk_then_broken(brain: Brain, clock: FixedClock, user: User) -> None:
    await water_on(brain, clock, user, day(0))
    await water_on(brain, clock, user, day(1))
    assert (await streaks(brain, user))["water"].status == "active"
    clock.set(local(user, day(2), 18))
    at_risk = (await streaks(brain, user))["water"]
    assert (at_risk.status, at_risk.current, at_risk.longest) == ("at_risk", 2, 2)
    clock.set(local(user, day(3), 0, 1))
    broken = (await streaks(brain, user))["water"]
    assert (broken.status, broken.current, broken.longest, broken.last_active) == ("broken", 0, 2, day(1))


async def test_streak_resets_to_one_after_a_gap(brain: Brain, clock: FixedClock, user: User) -> None:
    for n in range(3):
        await water_on(brain, clock, user, day(n))
    await water_on(brain, clock, user, day(5))
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.longest, view.status) == (1, 3, "active")


async def test_only_qualifying_events_count_and_streaks_are_independent(brain: Brain, clock: FixedClock,
                                                                      user: User) -> None:
    clock.set(local(user, day(0), 12))
    await water(brain, user, "coffee")
    views = await streaks(brain, user)
    assert [v.streak for v in views.values()] == ["water", "tasks", "meals"]
    assert all((v.current, v.longest, v.last_active, v.status, v.strength) == (0, 0, None, "broken", 0.0)
               for v in views.values())
    assert (await brain.tools.execute(user.id, "log_meal", {"description": "Soup"}, USER)).ok
    created = await brain.tools.execute(user.id, "create_task", {"title": "Call mom"}, USER)
    assert created.ok
    assert (await brain.tools.execute(user.id, "complete_task", {"task": "Call mom"}, USER)).ok
    views = await streaks(brain, user)
    assert (views["water"].current, views["tasks"].current, views["meals"].current) == (0, 1, 1)


async def test_strength_grows_incrementally_as_loops_formula_says(brain: Brain, clock: FixedClock,
                                                                 user: User) -> None:
    for n in range(31):
        await water_on(brain, clock, user, day(n))
    view = (await streaks(brain, user))["water"]
    assert view.current == 31
    assert view.strength == pytest.approx(score_over([True] * 31), abs=1e-12)
    assert 0.79 < view.strength < 0.81


async def test_strength_decays_on_read_without_writing(brain: Brain, clock: FixedClock, user: User) -> None:
    await water_on(brain, clock, user, day(0))
    clock.set(local(user, day(14), 12))  # 13 whole days without water since
    view = (await streaks(brain, user))["water"]
    assert view.strength == pytest.approx(next_score(0.0, True) / 2, abs=1e-12)
    async with brain.transactions.read() as session:
        stored = await session.scalar(select(StreakState).where(StreakState.user_id == user.id))
    assert stored is not None and stored.strength == pytest.approx(next_score(0.0, True), abs=1e-12)
    await water_on(brain, clock, user, day(14))
    expected = score_over([True, *([False] * 13), True])
    assert (await streaks(brain, user))["water"].strength == pytest.approx(expected, abs=1e-12)


async def test_skip_day_bridges_a_gap_and_leaves_strength_unchanged(brain: Brain, clock: FixedClock,
                                                                     user: User) -> None:
    await water_on(brain, clock, user, day(0))
    await water_on(brain, clock, user, day(1))
    clock.set(local(user, day(2), 18))
    before = (await streaks(brain, user))["water"]
    result = await skip(brain, user)
    assert result.ok, result
    skipped = (await streaks(brain, user))["water"]
    assert skipped.skipped_today and skipped.status == "at_risk" and skipped.current == 2
    clock.set(local(user, day(3), 7))
    next_morning = (await streaks(brain, user))["water"]
    assert (next_morning.status, next_morning.current, next_morning.skipped_today) == ("at_risk", 2, False)
    assert next_morning.strength == pytest.approx(before.strength, abs=1e-15)
    await water_on(brain, clock, user, day(3))
    after = (await streaks(brain, user))["water"]
    assert (after.current, after.longest, after.status) == (3, 3, "active")
    assert after.strength == pytest.approx(score_over([True, True, None, True]), abs=1e-12)
    events = await query_events_of(brain, user)
    assert [e.payload for e in events] == [StreakDaySkipped(streak="water", date=day(2))]


async def query_events_of(brain: Brain, user: User) -> list[DomainEvent]:
    async with brain.transactions.read() as session:
        return await query_events(session, user.id, types="StreakDaySkipped")


async def test_a_skipped_yesterday_keeps_the_streak_at_risk_instead_of_broken(brain: Brain, clock: FixedClock,
                                                                             user: User) -> None:
    await water_on(brain, clock, user, day(0))
    clock.set(local(user, day(2), 10))
    assert (await streaks(brain, user))["water"].status == "broken"
    assert (await skip(brain, user, on=day(1))).ok
    view = (await streaks(brain, user))["water"]
    assert (view.status, view.current) == ("at_risk", 1)


async def test_at_most_two_skip_days_per_streak_in_seven_days(
    brain: Brain, clock: FixedClock, db_counts: Callable[[], Awaitable[tuple[int, ...]]], user: User
) -> None:
    await water_on(brain, clock, user, day(0))
    assert (await skip(brain, user, on=day(1))).ok
    assert (await skip(brain, user, on=day(2))).ok
    before = await db_counts()
    refused = await skip(brain, user, on=day(3))
    assert not refused.ok and refused.error_code == "skip_limit"
    assert refused.message is not None and "At most {max} skip days" in refused.message.msgid
    assert await db_counts() == before
    assert (await skip(brain, user, "meals", on=day(3))).ok  # each streak has its own allowance
    assert (await skip(brain, user, on=day(2))).error_code == "already_skipped"


async def test_a_skip_day_done_after_all_is_given_back(brain: Brain, clock: FixedClock, user: User) -> None:
    await water_on(brain, clock, user, day(0))
    clock.set(local(user, day(1), 8))
    assert (await skip(brain, user)).ok  # today, planned as a day off
    assert (await streaks(brain, user))["water"].skipped_today
    await water_on(brain, clock, user, day(1), 20)  # done after all
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.status, view.skipped_today) == (2, "active", False)
    async with brain.transactions.read() as session:
        assert (await session.scalars(select(StreakSkip.day).where(StreakSkip.user_id == user.id))).all() == []
    assert (await skip(brain, user, on=day(2))).ok and (await skip(brain, user, on=day(3))).ok  # both still free


async def test_skipping_a_day_that_already_counts_is_refused(brain: Brain, clock: FixedClock, user: User) -> None:
    await water_on(brain, clock, user, day(0))
    assert (await skip(brain, user)).error_code == "already_active"
    assert (await skip(brain, user, on=day(-1))).error_code == "too_late"
    assert (await skip(brain, user, on=day(30))).error_code == "out_of_range"
    assert (await skip(brain, user, "sleep")).error_code == "bad_enum"


async def test_two_people_in_two_zones_at_the_same_instant_get_their_own_day(brain: Brain,
                                                                            clock: FixedClock) -> None:
    berliner, new_yorker = await new_user(brain), await new_user(brain, "America/New_York")
    clock.set(datetime(2026, 12, 1, 3, 0, tzinfo=UTC))  # Tue 04:00 in Berlin, Mon 22:00 in New York
    await water(brain, berliner)
    await water(brain, new_yorker)
    todays = {u.id: local_date(u, clock.now()) for u in (berliner, new_yorker)}
    assert todays == {berliner.id: day(1), new_yorker.id: day(0)}
    async with brain.transactions.read() as session:
        views = await streaks_for_users(session, [berliner, new_yorker], todays)
    assert views[berliner.id][0].last_active == day(1) and views[berliner.id][0].status == "active"
    assert views[new_yorker.id][0].last_active == day(0) and views[new_yorker.id][0].status == "active"
    clock.set(datetime(2026, 12, 1, 12, 0, tzinfo=UTC))  # Tuesday in both zones
    await water(brain, new_yorker)
    assert (await streaks(brain, new_yorker))["water"].current == 2
    assert (await streaks(brain, berliner))["water"].current == 1


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


async def test_streaks_for_users_is_one_query(brain: Brain, clock: FixedClock) -> None:
    people = [await new_user(brain, "America/New_York" if n % 2 else "Europe/Berlin") for n in range(10)]
    for person in people:
        await water(brain, person)
    todays = {p.id: local_date(p, clock.now()) for p in people}
    async with brain.transactions.read() as session:
        await session.execute(select(1))  # check a connection out before counting
        with counting_statements(brain) as statements:
            views = await streaks_for_users(session, people, todays)
    assert len(statements) == 1
    assert all(views[p.id][0].current == 1 for p in people)


async def test_an_update_costs_the_same_statements_after_a_long_history(brain: Brain, clock: FixedClock,
                                                                       user: User) -> None:
    costs = []
    for n in range(40):
        with counting_statements(brain) as statements:
            await water_on(brain, clock, user, day(n))
        costs.append(len([s for s in statements if "streak" in s]))
    # A look at the one state row, then lock and update it: no re-scan of the 40 days before.
    assert costs[1] == costs[39] == 3
    assert (await streaks(brain, user))["water"].current == 40


async def test_a_day_already_counted_costs_one_unlocked_read_and_no_transaction(brain: Brain, clock: FixedClock,
                                                                                 user: User) -> None:
    await water_on(brain, clock, user, day(0), hour=9)
    commits: list[object] = []
    engine = brain.db.engine.sync_engine

    def committed(conn: object) -> None:
        commits.append(conn)

    event.listen(engine, "commit", committed)
    try:
        with counting_statements(brain) as statements:
            await water_on(brain, clock, user, day(0), hour=15)
    finally:
        event.remove(engine, "commit", committed)
    streak_statements = [s for s in statements if "streak" in s]
    assert len(streak_statements) == 1 and "FOR UPDATE" not in streak_statements[0]
    assert len(commits) == 1  # the drink's own transaction only
    view = (await streaks(brain, user))["water"]
    assert (view.current, view.last_active) == (1, day(0))
    # The next day still advances it (through the locked path).
    await water_on(brain, clock, user, day(1))
    assert (await streaks(brain, user))["water"].current == 2


async def test_counting_for_a_person_who_is_gone_creates_no_state(brain: Brain, clock: FixedClock) -> None:
    gone = uuid.uuid4()
    async with brain.transactions.begin() as uow:
        assert await record_activity_in(uow, gone, "Europe/Berlin", "water", clock.now()) is None
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(StreakState)
                                    .where(StreakState.user_id == gone)) == 0


@pytest.fixture
def db_counts(brain: Brain) -> Callable[[], Awaitable[tuple[int, ...]]]:
    async def counts() -> tuple[int, ...]:
        async with brain.transactions.read() as session:
            return tuple([int(await session.scalar(select(func.count()).select_from(t)) or 0)
                          for t in (StreakState, StreakSkip, EventRecord)])

    return counts


async def test_get_streaks_tool_returns_every_streak_as_json_safe_data(brain: Brain, clock: FixedClock,
                                                                      user: User) -> None:
    await water_on(brain, clock, user, day(0))
    result = await brain.tools.execute(user.id, "get_streaks", {}, USER)
    assert result.ok
    data = json.loads(json.dumps(result.data))
    assert [s["streak"] for s in data["streaks"]] == ["water", "tasks", "meals"]
    assert data["streaks"][0] | {"strength": 0} == {
        "streak": "water", "current": 1, "longest": 1, "last_active": "2026-11-30", "status": "active",
        "strength": 0, "skipped_today": False,
    }
    assert data["streaks"][0]["strength"] == pytest.approx(0.0519, abs=1e-4)
