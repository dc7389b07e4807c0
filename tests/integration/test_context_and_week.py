"""The context document and the week series over the real database: what a logged day looks like to
the language model (within its budget), and the seven days behind /week, including streak lengths
with a skip day and a chart of the promised size."""

from __future__ import annotations

import struct
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.commands.week import week_in_words
from brain.clock import FixedClock
from brain.context import context_document, estimate_tokens
from brain.core import Brain
from brain.events.actor import USER
from brain.goals import service as goals
from brain.i18n import Renderer
from brain.modules.calendar import service as calendar
from brain.modules.drink import service as drink
from brain.modules.food import service as food
from brain.modules.todo import service as todo
from brain.people.models import User
from brain.projections import streaks
from brain.projections.week import WeekSeries, render_week_chart, week_series

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 11, 30)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=BERLIN)


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_SIGNATURE and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


async def test_context_document_describes_a_logged_day(brain: Brain, clock: FixedClock, user: User) -> None:
    clock.set(at(MONDAY, 8, 30))
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, user, USER, "water", 500)
        await food.log_meal(uow, user, USER, "porridge", kcal=350, meal_type="breakfast")
        await todo.create_task(uow, user, USER, "Send the invoice", due_date=MONDAY, priority=2)
        await todo.create_task(uow, user, USER, "Renew passport", due_date=MONDAY - timedelta(days=2))
        await calendar.create_event(uow, user, USER, "Dentist", at(MONDAY, 14), at(MONDAY, 15))

    text = await context_document(brain, user, patterns=["Likes short answers"],
                                  proposals=["Create task “Call mum” (waiting)"])

    lines = text.splitlines()
    assert lines[0] == "## About the person, Monday, November 30, 2026"
    for expected in ["- Tasks: 2 open · 0 done today · 1 overdue", "- Water: 500 ml of 2,000 ml (25%)",
                     "- Meals: 1 · 350 of 2,000 kcal", "- Calendar: 1 event today",
                     "- Next event: Dentist, 2:00\u202fPM–3:00\u202fPM", "- Due today: Send the invoice (priority 2)",
                     "- Likes short answers", "- Create task “Call mum” (waiting)"]:
        assert expected in lines, expected
    # The water and meal logged today started their streaks.
    assert "- water: 1 day in a row" in lines and "- meals: 1 day in a row" in lines
    assert estimate_tokens(text) <= 500


