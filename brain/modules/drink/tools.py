"""ToolSpecs over the drink service."""

from __future__ import annotations

import uuid
from typing import Any

from brain.errors import DomainError
from brain.i18n import N_, Percent, ntr, tr
from brain.modules.drink import service
from brain.modules.drink.service import (
    DRINK_TYPES,
    MAX_AT_ONCE,
    MAX_GOAL_ML,
    MAX_ML,
    MIN_GOAL_ML,
    MIN_ML,
    drink_label,
)
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


def progress_data(p: service.DrinkProgress) -> dict[str, Any]:
    return {
        "date": p.day.isoformat(), "water_ml": p.water_ml, "water_goal_ml": p.water_goal_ml,
        "water_percent": p.water_percent, "coffee_count": p.coffee_count, "coffee_ml": p.coffee_ml,
        "other_ml": p.other_ml, "total_ml": p.total_ml, "total_count": p.total_count,
    }


async def _log_drink(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    drink_type = args["drink_type"]
    ml = args.get("quantity_ml") or service.DEFAULT_PORTION_ML[drink_type]
    count = int(args.get("count") or 1)
    # Several cups ("zwei Kaffee") are one entry each, all in this transaction: they are logged together or not at
    # all, and the reply says how many.
    # Each names them all, so that /undo takes the log back whole, as its reply's Undo button does.
    ids = [uuid.uuid4() for _ in range(count)]
    together = ids if count > 1 else []
    entries = []
    for entry_id in ids:
        entry, progress = await service.log_drink(ctx.uow, ctx.user, ctx.actor, drink_type, ml, name=args.get("name"),
                                                  entry_id=entry_id, log_entry_ids=together)
        entries.append(entry)
    # The drink by the name it was given ("Bier", "Espresso"), else by its kind: "2 × 330 ml Alkohol" read oddly.
    values = {"ml": ml, "drink": args.get("name") or drink_label(drink_type), "water": progress.water_ml,
              "goal": progress.water_goal_ml, "percent": Percent(progress.water_percent)}
    if drink_type == "coffee":
        # What a coffee drinker counts is cups; the water stays in view.
        cups = ntr("{cups} cup", "{cups} cups", progress.coffee_count, cups=progress.coffee_count)
        message = (tr("Logged {ml} ml {drink}. Coffee today: {cups} · water: {water} of {goal} ml ({percent}).",
                      cups=cups, **values) if count == 1 else
                   ntr("Logged {count} × {ml} ml {drink}. Coffee today: {cups} · water: {water} of {goal} ml "
                       "({percent}).",
                       "Logged {count} × {ml} ml {drink}. Coffee today: {cups} · water: {water} of {goal} ml "
                       "({percent}).", count, count=count, cups=cups, **values))
    elif count == 1:
        message = tr("Logged {ml} ml {drink}. Water today: {water} of {goal} ml ({percent}).", **values)
    else:
        message = ntr("Logged {count} × {ml} ml {drink}. Water today: {water} of {goal} ml ({percent}).",
                      "Logged {count} × {ml} ml {drink}. Water today: {water} of {goal} ml ({percent}).",
                      count, count=count, **values)
    return ToolResult.success(message, entry_id=str(entries[-1].id), entry_ids=[str(e.id) for e in entries],
                              count=count, **progress_data(progress))


async def _log_preset(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    preset = await service.find_preset(ctx.uow, ctx.user, args["preset"])
    entry, progress = await service.log_drink(ctx.uow, ctx.user, ctx.actor, preset.drink_type, preset.quantity_ml,
                                              name=preset.name, preset_id=preset.id)
    return ToolResult.success(
        tr("Logged {name} ({ml} ml). Water today: {water} of {goal} ml ({percent}).", name=preset.name,
           ml=preset.quantity_ml, water=progress.water_ml, goal=progress.water_goal_ml,
           percent=Percent(progress.water_percent)),
        entry_id=str(entry.id), **progress_data(progress),
    )


async def _undo(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    if args.get("entry_ids"):
        ids = _entry_ids(str(args["entry_ids"]))
        if ids is None:
            return ToolResult.failure(tr("No such drink entry."), "not_found")
        entries = await service.undo_drinks(ctx.uow, ctx.user, ctx.actor, ids)
    else:
        kind = args.get("drink_type")
        entries = [await service.undo_last_drink(ctx.uow, ctx.user, ctx.actor, str(kind) if kind else None)]
    progress = await service.day_progress(ctx.uow, ctx.user)
    first = entries[0]
    values = {"water": progress.water_ml, "goal": progress.water_goal_ml}
    # As the log said it: "beer", not "alcohol" (an entry logged without a name holds its kind as its name).
    drink = first.name if first.name and first.name != first.drink_type else drink_label(first.drink_type)
    if len(entries) == 1:
        message = tr("Removed {ml} ml {drink}. Water today: {water} of {goal} ml.", ml=first.quantity_ml,
                     drink=drink, **values)
    elif all(e.drink_type == first.drink_type and e.name == first.name and e.quantity_ml == first.quantity_ml
             for e in entries):
        message = ntr("Removed {count} × {ml} ml {drink}. Water today: {water} of {goal} ml.",
                      "Removed {count} × {ml} ml {drink}. Water today: {water} of {goal} ml.", len(entries),
                      count=len(entries), ml=first.quantity_ml, drink=drink, **values)
    else:
        message = ntr("Removed {count} drink. Water today: {water} of {goal} ml.",
                      "Removed {count} drinks. Water today: {water} of {goal} ml.", len(entries),
                      count=len(entries), **values)
    return ToolResult.success(message, entry_id=str(entries[-1].id), entry_ids=[str(e.id) for e in entries],
                              **progress_data(progress))


async def _correct(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """Today's latest drink, logged wrong ("that was 250 ml", "actually it was a tea"), replaced by the right one in
    the same transaction: the wrong one is undone and the right one logged (a kind changed without an amount takes
    that kind's usual portion, unless the old amount was said)."""
    if not args.get("quantity_ml") and not args.get("drink_type"):
        return ToolResult.failure(tr("What should it be instead? An amount, a kind of drink or both."),
                                  "missing_change")
    try:
        old = await service.undo_last_drink(ctx.uow, ctx.user, ctx.actor)
    except DomainError as refused:
        if refused.code != "nothing_to_undo":
            raise
        return ToolResult.failure(tr("There is no drink from today to correct."), "nothing_to_correct")
    drink_type = args.get("drink_type") or old.drink_type
    kept_amount = old.quantity_ml if old.quantity_ml != service.DEFAULT_PORTION_ML[old.drink_type] else None
    ml = args.get("quantity_ml") or kept_amount or service.DEFAULT_PORTION_ML[drink_type]
    old_name = old.name if old.name != old.drink_type else None  # a drink logged without a name carries its kind
    name = args.get("name") or (old_name if drink_type == old.drink_type else None)
    entry, progress = await service.log_drink(ctx.uow, ctx.user, ctx.actor, drink_type, ml, name=name)
    message = tr("Changed to {ml} ml {drink} (was {old_ml} ml {old_drink}). Water today: {water} of {goal} ml "
                 "({percent}).", ml=ml, drink=name or drink_label(drink_type), old_ml=old.quantity_ml,
                 old_drink=old_name or drink_label(old.drink_type), water=progress.water_ml,
                 goal=progress.water_goal_ml, percent=Percent(progress.water_percent))
    return ToolResult.success(message, entry_id=str(entry.id), entry_ids=[str(entry.id)], replaced=str(old.id),
                              **progress_data(progress))


def _entry_ids(text: str) -> list[uuid.UUID] | None:
    """Drink entry ids separated by commas; None if one is not an id or there are more than one logging makes."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not 1 <= len(parts) <= MAX_AT_ONCE:
        return None
    try:
        return [uuid.UUID(part) for part in parts]
    except ValueError:
        return None


async def _delete(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    try:
        entry_id = uuid.UUID(args["entry_id"])
    except ValueError:
        return ToolResult.failure(tr("No such drink entry."), "not_found")
    entry = await service.delete_drink(ctx.uow, ctx.user, ctx.actor, entry_id)
    return ToolResult.success(tr("Deleted {ml} ml {drink}.", ml=entry.quantity_ml, drink=drink_label(entry.drink_type)),
                              entry_id=str(entry.id))


async def _progress(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    progress = await service.day_progress(ctx.uow, ctx.user, args.get("date"))
    return ToolResult.success(
        tr("Water: {water} of {goal} ml ({percent}).", water=progress.water_ml, goal=progress.water_goal_ml,
           percent=Percent(progress.water_percent)),
        **progress_data(progress),
    )


async def _set_goal(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ml = await service.set_goal(ctx.uow, ctx.user, ctx.actor, args["daily_ml"], args.get("drink_type", "water"))
    return ToolResult.success(tr("Your daily water goal is now {ml} ml.", ml=ml), daily_ml=ml)


async def _create_preset(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    preset = await service.create_preset(ctx.uow, ctx.user, args["name"], args["drink_type"], args["quantity_ml"])
    return ToolResult.success(tr("Saved the preset {name} ({ml} ml).", name=preset.name, ml=preset.quantity_ml),
                              preset_id=str(preset.id))


async def _list_presets(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    presets = await service.list_presets(ctx.uow, ctx.user)
    return ToolResult.success(
        None, presets=[{"name": p.name, "drink_type": p.drink_type, "quantity_ml": p.quantity_ml} for p in presets]
    )


_TYPE = ToolParam("drink_type", "string", "Kind of drink.", required=True, enum=DRINK_TYPES)
_ML = ToolParam("quantity_ml", "integer", "Amount in millilitres.", minimum=MIN_ML, maximum=MAX_ML,
                label=N_("The amount in ml"))

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("log_drink", "drink", "Log a drink the person had (default portion if no amount), or several alike.",
             (_TYPE, _ML, ToolParam("name", "string", "Name of the drink, e.g. 'Espresso'.", max_length=100),
              ToolParam("count", "integer", "How many such drinks (cups, glasses); 1 if omitted.", minimum=1,
                        maximum=MAX_AT_ONCE, label=N_("The number of drinks"))),
             "write", _log_drink),
    ToolSpec("log_drink_preset", "drink", "Log a drink from one of the person's saved presets.",
             (ToolParam("preset", "string", "Preset name.", required=True, max_length=100),), "write", _log_preset),
    ToolSpec("undo_last_drink", "drink",
             "Remove the most recent drink logged today (of drink_type if given), or exactly the drinks given by id "
             "(those one log_drink made).",
             (ToolParam("entry_ids", "string", "Drink entry ids separated by commas; the latest drink if omitted.",
                        max_length=400),
              ToolParam("drink_type", "string", "Only the latest drink of this kind.", enum=DRINK_TYPES)),
             "write", _undo),
    ToolSpec("correct_last_drink", "drink",
             "Correct today's latest drink when it was logged wrong: a new amount and/or kind replaces it.",
             (ToolParam("quantity_ml", "integer", "The right amount in millilitres.", minimum=MIN_ML, maximum=MAX_ML,
                        label=N_("The amount in ml")),
              ToolParam("drink_type", "string", "The right kind of drink.", enum=DRINK_TYPES),
              ToolParam("name", "string", "Name of the drink, e.g. 'Espresso'.", max_length=100)),
             "write", _correct),
    ToolSpec("delete_drink", "drink", "Delete one drink entry by id.",
             (ToolParam("entry_id", "string", "Drink entry id.", required=True, max_length=64),),
             "destructive", _delete),
    ToolSpec("get_drink_progress", "drink", "Water, coffee and total drinks of a day against the water goal.",
             (ToolParam("date", "date", "Local day (YYYY-MM-DD); today if omitted."),), "read", _progress),
    ToolSpec("set_drink_goal", "drink", "Set the daily water goal in ml.",
             (ToolParam("daily_ml", "integer", "Daily goal in ml.", required=True, minimum=MIN_GOAL_ML,
                        maximum=MAX_GOAL_ML),
              ToolParam("drink_type", "string", "Drink type of the goal (water).", enum=("water",))),
             "write", _set_goal),
    ToolSpec("create_drink_preset", "drink", "Save a drink preset such as 'Bottle' = 500 ml water.",
             (ToolParam("name", "string", "Preset name.", required=True, max_length=100),
              _TYPE, ToolParam("quantity_ml", "integer", "Amount in ml.", required=True, minimum=MIN_ML,
                                maximum=MAX_ML)), "write", _create_preset),
    ToolSpec("list_drink_presets", "drink", "The person's saved drink presets.", (), "read", _list_presets),
)
