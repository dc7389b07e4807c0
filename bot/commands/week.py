"""/week: a picture of the last seven days (water against the goal, tasks done, calories, streaks),
sent as a PNG; adapters without pictures (the console) save it and say where."""

from __future__ import annotations

import asyncio

from bot.commands import Command
from bot.turn import Turn
from brain.i18n import N_, tr
from brain.projections.week import render_week_chart, week_series


async def week(turn: Turn, args: str) -> None:
    async with turn.brain.transactions.read() as session:
        series = await week_series(session, turn.user, turn.today)
    # Drawing takes a few hundred milliseconds of CPU: off the event loop, so other chats keep flowing.
    png = await asyncio.to_thread(render_week_chart, series, turn.render)
    turn.say(tr("Your last 7 days"), image_png=png)


COMMANDS = (Command("week", "/week", N_("A chart of your last 7 days"), week, aliases=("woche",)),)