async def test_context_document_lists_active_goals_with_their_progress(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    async with brain.transactions.begin() as uow:
        await goals.create_from_template(uow, user, USER, "tasks_5")
        paused = await goals.create_from_template(uow, user, USER, "meals_3")
    async with brain.transactions.begin() as uow:
        await goals.pause_goal(uow, user, USER, str(paused.id))
    async with brain.transactions.begin() as uow:
        for i in range(2):
            task = await todo.create_task(uow, user, USER, f"task {i}")
            await todo.complete_task(uow, user, USER, task.id)

    text = await context_document(brain, user)

    section = text.split("### Goals\n")[1].split("###")[0].splitlines()
    assert section == ["- 5 tasks done a day: 2 of 5 today"]


async def test_context_document_keeps_a_small_budget_by_dropping_details(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    async with brain.transactions.begin() as uow:
        for i in range(5):
            await todo.create_task(uow, user, USER, f"A task with a rather long title number {i}", due_date=MONDAY)
        await drink.log_drink(uow, user, USER, "water", 250)

    patterns = [f"Pattern {i}: something the person tends to do on weekday mornings" for i in range(10)]
    text = await context_document(brain, user, budget_tokens=120, patterns=patterns)

    assert estimate_tokens(text) <= 120
    assert "- Tasks: 5 open · 0 done today · 0 overdue" in text and "- water: 1 day in a row" in text
    # Details go first, then patterns from the last one up.
    assert "Due today" not in text
    assert "Pattern 0:" in text and "Pattern 9:" not in text


async def test_context_document_shows_the_strongest_correlations(brain: Brain, clock: FixedClock, user: User) -> None:
    for back in range(1, 22):
        day = MONDAY - timedelta(days=back)
        coffees = back % 4
        clock.set(at(day, 9))
        async with brain.transactions.begin() as uow:
            for _ in range(coffees):
                await drink.log_drink(uow, user, USER, "coffee", 150)
            for i in range(coffees * 2 + back % 2):
                task = await todo.create_task(uow, user, USER, f"task {back}-{i}")
                await todo.complete_task(uow, user, USER, task.id)
    clock.set(at(MONDAY, 9))

    text = await context_document(brain, user, budget_tokens=2000)

    section = text.split("### Correlations\n")[1].split("###")[0].splitlines()
    assert 1 <= len(section) <= 3
    assert any("coffee" in line and "completed tasks" in line and "(r = 0.9" in line for line in section)


async def test_context_document_is_in_the_persons_language(brain: Brain, clock: FixedClock, user: User) -> None:
    async with brain.transactions.begin() as uow:
        await drink.log_drink(uow, user, USER, "water", 1500)
    user.locale = "de"
    text = await context_document(brain, user)
    assert "30. November 2026" in text and "1.500 ml" in text


async def test_week_series_has_seven_local_days_with_goals_and_streaks(
    brain: Brain, clock: FixedClock, user: User,
) -> None:
    async with brain.transactions.begin() as uow:
        await drink.set_goal(uow, user, USER, 2500)
    week = [MONDAY - timedelta(days=6 - i) for i in range(7)]  # Tuesday .. Monday
    water = [500, 0, 2500, 750, 0, 1000, 250]
    for day, ml in zip(week, water, strict=True):
        clock.set(at(day, 12))
        async with brain.transactions.begin() as uow:
            if ml:
                await drink.log_drink(uow, user, USER, "water", ml)
            if day == week[4]:  # no water on Saturday: the person skips the day for the water streak
                await streaks.skip_day(uow, user, USER, "water", day)
    # A meal and a task late on Sunday evening, local time.
    clock.set(at(week[5], 23, 30))
    async with brain.transactions.begin() as uow:
        await food.log_meal(uow, user, USER, "late soup", kcal=400)
        task = await todo.create_task(uow, user, USER, "tidy up")
        await todo.complete_task(uow, user, USER, task.id)
    clock.set(at(MONDAY, 8))

    async with brain.transactions.read() as session:
        series = await week_series(session, user, MONDAY)

    assert series.days == tuple(week)
    assert series.water_ml == tuple(water)
    assert series.water_goal_ml == 2500 and series.kcal_goal == 2000
    assert series.kcal == (0, 0, 0, 0, 0, 400, 0)
    assert series.tasks_done == (0, 0, 0, 0, 0, 1, 0)
    # Water: 1 on Tue, broken Wed, 1 Thu, 2 Fri, kept through the skipped Sat, 3 Sun, 4 Mon.
    assert series.streaks["water"] == (1, 0, 1, 2, 2, 3, 4)
    # Meals: done on Sunday only, and still alive on Monday morning (not done yet today).
    assert series.streaks["meals"] == (0, 0, 0, 0, 0, 1, 1)


async def test_week_series_for_a_new_person_is_all_zeros(brain: Brain, user: User) -> None:
    async with brain.transactions.read() as session:
        series = await week_series(session, user, MONDAY)
    assert series.water_ml == series.tasks_done == series.kcal == (0,) * 7
    assert all(lengths == (0,) * 7 for lengths in series.streaks.values())


def test_week_chart_is_a_png_of_chat_size() -> None:
    days = tuple(MONDAY - timedelta(days=6 - i) for i in range(7))
    series = WeekSeries(days=days, water_ml=(500, 0, 2500, 750, 0, 1000, 250), water_goal_ml=2000,
                        tasks_done=(1, 0, 3, 0, 2, 1, 0), kcal=(1800, 0, 2200, 900, 0, 400, 0), kcal_goal=2000,
                        streaks={"water": (1, 0, 1, 2, 2, 3, 4), "tasks": (1, 0, 1, 0, 1, 2, 2)})
    for locale in ("en", "de"):
        png = render_week_chart(series, Renderer(locale, "Europe/Berlin"))
        assert png_size(png) == (1000, 700)
        assert len(png) > 20_000  # drawn panels, not an empty canvas


def test_week_chart_draws_an_empty_week() -> None:
    days = tuple(MONDAY - timedelta(days=6 - i) for i in range(7))
    series = WeekSeries(days=days, water_ml=(0,) * 7, water_goal_ml=2000, tasks_done=(0,) * 7, kcal=(0,) * 7,
                        kcal_goal=2000, streaks={"water": (0,) * 7})
    assert png_size(render_week_chart(series, Renderer("en"))) == (1000, 700)


def test_the_week_in_words_averages_from_the_first_day_logged() -> None:
    days = tuple(MONDAY - timedelta(days=6 - i) for i in range(7))
    series = WeekSeries(days=days, water_ml=(0, 0, 2500, 750, 0, 1000, 250), water_goal_ml=2000,
                        tasks_done=(0, 0, 3, 0, 2, 1, 0), kcal=(0, 0, 2200, 900, 0, 400, 0), kcal_goal=2000,
                        streaks={}, coffee=(0, 0, 2, 1, 0, 0, 0))
    render = Renderer("en", "Europe/Berlin")
    assert [render(line) for line in week_in_words(series)] == [
        "Your last 7 days", "Water: 900 ml a day on average over 5 days; goal reached on 1 day.", "Coffee: 3 cups",
        "Tasks done: 6", "Calories: 1,167 kcal a day on average on the 3 days with calories given."]
