"""/week: a picture of the last seven days (water against the goal, tasks done, calories, streaks),
sent as a PNG; adapters without pictures (the console) save it and say where."""

from __future__ import annotations

import asyncio

from bot.commands import Command
from bot.turn import Turn
from brain.i18n import N_, Text, ntr, tr
from brain.projections.week import WeekSeries, render_week_chart, week_series


async def week(turn: Turn, args: str) -> None:
    async with turn.brain.transactions.read() as session:
        series = await week_series(session, turn.user, turn.today)
    # Drawing takes a few hundred milliseconds of CPU: off the event loop, so other chats keep flowing.
    png = await asyncio.to_thread(render_week_chart, series, turn.render)
    turn.say("\n".join(turn.t(line) for line in week_in_words(series)), image_png=png)


def week_in_words(series: WeekSeries) -> list[Text]:
    """The picture's numbers in a few lines, for whoever cannot see it (a screen reader, the terminal, a caption).
    Averages run from the first day with anything logged: a person who began on Tuesday has no empty Monday."""
    logged = [i for i, values in enumerate(zip(series.water_ml, series.coffee, series.tasks_done, series.kcal,
                                               strict=True)) if any(values)]
    if not logged:
        return [tr("Your last 7 days"), tr("Nothing logged in these seven days yet.")]
    water = series.water_ml[logged[0]:]
    reached = sum(ml >= series.water_goal_ml for ml in water)
    lines = [tr("Your last 7 days"),
             ntr("Water: {ml} ml a day on average over {count} day; goal reached on {reached}.",
                 "Water: {ml} ml a day on average over {count} days; goal reached on {reached}.", len(water),
                 ml=round(sum(water) / len(water)), reached=ntr("{count} day", "{count} days", reached))]
    if cups := sum(series.coffee):
        lines.append(ntr("Coffee: {count} cup", "Coffee: {count} cups", cups))
    lines.append(tr("Tasks done: {count}", count=sum(series.tasks_done)))
    eaten = [kcal for kcal in series.kcal if kcal > 0]
    if eaten:
        lines.append(ntr("Calories: {kcal} kcal on the day with calories given.",
                         "Calories: {kcal} kcal a day on average on the {count} days with calories given.",
                         len(eaten), kcal=round(sum(eaten) / len(eaten))))
    return lines


COMMANDS = (Command("week", "/week", N_("A chart of your last 7 days"), week, aliases=("woche",)),)
