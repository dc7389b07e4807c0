"""Goals over the real database and bus: periods roll over by the person's local day, week (from
Monday) and month, GoalReached comes exactly once per period, `<=` goals are judged only when the
period closes, undo and deletes take back what they counted, pause/resume/abandon, history, and
one person never sees another's goals. Bad input changes nothing."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from brain.core import Brain
from brain.errors import DomainError
from brain.events.actor import USER
from brain.events.catalog import DomainEvent
from brain.events.store import EventRecord, query_events
from brain.goals import service
from brain.goals.models import Goal, GoalPeriod
from brain.goals.rollover import close_periods
from brain.goals.service import GoalProgress, goal_history, goals_progress
from brain.people.models import User
from brain.people.service import resolve_identity

# The clock fixture stands at Monday 2026-11-30, 08:30 in Berlin.
MONDAY = date(2026, 11, 30)


async def run(brain: Brain, user: User, tool: str, **args: Any) -> dict[str, Any]:
    result = await brain.tools.execute(user.id, tool, args, USER)
    assert result.ok, (tool, result.message)
    return result.data


async def water(brain: Brain, user: User, times: int = 1, ml: int = 250) -> None:
    for _ in range(times):
        await run(brain, user, "log_drink", drink_type="water", quantity_ml=ml)


async def template(brain: Brain, user: User, template_id: str) -> Goal:
    async with brain.transactions.begin() as uow:
        return await service.create_from_template(uow, user, USER, template_id)


async def custom(brain: Brain, user: User, **spec: Any) -> Goal:
    async with brain.transactions.begin() as uow:
        return await service.create_goal(uow, user, USER, **spec)


async def progress(brain: Brain, user: User) -> list[GoalProgress]:
    async with brain.transactions.read() as session:
        return await goals_progress(session, user, brain.clock.now())


async def one_progress(brain: Brain, user: User) -> GoalProgress:
    [only] = await progress(brain, user)
    return only


async def reached(brain: Brain, user: User) -> list[DomainEvent]:
    async with brain.transactions.read() as session:
        return list(reversed(await query_events(session, user.id, types="GoalReached")))


async def counts(brain: Brain) -> tuple[int, int, int]:
    async with brain.transactions.read() as session:
        return (
            int(await session.scalar(select(func.count()).select_from(Goal)) or 0),
            int(await session.scalar(select(func.count()).select_from(GoalPeriod)) or 0),
            int(await session.scalar(select(func.count()).select_from(EventRecord)) or 0),
        )


async def other_person(brain: Brain, timezone: str = "Europe/Berlin") -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"o-{uuid.uuid4()}", default_locale="de",
                                      default_timezone=timezone)


def berlin(day: date, hour: int, minute: int = 0) -> datetime:
    from zoneinfo import ZoneInfo

    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZoneInfo("Europe/Berlin"))


# ---- reaching a goal ----------------------------------------------------------------------------


async def test_water_template_is_reached_once_a_day_and_again_the_next_day(brain: Brain, user, clock) -> None:
    goal = await template(brain, user, "water_8_glasses")
    assert goal.title.startswith("8 glasses of water a day")
    await water(brain, user, 7)
    await run(brain, user, "log_drink", drink_type="coffee")  # the filter: coffee is no glass of water
    assert (await one_progress(brain, user)).value == 7
    assert await reached(brain, user) == []

    await water(brain, user)
    await water(brain, user, 3)  # more after reaching it: still one GoalReached today
    events = await reached(brain, user)
    assert len(events) == 1
    event = events[0]
    assert event.payload.value == 8 and event.payload.target == 8  # type: ignore[attr-defined]
    assert event.payload.period == "day" and event.payload.period_start == MONDAY  # type: ignore[attr-defined]
    assert event.meta.record_id == str(goal.id)
    assert event.meta.actor.kind == "system" and event.meta.actor.source == "goal-tracker"  # type: ignore[union-attr]
    async with brain.transactions.read() as session:
        eighth = (await query_events(session, user.id, types="DrinkLogged", limit=12))[::-1][8]
    assert event.meta.caused_by == eighth.meta.id  # the 8th water, after the coffee
    now = await one_progress(brain, user)
    assert now.value == 11 and now.reached and now.period_start == MONDAY

    clock.set(berlin(MONDAY + timedelta(days=1), 9))
    fresh = await one_progress(brain, user)
    assert fresh.value == 0 and not fresh.reached and fresh.period_start == MONDAY + timedelta(days=1)
    await water(brain, user, 8)
    events = await reached(brain, user)
    assert [e.payload.period_start for e in events] == [MONDAY, MONDAY + timedelta(days=1)]  # type: ignore[attr-defined]


async def test_concurrent_events_reach_a_goal_exactly_once(brain: Brain, user) -> None:
    await custom(brain, user, title="Three waters", metric="event_count", event_type="DrinkLogged",
                 filter_field="drink_type", filter_value="water", target=3, period="day", comparison=">=")
    await asyncio.gather(*(water(brain, user) for _ in range(8)))
    assert (await one_progress(brain, user)).value == 8
    assert len(await reached(brain, user)) == 1


async def test_an_exact_goal_is_reached_when_the_value_hits_the_target(brain: Brain, user) -> None:
    await custom(brain, user, title="Exactly three meals", metric="event_count", event_type="MealLogged", target=3,
                 period="day", comparison="=")
    for meal in ("Muesli", "Soup", "Pasta"):
        await run(brain, user, "log_meal", description=meal)
    assert len(await reached(brain, user)) == 1
    await run(brain, user, "log_meal", description="Cake")
    assert len(await reached(brain, user)) == 1


async def test_a_goal_made_later_in_the_day_counts_what_was_already_logged(brain: Brain, user) -> None:
    await water(brain, user, 3)
    await run(brain, user, "undo_last_drink")
    await run(brain, user, "log_drink", drink_type="coffee")
    goal = await template(brain, user, "water_8_glasses")
    assert (await one_progress(brain, user)).value == 2
    # (A second goal on waters a day would be refused as a duplicate of the first: see the test below.)
    await custom(brain, user, title="Two waters a week", metric="event_count", event_type="DrinkLogged",
                 filter_field="drink_type", filter_value="water", target=2, period="week", comparison=">=")
    [event] = await reached(brain, user)  # already reached when made
    assert event.payload.title == "Two waters a week" and event.payload.value == 2  # type: ignore[attr-defined]
    assert goal.id != event.payload.goal_id  # type: ignore[attr-defined]


async def test_a_second_goal_on_the_same_measure_in_the_same_direction_is_refused(brain: Brain, user) -> None:
    first = dict(metric="event_sum", event_type="DrinkLogged", field="quantity_ml", filter_field="drink_type",
                 filter_value="water", period="day", comparison=">=")
    await custom(brain, user, title="At least 2 l of water a day", target=2000, **first)
    with pytest.raises(DomainError, match=r"You already have a goal on this: \{title\}\. Stop it first") as refused:
        await custom(brain, user, title="At least 1.5 l of water a day", target=1500, **first)
    assert refused.value.text.params["title"] == "At least 2 l of water a day"
    # The other direction, or another period, is another goal: a range, or a week's total.
    await custom(brain, user, title="At most 3 l of water a day", target=3000, **{**first, "comparison": "<="})
    await custom(brain, user, title="At least 10 l of water a week", target=10000, **{**first, "period": "week"})


# ---- periods ------------------------------------------------------------------------------------


async def test_a_weekly_goal_runs_from_monday_to_sunday_in_the_persons_zone(brain: Brain, user, clock) -> None:
    await template(brain, user, "places_3_new")
    for name, when in (("Café Luna", berlin(MONDAY, 10)), ("Gym", berlin(MONDAY + timedelta(days=3), 18)),
                       ("Park", berlin(MONDAY + timedelta(days=6), 23, 30))):  # Sunday 23:30 local = 22:30 UTC
        clock.set(when)
        await run(brain, user, "create_place", name=name)
    [event] = await reached(brain, user)
    assert event.payload.period == "week" and event.payload.period_start == MONDAY  # type: ignore[attr-defined]

    clock.set(berlin(MONDAY + timedelta(days=7), 0, 30))  # Monday 00:30 local, still Sunday in UTC
    assert clock.now().date() == MONDAY + timedelta(days=6)
    await run(brain, user, "create_place", name="Library")
    now = await one_progress(brain, user)
    assert now.period_start == MONDAY + timedelta(days=7) and now.value == 1 and not now.reached


async def test_a_weekly_goal_in_the_week_when_summer_time_ends(brain: Brain, user, clock) -> None:
    clock.set(berlin(date(2026, 10, 19), 9))  # Monday of the week that ends with the switch on Sunday the 25th
    await custom(brain, user, title="Two tasks a week", metric="event_count", event_type="TaskCompleted", target=2,
                 period="week", comparison=">=")
    first = await run(brain, user, "create_task", title="Before the switch")
    clock.set(datetime(2026, 10, 25, 22, 30, tzinfo=UTC))  # Sunday 23:30 CET, after the clocks went back
    await run(brain, user, "complete_task", task=first["id"])
    second = await run(brain, user, "create_task", title="Just after midnight")
    clock.set(datetime(2026, 10, 25, 23, 30, tzinfo=UTC))  # Monday 00:30 CET: the next week
    await run(brain, user, "complete_task", task=second["id"])
    async with brain.transactions.read() as session:
        [goal] = (await session.scalars(select(Goal))).all()
        history = await goal_history(session, user, goal.id)
    assert [(h.period_start, h.value) for h in history] == [(date(2026, 10, 26), 1), (date(2026, 10, 19), 1)]
    assert await reached(brain, user) == []


async def test_a_monthly_goal_starts_over_on_the_first(brain: Brain, user, clock) -> None:
    await custom(brain, user, title="Two tasks a month", metric="event_count", event_type="TaskCompleted",
                 target=2, period="month", comparison=">=")
    task = await run(brain, user, "create_task", title="November")
    await run(brain, user, "complete_task", task=task["id"])
    clock.set(berlin(date(2026, 12, 1), 0, 10))  # still November 30th in UTC
    task = await run(brain, user, "create_task", title="December")
    await run(brain, user, "complete_task", task=task["id"])
    now = await one_progress(brain, user)
    assert (now.period_start, now.period_end, now.value) == (date(2026, 12, 1), date(2027, 1, 1), 1)
    assert await reached(brain, user) == []


# ---- `<=` goals and the roll-over job -----------------------------------------------------------


async def test_an_at_most_goal_is_reached_only_when_its_day_is_over(brain: Brain, user, clock) -> None:
    goal = await template(brain, user, "coffee_max_3")
    for _ in range(2):
        await run(brain, user, "log_drink", drink_type="coffee")
    assert await reached(brain, user) == []  # under the limit, but the day is not over
    assert (await close_periods(brain, clock.now())).closed == 0  # nothing has ended yet

    clock.set(berlin(MONDAY + timedelta(days=1), 0, 5))
    roll = await close_periods(brain, clock.now())
    assert (roll.closed, roll.reached, roll.opened) == (1, 1, 1)
    [event] = await reached(brain, user)
    assert event.payload.value == 2 and event.payload.period_start == MONDAY  # type: ignore[attr-defined]
    assert event.meta.actor.kind == "system"
    again = await close_periods(brain, clock.now())
    assert (again.closed, again.reached, again.opened) == (0, 0, 0)  # a second run changes nothing

    for _ in range(4):  # Tuesday: over the limit
        await run(brain, user, "log_drink", drink_type="coffee")
    assert len(await reached(brain, user)) == 1  # exceeding it emits nothing
    clock.set(berlin(MONDAY + timedelta(days=2), 0, 5))
    assert (await close_periods(brain, clock.now())).reached == 0
    assert len(await reached(brain, user)) == 1

    clock.set(berlin(MONDAY + timedelta(days=3), 0, 5))  # Wednesday had no coffee at all: within the limit
    assert (await close_periods(brain, clock.now())).reached == 1
    async with brain.transactions.read() as session:
        history = await goal_history(session, user, goal.id)
    assert [(h.period_start.day, h.value, h.reached, h.closed) for h in history] == [
        (3, 0, False, False), (2, 0, True, True), (1, 4, False, True), (30, 2, True, True),
    ]


async def test_a_kcal_limit_sums_calories_and_a_deleted_meal_takes_its_calories_back(
    brain: Brain, user, clock
) -> None:
    await template(brain, user, "kcal_max_2000")
    await run(brain, user, "log_meal", description="Pasta", kcal=1200)
    cake = await run(brain, user, "log_meal", description="Cake", kcal=1100)
    await run(brain, user, "log_meal", description="Apple")  # no calories: adds nothing
    assert (await one_progress(brain, user)).value == 2300
    await run(brain, user, "delete_meal", meal_id=cake["meal"]["meal_id"])  # MealDeleted carries no calories
    assert (await one_progress(brain, user)).value == 1200
    clock.set(berlin(MONDAY + timedelta(days=1), 1))
    await close_periods(brain, clock.now())
    [event] = await reached(brain, user)
    assert event.payload.value == 1200  # type: ignore[attr-defined]


# ---- taking back, pausing, stopping -------------------------------------------------------------


async def test_undo_and_delete_of_a_drink_lower_the_value(brain: Brain, user) -> None:
    await template(brain, user, "water_8_glasses")
    await water(brain, user, 3)
    await run(brain, user, "undo_last_drink")
    assert (await one_progress(brain, user)).value == 2
    await run(brain, user, "log_drink", drink_type="coffee")
    await run(brain, user, "undo_last_drink")  # the coffee never counted, so nothing is taken back
    assert (await one_progress(brain, user)).value == 2
    async with brain.transactions.read() as session:
        # Newest first: the coffee, the undone third water, then the second water.
        latest_water = (await query_events(session, user.id, types="DrinkLogged", limit=5))[2]
    await run(brain, user, "delete_drink", entry_id=str(latest_water.payload.entry_id))  # type: ignore[attr-defined]
    assert (await one_progress(brain, user)).value == 1


async def test_a_reopened_task_no_longer_counts_and_counts_again_when_done(brain: Brain, user) -> None:
    await template(brain, user, "tasks_5")
    task = await run(brain, user, "create_task", title="Call mom")
    await run(brain, user, "complete_task", task=task["id"])
    await run(brain, user, "uncomplete_task", task=task["id"])
    assert (await one_progress(brain, user)).value == 0
    await run(brain, user, "complete_task", task=task["id"])
    assert (await one_progress(brain, user)).value == 1


async def test_pause_stops_tracking_and_resume_continues(brain: Brain, user) -> None:
    await template(brain, user, "water_8_glasses")
    await water(brain, user, 2)
    async with brain.transactions.begin() as uow:
        paused = await service.pause_goal(uow, user, USER, "1")
    assert paused.status == "paused"
    await water(brain, user, 3)
    now = await one_progress(brain, user)
    assert (now.status, now.value) == ("paused", 2)
    with pytest.raises(DomainError):
        async with brain.transactions.begin() as uow:
            await service.pause_goal(uow, user, USER, "water")
    async with brain.transactions.begin() as uow:
        await service.resume_goal(uow, user, USER, "glasses of water")
    await water(brain, user)
    now = await one_progress(brain, user)
    assert (now.status, now.value) == ("active", 3)
    async with brain.transactions.read() as session:
        types = [e.type for e in await query_events(session, user.id, module="goals")]
    assert types == ["GoalResumed", "GoalPaused", "GoalCreated"]


async def test_a_paused_at_most_goal_is_not_judged_at_roll_over(brain: Brain, user, clock) -> None:
    await template(brain, user, "coffee_max_3")
    async with brain.transactions.begin() as uow:
        await service.pause_goal(uow, user, USER, "1")
    clock.set(berlin(MONDAY + timedelta(days=1), 1))
    roll = await close_periods(brain, clock.now())
    assert (roll.closed, roll.reached, roll.opened) == (1, 0, 0)
    assert await reached(brain, user) == []


async def test_abandon_ends_tracking_and_keeps_the_history(brain: Brain, user, clock) -> None:
    goal = await template(brain, user, "water_8_glasses")
    await water(brain, user, 8)
    clock.set(berlin(MONDAY + timedelta(days=1), 9))
    await water(brain, user, 2)
    async with brain.transactions.begin() as uow:
        await service.abandon_goal(uow, user, USER, str(goal.id))
    await water(brain, user, 5)
    assert await progress(brain, user) == []
    async with brain.transactions.read() as session:
        history = await goal_history(session, user, goal.id)
    assert [(h.period_start.day, h.value, h.reached, h.closed) for h in history] == [
        (1, 2, False, True), (30, 8, True, True),  # stopping closes whatever was still open
    ]
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.resume_goal(uow, user, USER, str(goal.id))
    assert refused.value.code == "not_paused"
    # A stopped template can be started again.
    await template(brain, user, "water_8_glasses")
    assert (await one_progress(brain, user)).value == 7


async def test_history_keeps_past_periods_newest_first(brain: Brain, user, clock) -> None:
    goal = await template(brain, user, "meals_3")
    for day_offset, meals in enumerate((3, 1, 2)):
        clock.set(berlin(MONDAY + timedelta(days=day_offset), 12))
        await close_periods(brain, clock.now())
        for index in range(meals):
            await run(brain, user, "log_meal", description=f"Meal {index}")
    async with brain.transactions.read() as session:
        history = await goal_history(session, user, goal.id)
        latest_two = await goal_history(session, user, goal.id, limit=2)
    assert [(h.period_start.day, h.value, h.reached, h.closed) for h in history] == [
        (2, 2, False, False), (1, 1, False, True), (30, 3, True, True),
    ]
    assert latest_two == history[:2]


async def test_a_streak_goal_follows_the_water_streak(brain: Brain, user, clock) -> None:
    await custom(brain, user, title="Water 3 days in a row", metric="streak_days", event_type="DrinkLogged",
                 field="water", target=3, period="day", comparison=">=")
    for day_offset in range(3):
        clock.set(berlin(MONDAY + timedelta(days=day_offset), 9))
        await water(brain, user)
        assert (await one_progress(brain, user)).value == day_offset + 1
    [event] = await reached(brain, user)
    assert event.payload.value == 3 and event.payload.period_start == MONDAY + timedelta(days=2)  # type: ignore[attr-defined]


async def test_a_streak_goal_follows_an_undone_drink(brain: Brain, user, clock) -> None:
    await custom(brain, user, title="Water 2 days in a row", metric="streak_days", event_type="DrinkLogged",
                 field="water", target=5, period="day", comparison=">=")
    clock.set(berlin(MONDAY, 9))
    await water(brain, user)
    clock.set(berlin(MONDAY + timedelta(days=1), 9))
    await water(brain, user)
    assert (await one_progress(brain, user)).value == 2
    await run(brain, user, "undo_last_drink")
    assert (await one_progress(brain, user)).value == 1  # Monday's streak, at risk until Tuesday ends


# ---- people apart, and refusals -----------------------------------------------------------------


async def test_two_people_never_see_each_others_goals(brain: Brain, user) -> None:
    mine = await template(brain, user, "water_8_glasses")
    other = await other_person(brain)
    theirs = await template(brain, other, "water_8_glasses")
    assert theirs.title.startswith("8 Gläser") or theirs.title.startswith("8 glasses")  # in their language
    await water(brain, other, 8)
    assert (await one_progress(brain, user)).value == 0
    assert (await one_progress(brain, other)).value == 8
    assert await reached(brain, user) == [] and len(await reached(brain, other)) == 1
    listed = await run(brain, user, "list_goals")
    assert [g["id"] for g in listed["goals"]] == [str(mine.id)]
    for attempt in (service.pause_goal, service.abandon_goal):
        with pytest.raises(DomainError) as refused:
            async with brain.transactions.begin() as uow:
                await attempt(uow, user, USER, str(theirs.id))
        assert refused.value.code == "not_found"
    with pytest.raises(DomainError):
        async with brain.transactions.read() as session:
            await goal_history(session, user, theirs.id)
    result = await brain.tools.execute(user.id, "abandon_goal", {"goal": str(theirs.id)}, USER)
    assert not result.ok
    assert (await one_progress(brain, other)).status == "active"


async def test_people_in_two_zones_have_their_own_day(brain: Brain, user, clock) -> None:
    other = await other_person(brain, "America/New_York")
    for person in (user, other):
        await template(brain, person, "tasks_5")
    clock.set(datetime(2026, 12, 1, 3, 0, tzinfo=UTC))  # Tuesday 04:00 in Berlin, still Monday 22:00 in New York
    assert (await one_progress(brain, user)).period_start == date(2026, 12, 1)
    assert (await one_progress(brain, other)).period_start == date(2026, 11, 30)
    roll = await close_periods(brain, clock.now())
    assert (roll.closed, roll.opened) == (1, 1)  # only Berlin's day has ended


@pytest.mark.parametrize(("spec", "code"), [
    ({"target": -1}, "out_of_range"),
    ({"target": 0}, "out_of_range"),
    ({"target": float("nan")}, "bad_type"),
    ({"event_type": "DrinkSpilled"}, "bad_enum"),
    ({"metric": "vibes"}, "bad_enum"),
    ({"period": "year"}, "bad_enum"),
    ({"comparison": "<"}, "bad_enum"),
    ({"title": "   "}, "empty"),
    ({"metric": "event_sum"}, "bad_field"),  # a sum needs a field
    ({"metric": "event_sum", "field": "drink_type"}, "bad_field"),  # ... and a numeric one
    ({"field": "quantity_ml"}, "bad_field"),  # a count takes no field
    ({"filter_field": "drink_type"}, "bad_filter"),  # a filter needs a value
    ({"filter_field": "colour", "filter_value": "red"}, "bad_filter"),
    ({"metric": "streak_days", "field": "sleep"}, "bad_enum"),
    ({"metric": "streak_days", "field": "water", "comparison": "<="}, "bad_comparison"),
    ({"template": "water_9000"}, "bad_enum"),
    # Beyond what its measure can mean, however the filter is written (the model may write "Water").
    ({"filter_field": "drink_type", "filter_value": "Water", "target": 81}, "out_of_range"),
    ({"filter_field": "drink_type", "filter_value": "water", "target": 81 * 7, "period": "week"}, "out_of_range"),
])
async def test_bad_goal_definitions_change_nothing(brain: Brain, user, spec: dict[str, Any], code: str) -> None:
    before = await counts(brain)
    base: dict[str, Any] = {"title": "Water", "metric": "event_count", "event_type": "DrinkLogged", "target": 8,
                            "period": "day", "comparison": ">="}
    with pytest.raises(DomainError) as refused:
        await custom(brain, user, **(base | spec))
    assert refused.value.code == code
    assert await counts(brain) == before


async def test_bad_input_through_the_tools_changes_nothing(brain: Brain, user) -> None:
    await template(brain, user, "water_8_glasses")
    before = await counts(brain)
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("create_goal_from_template", {"template": "water_9000"}),
        ("create_goal_from_template", {"template": "water_8_glasses"}),  # already there
        ("create_goal", {"title": "Less", "metric": "event_count", "event_type": "DrinkLogged", "target": -3}),
        ("create_goal", {"title": "Odd", "metric": "event_count", "event_type": "Sneezed", "target": 3}),
        ("pause_goal", {"goal": "7"}),
        ("resume_goal", {"goal": "1"}),  # it is not paused
        ("abandon_goal", {"goal": "no such goal"}),
    ]
    for tool, args in attempts:
        result = await brain.tools.execute(user.id, tool, args, USER)
        assert not result.ok, tool
    assert await counts(brain) == before


async def test_at_least_ten_templates_each_make_a_goal_that_counts(brain: Brain, user, clock) -> None:
    from brain.goals.templates import TEMPLATES

    assert len(TEMPLATES) >= 10
    for template_id in TEMPLATES:  # all at once: no two measure the same thing the same way
        await template(brain, user, template_id)
    clock.set(berlin(MONDAY, 9))
    await water(brain, user, times=2, ml=500)
    values = {p.title: p.value for p in await progress(brain, user)}
    assert len(values) == len(TEMPLATES)
    assert values["At least 2,000 ml of water a day"] == 1000
    assert values["8 glasses of water a day (each water you log counts as one)"] == 2
    assert values["Water 7 days in a row"] == 1
