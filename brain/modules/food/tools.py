"""ToolSpecs over the food service."""

from __future__ import annotations

from typing import Any

from brain.errors import DomainError
from brain.i18n import Percent, ntr, tr
from brain.modules.food import service
from brain.modules.food.models import Meal
from brain.modules.food.service import (
    MAX_DESCRIPTION,
    MAX_GOAL_GRAMS,
    MAX_GOAL_KCAL,
    MAX_GRAMS,
    MAX_KCAL,
    MEAL_TYPES,
    MIN_GOAL_GRAMS,
    MIN_GOAL_KCAL,
    MIN_GRAMS,
    MIN_KCAL,
    meal_label,
)
from brain.people.models import User
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


def totals_data(t: service.DayTotals) -> dict[str, Any]:
    return {
        "date": t.day.isoformat(), "meal_count": t.meal_count, "kcal": t.calories, "kcal_goal": t.calorie_goal,
        "kcal_percent": t.calorie_percent, "protein": t.protein, "protein_goal": t.protein_goal, "carbs": t.carbs,
        "carbs_goal": t.carbs_goal, "fat": t.fat, "fat_goal": t.fat_goal,
    }


def meal_data(user: User, meal: Meal) -> dict[str, Any]:
    return {
        "meal_id": str(meal.id), "meal_type": meal.meal_type, "description": meal.description,
        "kcal": meal.calories, "protein": meal.protein, "carbs": meal.carbs, "fat": meal.fat,
        "date": meal.local_date.isoformat(), "time": service.local_time_of(user, meal.logged_at),
    }


