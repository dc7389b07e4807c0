"""/meal: log a meal with optional type and nutrition ("/meal lunch Pasta 650 kcal"); and the buttons of a meal
proposed from a photo (`bot.photos`): Approve logs it (MealFromPhotoLogged), Edit shows it as a /meal line to
change and send, Reject drops it."""

from __future__ import annotations

import uuid
from datetime import date, time, timedelta
from typing import Any

from bot.commands import Command
from bot.commands.calendar import DELETE_WORDS
from bot.parsing.freetext import KCAL_RE, MEAL_WORDS, PROTEIN_RE, parse_meal, whole_amount
from bot.photos import APPROVE, EDIT, REJECT
from bot.turn import PendingButton, Turn
from brain.errors import DomainError
from brain.events.actor import USER
from brain.i18n import N_, Percent, Text, ntr, tr
from brain.modules.food import service
from brain.modules.food.service import MAX_KCAL, MEAL_LABELS, MIN_KCAL, meal_label
from brain.tools.spec import ToolResult


async def meal(turn: Turn, args: str) -> None:
    if not args:  # today's meals, and how to log one
        await meals_today(turn, hint=tr("Log one: /meal lunch Pasta 650 kcal, or write “pizza for dinner”. "
                                         "/meal delete removes the last one."))
        return
    first, _, rest = args.partition(" ")
    if first.casefold() in DELETE_WORDS:
        # "/meal delete": the most recent meal of today (or one by id), also after other changes /undo would reach.
        reference = rest.strip() or "last"
        turn.say_result(await turn.tool("delete_meal", {"meal_id": reference}))
        return
    meal_type = MEAL_WORDS.get(first.lower().rstrip(":"))
    if meal_type is not None and not PROTEIN_RE.sub("", KCAL_RE.sub("", rest)).strip(" ,;:-"):
        # "/meal breakfast" (perhaps with its kcal) names the meal but not the food: ask, rather than log the meal
        # word as what was eaten.
        turn.say(tr("What was your {meal}? Write it after the meal, e.g. /meal {word} Muesli 350 kcal",
                    meal=tr(MEAL_LABELS[meal_type]), word=first.rstrip(":")))
        return
    energy = KCAL_RE.search(args)
    if energy is not None:
        kcal = whole_amount(energy)
        if kcal is None or kcal > MAX_KCAL:  # "/meal 99999999 kcal": not a meal anyone ate, nor its name
            turn.say(tr("A meal must have between {min} and {max} kcal. Nothing was logged.", min=MIN_KCAL,
                        max=MAX_KCAL))
            return
        if not KCAL_RE.sub("", args).strip(" ,;:-"):  # only the energy: what was eaten?
            turn.say(tr("What did you eat? Write it before the energy, e.g. /meal Pasta {kcal} kcal", kcal=kcal))
            return
    parsed = parse_meal(args)
    call: dict[str, Any] = parsed[0].args if parsed else {"description": args}
    if call.get("kcal", 0) < 0 or call.get("protein", 0) < 0:
        turn.say(tr("Calories and protein can't be negative. Nothing was logged; write it like "
                    "/meal snack Apple 50 kcal."))
        return
    result = await turn.tool("log_meal", call)
    turn.say_result(result, after_meal_buttons(turn, result))


def after_meal_buttons(turn: Turn, logged: ToolResult) -> list[list[PendingButton]] | None:
    """Undo for exactly the meal this reply logged (not whatever was logged last)."""
    meal = logged.data.get("meal") if logged.ok else None
    if not meal:
        return None
    return [[turn.tool_button(tr("Undo"), "delete_meal", meal_id=str(meal["meal_id"]))]]


async def photo_meal_approved(turn: Turn, payload: dict[str, Any]) -> None:
    """The meal the vision model saw, logged as the person approved it (the middle of its energy range)."""
    try:
        async with turn.brain.transactions.begin() as uow:
            meal, totals = await service.log_meal_from_photo(
                uow, turn.user, USER, str(payload["description"]), meal_id=uuid.UUID(str(payload["meal_id"])),
                meal_type=str(payload["meal_type"]), kcal=int(payload["kcal"]),
                confidence=float(payload.get("confidence") or 0.5), photo_media_id=str(payload.get("media_id") or ""),
                foods=[str(f) for f in payload.get("foods") or []])
    except DomainError as refused:
        turn.say(refused.text)
        return
    turn.say(tr("Logged {meal}: {description}. Today: {kcal} of {goal} kcal ({percent}).",
                meal=meal_label(meal.meal_type), description=meal.description, kcal=totals.calories,
                goal=totals.calorie_goal, percent=Percent(totals.calorie_percent)))


