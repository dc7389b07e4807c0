"""/today: the day at a glance — tasks, calendar, drinks, meals and places — in the person's zone."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.commands import Command
from bot.turn import Turn
from brain.i18n import N_, tr


async def today(turn: Turn, args: str) -> None:
    r = turn.render
    lines = [turn.t(tr("Today, {date}", date=r.long_date_of(turn.today)))]

    stats = await turn.tool("get_task_stats", {})
    if stats.ok:
        d = stats.data
        lines.append(turn.t(tr("Tasks: {open} open · {done} done today · {overdue} overdue", open=d.get("open", 0),
                               done=d.get("done_today", 0), overdue=d.get("overdue", 0))))
        due = await turn.tool("list_tasks", {"filter": "today", "limit": 5})
        titles = [t["title"] for t in due.data.get("tasks", [])] if due.ok else []
        if titles:
            lines.append("  " + turn.t(tr("Due today: {titles}", titles=", ".join(titles))))

    events = await turn.tool("get_todays_events", {})
    if events.ok:
        items: list[dict[str, Any]] = events.data.get("events", [])
        if not items:
            lines.append(turn.t(tr("Calendar: nothing today")))
        else:
            parts = []
            for item in items[:5]:
                start = datetime.fromisoformat(item["start"])
                when = turn.t(tr("all day")) if item.get("is_all_day") else r.time_of(start)
                parts.append(f"{when} {item['title']}")
            lines.append(turn.t(tr("Calendar: {events}", events=" · ".join(parts))))

    drinks = await turn.tool("get_drink_progress", {})
    if drinks.ok:
        d = drinks.data
        line = turn.t(tr("Water: {ml} ml of {goal} ml ({percent} %)", ml=d["water_ml"], goal=d["water_goal_ml"],
                         percent=d["water_percent"]))
        if d.get("coffee_count"):
            line += " · " + turn.t(tr("Coffee: {count}", count=d["coffee_count"]))
        lines.append(line)

    food = await turn.tool("nutrition_summary", {})
    if food.ok:
        d = food.data
        line = turn.t(tr("Meals: {count} · {kcal} of {goal} kcal", count=d.get("meal_count", 0),
                         kcal=d.get("kcal", 0), goal=d.get("kcal_goal", 2000)))
        if d.get("protein_goal"):
            line += " · " + turn.t(tr("Protein: {g} of {goal} g", g=d.get("protein", 0), goal=d["protein_goal"]))
        lines.append(line)

    places = await turn.tool("get_places", {"visited_today": True}) if turn.brain.registry.get("get_places") else None
    if places is not None and places.ok:
        visited = [p["name"] for p in places.data.get("places", [])]
        if visited:
            lines.append(turn.t(tr("Places today: {names}", names=", ".join(visited))))
    turn.say("\n".join(lines), buttons=[[turn.tool_button(tr("+250 ml water"), "log_drink", drink_type="water",
                                                          quantity_ml=250),
                                         turn.button(tr("Tasks"), "command", text="/tasks")]])


COMMANDS = (Command("today", "/today", N_("Your day at a glance"), today, aliases=("heute",)),)
