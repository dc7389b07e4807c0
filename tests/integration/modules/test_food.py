"""Food module: each mutation writes its record and exactly its event, with the actor; a failing
transaction leaves neither; tool calls coerce or refuse their arguments; one person never sees
another's meals."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import event, func, select

from brain.clock import FixedClock
from brain.core import Brain
from brain.errors import DomainError
from brain.events.actor import USER, ai, system
from brain.events.catalog import DomainEvent
from brain.events.store import EventRecord, query_events
from brain.i18n import Renderer
from brain.modules.food import service
from brain.modules.food.models import Meal, NutritionGoal
from brain.people.models import User
from brain.people.service import resolve_identity

BERLIN = ZoneInfo("Europe/Berlin")


async def _count(brain: Brain, model: type) -> int:
    async with brain.transactions.read() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


async def _counts(brain: Brain) -> tuple[int, int, int]:
    return await _count(brain, Meal), await _count(brain, NutritionGoal), await _count(brain, EventRecord)


async def _other_user(brain: Brain) -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"other-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")


async def test_log_meal_writes_meal_and_event_with_user_actor(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe("MealLogged", seen.append)
    async with brain.transactions.begin() as uow:
        meal, totals = await service.log_meal(uow, user, USER, "  Porridge with berries ", kcal=420, protein=12,
                                              carbs=60, fat=9)
    assert totals.calories == 420 and totals.calorie_goal == 2000 and totals.meal_count == 1
    async with brain.transactions.read() as s:
        stored = await s.get(Meal, meal.id)
        events = await query_events(s, user.id, module="food")
    assert stored is not None and stored.user_id == user.id
    assert stored.description == "Porridge with berries" and stored.input_type == "text"
    assert stored.meal_type == "breakfast"  # 08:30 in Berlin
    assert stored.local_date == date(2026, 11, 30) and stored.logged_at == datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
    assert [e.type for e in events] == ["MealLogged"]
    assert events[0].meta.actor.kind == "user" and events[0].meta.record_id == str(meal.id)
    payload: Any = events[0].payload
    assert (payload.calories, payload.protein, payload.carbs, payload.fat) == (420, 12, 60, 9)
    assert payload.date == date(2026, 11, 30) and payload.meal_type == "breakfast"
    assert len(seen) == 1 and seen[0].meta.id == events[0].meta.id


@pytest.mark.parametrize(
    ("local", "expected"),
    [
        (datetime(2026, 11, 30, 6, 0), "breakfast"),
        (datetime(2026, 11, 30, 10, 29), "breakfast"),
        (datetime(2026, 11, 30, 10, 30), "lunch"),
        (datetime(2026, 11, 30, 14, 59), "lunch"),
        (datetime(2026, 11, 30, 15, 0), "snack"),
        (datetime(2026, 11, 30, 16, 59), "snack"),
        (datetime(2026, 11, 30, 17, 0), "dinner"),
        (datetime(2026, 11, 30, 21, 29), "dinner"),
        (datetime(2026, 11, 30, 21, 30), "snack"),
        (datetime(2026, 11, 30, 23, 45), "snack"),
        # Summer time (UTC+2): 10:30 local is 08:30 UTC, and it is lunch, not breakfast.
        (datetime(2026, 7, 1, 10, 30), "lunch"),
    ],
)
async def test_meal_type_is_inferred_from_the_local_time_in_berlin(
    brain: Brain, user: User, clock: FixedClock, local: datetime, expected: str
) -> None:
    clock.set(local.replace(tzinfo=BERLIN))
    async with brain.transactions.begin() as uow:
        meal, _ = await service.log_meal(uow, user, USER, "Something")
    assert meal.meal_type == expected
    assert meal.local_date == local.date()


async def test_an_explicit_meal_type_wins_over_the_time_of_day(brain: Brain, user: User) -> None:
    async with brain.transactions.begin() as uow:
        meal, _ = await service.log_meal(uow, user, USER, "Cold pizza", meal_type="dinner")
    assert meal.meal_type == "dinner"


async def test_a_meal_after_midnight_utc_counts_for_the_berlin_day(brain: Brain, user: User, clock: FixedClock) -> None:
    clock.set(datetime(2026, 11, 30, 23, 30, tzinfo=UTC))  # 00:30 on 1 December in Berlin
    async with brain.transactions.begin() as uow:
        meal, totals = await service.log_meal(uow, user, USER, "Toast", kcal=200)
    assert meal.local_date == date(2026, 12, 1) and totals.day == date(2026, 12, 1)


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"description": "   "}, "empty"),
        ({"description": "x" * 501}, "too_long"),
        ({"description": "Soup", "kcal": -5}, "out_of_range"),
        ({"description": "Soup", "kcal": 5001}, "out_of_range"),
        ({"description": "Soup", "fat": 501}, "out_of_range"),
        ({"description": "Soup", "meal_type": "brunch"}, "bad_enum"),
    ],
)
async def test_log_meal_refuses_invalid_input_without_writing(
    brain: Brain, user: User, kwargs: dict[str, Any], code: str
) -> None:
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.log_meal(uow, user, USER, **kwargs)
    assert refused.value.code == code
    assert await _counts(brain) == (0, 0, 0)


async def test_failed_transaction_leaves_neither_meal_nor_event(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe_all(seen.append)
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await service.set_nutrition_goal(uow, user, USER, 800)
            await service.log_meal(uow, user, USER, "Pasta", kcal=900)
            raise RuntimeError("boom after the write")
    assert await _counts(brain) == (0, 0, 0)
    assert seen == []


async def test_delete_meal_by_id_emits_meal_deleted_with_ai_actor(brain: Brain, user: User) -> None:
    async with brain.transactions.begin() as uow:
        meal, _ = await service.log_meal(uow, user, USER, "Salad", meal_type="lunch")
    async with brain.transactions.begin() as uow:
        deleted = await service.delete_meal(uow, user, ai(rationale="user said it was a mistake"), str(meal.id))
    assert deleted.id == meal.id
    async with brain.transactions.read() as s:
        latest = (await query_events(s, user.id, module="food", limit=1))[0]
    assert latest.type == "MealDeleted" and latest.meta.record_id == str(meal.id)
    assert latest.payload.meal_type == "lunch"  # type: ignore[attr-defined]
    assert latest.meta.actor.kind == "ai" and latest.meta.actor.rationale == "user said it was a mistake"
    assert await _count(brain, Meal) == 0


async def test_delete_last_removes_the_most_recent_meal_of_today_only(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    clock.set(datetime(2026, 11, 29, 19, 0, tzinfo=BERLIN))
    async with brain.transactions.begin() as uow:
        await service.log_meal(uow, user, USER, "Yesterday's dinner")
    clock.set(datetime(2026, 11, 30, 8, 0, tzinfo=BERLIN))
    async with brain.transactions.begin() as uow:
        await service.log_meal(uow, user, USER, "Muesli")
        await service.log_meal(uow, user, USER, "Banana", meal_type="snack")
    async with brain.transactions.begin() as uow:
        first = await service.delete_meal(uow, user, USER, "last")
    async with brain.transactions.begin() as uow:
        second = await service.delete_meal(uow, user, USER, "LAST")
    assert (first.description, second.description) == ("Banana", "Muesli")
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.delete_meal(uow, user, USER, "last")
    assert refused.value.code == "not_found"
    async with brain.transactions.read() as s:
        left = (await s.scalars(select(Meal.description))).all()
    assert left == ["Yesterday's dinner"]


async def test_set_nutrition_goal_upserts_one_goal_and_emits_each_time(brain: Brain, user: User) -> None:
    async with brain.transactions.begin() as uow:
        first = await service.set_nutrition_goal(uow, user, system("rule"), 1800, protein=120)
    async with brain.transactions.begin() as uow:
        second = await service.set_nutrition_goal(uow, user, USER, 2200, carbs=250)
    assert first.id == second.id
    async with brain.transactions.read() as s:
        goals = (await s.scalars(select(NutritionGoal))).all()
        events = await query_events(s, user.id, types="NutritionGoalSet")
    assert len(goals) == 1
    assert (goals[0].daily_calories, goals[0].daily_protein, goals[0].daily_carbs) == (2200, None, 250)
    assert [e.payload.daily_calories for e in events] == [2200, 1800]  # type: ignore[attr-defined]
    assert events[1].meta.actor.kind == "system" and events[1].meta.actor.source == "rule"
    assert events[0].meta.record_id == str(first.id)
    assert events[1].payload.daily_protein == 120  # type: ignore[attr-defined]


async def test_crossing_the_calorie_goal_emits_goal_reached_once(brain: Brain, user: User) -> None:
    async with brain.transactions.begin() as uow:
        await service.set_nutrition_goal(uow, user, system("rule"), 1000)
    for kcal in (600, None, 500, 300):
        async with brain.transactions.begin() as uow:
            await service.log_meal(uow, user, USER, "Meal", kcal=kcal)
    async with brain.transactions.read() as s:
        reached = await query_events(s, user.id, types="DailyCalorieGoalReached")
    assert len(reached) == 1
    payload: Any = reached[0].payload
    assert (payload.date, payload.goal, payload.actual) == (date(2026, 11, 30), 1000, 1100)
    assert reached[0].meta.actor.kind == "user"


async def test_day_summary_totals_against_goals_in_two_queries(brain: Brain, user: User, clock: FixedClock) -> None:
    clock.set(datetime(2026, 11, 29, 12, 0, tzinfo=BERLIN))
    async with brain.transactions.begin() as uow:
        await service.log_meal(uow, user, USER, "Yesterday", kcal=999)
    clock.set(datetime(2026, 11, 30, 8, 0, tzinfo=BERLIN))
    async with brain.transactions.begin() as uow:
        await service.log_meal(uow, user, USER, "Eggs", kcal=300, protein=20, fat=15)
        await service.log_meal(uow, user, USER, "Apple", meal_type="snack", kcal=80, carbs=20)
        await service.log_meal(uow, user, USER, "Tea")
    async with brain.transactions.begin() as uow:
        before_goal = await service.day_summary(uow, user)
    assert before_goal.totals.calorie_goal == 2000 and before_goal.totals.protein_goal is None
    async with brain.transactions.begin() as uow:
        await service.set_nutrition_goal(uow, user, USER, 1900, protein=100)

    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    async with brain.transactions.begin() as uow:
        event.listen(brain.db.engine.sync_engine, "before_cursor_execute", record)
        try:
            summary = await service.day_summary(uow, user)
        finally:
            event.remove(brain.db.engine.sync_engine, "before_cursor_execute", record)
    assert len(statements) == 2
    t = summary.totals
    assert (t.day, t.meal_count, t.calories, t.protein, t.carbs, t.fat) == (date(2026, 11, 30), 3, 380, 20, 20, 15)
    assert (t.calorie_goal, t.protein_goal, t.carbs_goal, t.fat_goal) == (1900, 100, None, None)
    assert t.calorie_percent == 20
    assert [m.description for m in summary.meals] == ["Eggs", "Apple", "Tea"]
    async with brain.transactions.begin() as uow:
        yesterday = await service.day_summary(uow, user, date(2026, 11, 29))
    assert yesterday.totals.calories == 999 and [m.description for m in yesterday.meals] == ["Yesterday"]


async def test_log_meal_tool_coerces_numbers_and_reports_the_day(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(user.id, "log_meal",
                                       {"description": "Pasta", "kcal": "650", "protein": 22.0, "meal_type": "Lunch"},
                                       USER)
    assert result.ok, result.message
    assert result.data["meal"]["kcal"] == 650 and isinstance(result.data["meal"]["kcal"], int)
    assert result.data["meal"]["protein"] == 22 and result.data["meal"]["meal_type"] == "lunch"
    assert result.data["kcal"] == 650 and result.data["kcal_goal"] == 2000 and result.data["date"] == "2026-11-30"
    uuid.UUID(result.data["meal"]["meal_id"])
    async with brain.transactions.read() as s:
        stored = await s.scalar(select(Meal))
    assert stored is not None and stored.calories == 650 and stored.protein == 22


async def test_food_tools_set_goal_summarise_and_delete(brain: Brain, user: User) -> None:
    goal = await brain.tools.execute(user.id, "set_nutrition_goal", {"kcal": "1800", "protein": "90"}, USER)
    assert goal.ok and goal.data["kcal"] == 1800 and goal.data["protein"] == 90
    await brain.tools.execute(user.id, "log_meal", {"description": "Bread", "kcal": 250}, ai(rationale="user said"))
    summary = await brain.tools.execute(user.id, "nutrition_summary", {"date": "today"}, USER)
    assert summary.ok and summary.data["meal_count"] == 1 and summary.data["kcal_goal"] == 1800
    assert summary.data["meals"][0]["description"] == "Bread" and summary.data["meals"][0]["time"] == "08:30"
    deleted = await brain.tools.execute(user.id, "delete_meal", {"meal_id": "last"}, USER)
    assert deleted.ok and deleted.data["meal_id"] == summary.data["meals"][0]["meal_id"]
    assert await _count(brain, Meal) == 0


async def test_the_assistant_may_log_meals_but_not_delete_them(brain: Brain, user: User) -> None:
    logged = await brain.tools.execute(user.id, "log_meal", {"description": "Soup"}, ai(rationale="from chat"))
    assert logged.ok
    refused = await brain.tools.execute(user.id, "delete_meal", {"meal_id": "last"}, ai(rationale="tidy up"))
    assert not refused.ok and refused.error_code == "policy_denied"
    assert await _count(brain, Meal) == 1


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("log_meal", {"description": "Pasta", "kcal": -5}, "out_of_range"),
        ("log_meal", {"description": "Pasta", "kcal": "a lot"}, "bad_type"),
        ("log_meal", {"description": "Pasta", "protein": 12.5}, "bad_type"),
        ("log_meal", {"description": "Pasta", "carbs": 501}, "out_of_range"),
        ("log_meal", {"kcal": 300}, "missing_parameter"),
        ("log_meal", {"description": "   "}, "empty"),
        ("log_meal", {"description": "x" * 501}, "too_long"),
        ("log_meal", {"description": "Pasta", "meal_type": "brunch"}, "bad_enum"),
        ("log_meal", {"description": "Pasta", "spice": "hot"}, "unknown_parameter"),
        ("log_meal", ["Pasta"], "bad_arguments"),
        ("set_nutrition_goal", {"kcal": 100}, "out_of_range"),
        ("set_nutrition_goal", {"protein": 100}, "missing_parameter"),
        ("delete_meal", {"meal_id": "not-a-meal"}, "not_found"),
        ("delete_meal", {"meal_id": str(uuid.uuid4())}, "not_found"),
        ("nutrition_summary", {"date": "someday"}, "bad_date"),
    ],
)
async def test_food_tool_refusals_return_an_error_code_and_change_nothing(
    brain: Brain, user: User, tool: str, args: Any, code: str
) -> None:
    async with brain.transactions.begin() as uow:
        await service.log_meal(uow, user, USER, "Existing", kcal=100)
    before = await _counts(brain)
    result = await brain.tools.execute(user.id, tool, args, USER)
    assert not result.ok and result.error_code == code
    assert result.message is not None
    assert await _counts(brain) == before


async def test_one_person_never_sees_or_deletes_another_persons_meals(brain: Brain, user: User) -> None:
    other = await _other_user(brain)
    async with brain.transactions.begin() as uow:
        meal, _ = await service.log_meal(uow, user, USER, "Private lunch", kcal=700)
        await service.set_nutrition_goal(uow, user, USER, 1200, protein=80)
    async with brain.transactions.begin() as uow:
        summary = await service.day_summary(uow, other)
    assert summary.meals == () and summary.totals.calories == 0
    assert summary.totals.calorie_goal == 2000 and summary.totals.protein_goal is None
    for ref in (str(meal.id), "last"):
        result = await brain.tools.execute(other.id, "delete_meal", {"meal_id": ref}, USER)
        assert not result.ok and result.error_code == "not_found"
    seen_by_other = await brain.tools.execute(other.id, "nutrition_summary", {}, USER)
    assert seen_by_other.ok and seen_by_other.data["meals"] == [] and seen_by_other.data["kcal"] == 0
    async with brain.transactions.read() as s:
        assert await query_events(s, other.id, module="food") == []
    assert await _count(brain, Meal) == 1


async def test_the_latest_meal_is_corrected_keeping_what_was_not_corrected(brain: Brain, user: User) -> None:
    await brain.tools.execute(user.id, "log_meal", {"description": "Müsli", "meal_type": "breakfast"}, USER)
    await brain.tools.execute(user.id, "log_meal", {"description": "Pizza", "meal_type": "lunch", "kcal": 800,
                                                    "protein": 30}, USER)
    kind = await brain.tools.execute(user.id, "correct_last_meal", {"meal_type": "dinner"}, USER)
    assert kind.ok and kind.message is not None
    assert Renderer("en", "Europe/Berlin")(kind.message) == (
        "Changed to dinner: Pizza, 800 kcal (was lunch). Today: 800 of 2,000 kcal (40%).")
    kcal = await brain.tools.execute(user.id, "correct_last_meal", {"kcal": 600}, USER)
    assert kcal.ok and kcal.data["meal"]["kcal"] == 600 and kcal.data["kcal"] == 600
    async with brain.transactions.read() as s:
        meals = sorted((m.description, m.meal_type, m.calories, m.protein)
                       for m in (await s.scalars(select(Meal))).all())
        types = [e.type for e in await query_events(s, user.id, module="food")]
    assert meals == [("Müsli", "breakfast", None, None), ("Pizza", "dinner", 600, 30)]
    assert types.count("MealDeleted") == 2 and types.count("MealLogged") == 4
    before = await _counts(brain)
    refused = await brain.tools.execute(user.id, "correct_last_meal", {}, USER)
    assert not refused.ok and refused.error_code == "missing_change"
    assert await _counts(brain) == before


async def test_a_meal_correction_with_no_meal_today_says_so_and_changes_nothing(brain: Brain, user: User) -> None:
    before = await _counts(brain)
    refused = await brain.tools.execute(user.id, "correct_last_meal", {"meal_type": "dinner"}, USER)
    assert not refused.ok and refused.error_code == "nothing_to_correct"
    assert await _counts(brain) == before