def _meal_lines(turn: Turn, meals: list[dict[str, Any]]) -> list[str]:
    lines = []
    for item in meals:
        at = turn.render.format_value(time.fromisoformat(item["time"]))
        kcal = f" ({item['kcal']} kcal)" if item.get("kcal") is not None else ""
        label = turn.t(meal_label(item["meal_type"]))
        lines.append(f"• {at} {label[:1].upper()}{label[1:]}: {item['description']}{kcal}")
    return lines


async def meals_today(turn: Turn, hint: Text | None = None) -> None:
    """Today's meals, one a line with its time and calories, then the day's calories against the goal: the answer to
    "Was habe ich heute gegessen?" without a model (bot.parsing.questions)."""
    result = await turn.tool("nutrition_summary", {})
    meals: list[dict[str, Any]] = result.data.get("meals", []) if result.ok else []
    if not result.ok:
        turn.say_result(result)
        return
    if not meals:
        turn.say(tr("No meal logged today yet."), *([hint] if hint is not None else []))
        return
    lines = [turn.t(tr("Eaten today:")), *_meal_lines(turn, meals)]
    if result.data.get("kcal"):
        lines.append(turn.t(tr("Today: {kcal} of {goal} kcal ({percent}).", kcal=result.data["kcal"],
                               goal=result.data["kcal_goal"], percent=Percent(result.data["kcal_percent"]))))
    if hint is not None:
        lines.append(turn.t(hint))
    turn.say("\n".join(lines))


async def past_day(turn: Turn, day: date) -> None:
    """What a past day's logs hold: water against that day's goal, coffee, and the meals with their calories. The
    answer to "Wie viel Wasser habe ich gestern getrunken?" or "Was habe ich am Montag gegessen?" without a model."""
    drinks = await turn.tool("get_drink_progress", {"date": day.isoformat()})
    food = await turn.tool("nutrition_summary", {"date": day.isoformat()})
    for result in (drinks, food):
        if not result.ok:
            turn.say_result(result)
            return
    long_date = turn.render.long_date_of(day)
    heading = turn.t(tr("Yesterday, {date}", date=long_date)) if day == turn.today - timedelta(days=1) else long_date
    meals: list[dict[str, Any]] = food.data.get("meals", [])
    if not drinks.data.get("total_count") and not meals:
        turn.say(tr("Nothing is logged for {date}: no drinks and no meals.", date=long_date))
        return
    cups = drinks.data.get("coffee_count", 0)
    lines = [heading + ":", turn.t(tr(
        "Water: {water} of {goal} ml ({percent}) · coffee: {cups}", water=drinks.data["water_ml"],
        goal=drinks.data["water_goal_ml"], percent=Percent(drinks.data["water_percent"]),
        cups=ntr("{cups} cup", "{cups} cups", cups, cups=cups)))]
    if meals:
        lines += [turn.t(tr("Eaten:")), *_meal_lines(turn, meals)]
        if food.data.get("kcal"):
            lines.append(turn.t(tr("Together: {kcal} of {goal} kcal ({percent}).", kcal=food.data["kcal"],
                                   goal=food.data["kcal_goal"], percent=Percent(food.data["kcal_percent"]))))
    else:
        lines.append(turn.t(tr("No meals logged.")))
    turn.say("\n".join(lines))


async def photo_meal_edit(turn: Turn, payload: dict[str, Any]) -> None:
    """The proposal as a /meal line: the person changes what is wrong and sends it (nothing is logged until then)."""
    word = turn.t(tr(MEAL_LABELS.get(str(payload["meal_type"]), MEAL_LABELS["snack"])))
    line = f"/meal {word} {payload['description']} {payload['kcal']} kcal"
    turn.say(tr("Nothing was logged yet. Change what's wrong and send it:"), line)


async def photo_meal_rejected(turn: Turn, payload: dict[str, Any]) -> None:
    turn.say(tr("Not logged."))


ACTIONS = {APPROVE: photo_meal_approved, EDIT: photo_meal_edit, REJECT: photo_meal_rejected}

COMMANDS = (
    Command("meal", N_("/meal lunch Pasta 650 kcal"), N_("Log a meal"), meal,
            aliases=("essen", "food", "mahlzeit", "mahlzeiten", "meals")),
)