async def _log_meal(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    meal, totals = await service.log_meal(
        ctx.uow, ctx.user, ctx.actor, args["description"], meal_type=args.get("meal_type"), kcal=args.get("kcal"),
        protein=args.get("protein"), carbs=args.get("carbs"), fat=args.get("fat"),
    )
    # Without calories, today's "0 of 2,000 kcal" would read as if the meal had none: the meal alone is said.
    said = (tr("Logged {meal}: {description}.", meal=meal_label(meal.meal_type), description=meal.description)
            if meal.calories is None and not totals.calories else
            tr("Logged {meal}: {description}. Today: {kcal} of {goal} kcal ({percent}).",
               meal=meal_label(meal.meal_type), description=meal.description, kcal=totals.calories,
               goal=totals.calorie_goal, percent=Percent(totals.calorie_percent)))
    return ToolResult.success(said, meal=meal_data(ctx.user, meal), **totals_data(totals))


async def _correct_meal(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """Today's latest meal, logged wrong ("I meant dinner", "that was 600 kcal"), replaced by the right one in the
    same transaction: the wrong one deleted, the right one logged with what was not corrected kept."""
    if not args.get("meal_type") and args.get("kcal") is None and not args.get("description"):
        return ToolResult.failure(tr("What should it be instead? The meal, its calories or what it was."),
                                  "missing_change")
    try:
        old = await service.delete_meal(ctx.uow, ctx.user, ctx.actor, service.LAST)
    except DomainError as refused:
        if refused.code != "not_found":
            raise
        return ToolResult.failure(tr("There is no meal from today to correct."), "nothing_to_correct")
    kcal = args["kcal"] if args.get("kcal") is not None else old.calories
    meal, totals = await service.log_meal(
        ctx.uow, ctx.user, ctx.actor, args.get("description") or old.description,
        meal_type=args.get("meal_type") or old.meal_type, kcal=kcal, protein=old.protein, carbs=old.carbs,
        fat=old.fat)
    values = {"meal": meal_label(meal.meal_type), "description": meal.description,
              "old_meal": meal_label(old.meal_type)}
    today = {"total": totals.calories, "goal": totals.calorie_goal, "percent": Percent(totals.calorie_percent)}
    if meal.meal_type != old.meal_type:
        said = (tr("Changed to {meal}: {description} (was {old_meal}).", **values) if meal.calories is None else
                tr("Changed to {meal}: {description}, {kcal} kcal (was {old_meal}). Today: {total} of {goal} kcal "
                   "({percent}).", kcal=meal.calories, **values, **today))
    elif meal.calories is not None:
        said = tr("Changed {meal}: {description} to {kcal} kcal. Today: {total} of {goal} kcal ({percent}).",
                  kcal=meal.calories, **values, **today)
    else:
        said = tr("Changed {meal} to: {description}.", **values)
    return ToolResult.success(said, meal=meal_data(ctx.user, meal), replaced=str(old.id), **totals_data(totals))


async def _delete_meal(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    meal = await service.delete_meal(ctx.uow, ctx.user, ctx.actor, args["meal_id"])
    return ToolResult.success(tr("Deleted the {meal}: {description}.", meal=meal_label(meal.meal_type),
                                 description=meal.description), meal_id=str(meal.id))


async def _set_goal(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    goal = await service.set_nutrition_goal(ctx.uow, ctx.user, ctx.actor, args["kcal"], protein=args.get("protein"),
                                            carbs=args.get("carbs"), fat=args.get("fat"))
    return ToolResult.success(
        tr("Your daily nutrition goal is now {kcal} kcal.", kcal=goal.daily_calories),
        goal_id=str(goal.id), kcal=goal.daily_calories, protein=goal.daily_protein, carbs=goal.daily_carbs,
        fat=goal.daily_fat,
    )


async def _summary(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    summary = await service.day_summary(ctx.uow, ctx.user, args.get("date"))
    t = summary.totals
    return ToolResult.success(
        ntr("{count} meal on {date}: {kcal} of {goal} kcal ({percent}).",
            "{count} meals on {date}: {kcal} of {goal} kcal ({percent}).", t.meal_count, date=t.day,
            kcal=t.calories, goal=t.calorie_goal, percent=Percent(t.calorie_percent)),
        meals=[meal_data(ctx.user, m) for m in summary.meals], **totals_data(t),
    )


def _grams(name: str, description: str, low: int, high: int, required: bool = False) -> ToolParam:
    return ToolParam(name, "integer", description, required=required, minimum=low, maximum=high)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("log_meal", "food", "Log a meal the person ate, with calories and macros if known.",
             (ToolParam("description", "string", "What was eaten, e.g. 'Pasta with tomato sauce'.", required=True,
                        max_length=MAX_DESCRIPTION),
              ToolParam("meal_type", "string", "Kind of meal; inferred from the time of day if omitted.",
                        enum=MEAL_TYPES),
              _grams("kcal", "Calories in kcal.", MIN_KCAL, MAX_KCAL),
              _grams("protein", "Protein in grams.", MIN_GRAMS, MAX_GRAMS),
              _grams("carbs", "Carbohydrates in grams.", MIN_GRAMS, MAX_GRAMS),
              _grams("fat", "Fat in grams.", MIN_GRAMS, MAX_GRAMS)),
             "write", _log_meal),
    ToolSpec("correct_last_meal", "food",
             "Correct today's latest meal when it was logged wrong: a new kind of meal, calories or description.",
             (ToolParam("meal_type", "string", "The right kind of meal.", enum=MEAL_TYPES),
              _grams("kcal", "The right calories in kcal.", MIN_KCAL, MAX_KCAL),
              ToolParam("description", "string", "What it really was.", max_length=MAX_DESCRIPTION)),
             "write", _correct_meal),
    ToolSpec("delete_meal", "food", "Delete one meal by id, or the most recent meal of today with 'last'.",
             (ToolParam("meal_id", "string", "Meal id, or 'last'.", required=True, max_length=64),),
             "destructive", _delete_meal),
    ToolSpec("set_nutrition_goal", "food", "Set the daily calorie goal, optionally with macro goals in grams.",
             (_grams("kcal", "Daily calories in kcal.", MIN_GOAL_KCAL, MAX_GOAL_KCAL, required=True),
              _grams("protein", "Daily protein in grams.", MIN_GOAL_GRAMS, MAX_GOAL_GRAMS),
              _grams("carbs", "Daily carbohydrates in grams.", MIN_GOAL_GRAMS, MAX_GOAL_GRAMS),
              _grams("fat", "Daily fat in grams.", MIN_GOAL_GRAMS, MAX_GOAL_GRAMS)),
             "write", _set_goal),
    ToolSpec("nutrition_summary", "food", "Meals, calories and macros of a day against the nutrition goal.",
             (ToolParam("date", "date", "Local day (YYYY-MM-DD); today if omitted."),), "read", _summary),
)
