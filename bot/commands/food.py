"""/meal: log a meal with optional type and nutrition ("/meal lunch Pasta 650 kcal")."""

from __future__ import annotations

from typing import Any

from bot.commands import Command
from bot.parsing.freetext import parse_meal
from bot.turn import Turn
from brain.i18n import N_, tr


async def meal(turn: Turn, args: str) -> None:
    if not args:
        turn.say(tr("Usage: /meal [breakfast|lunch|dinner|snack] <what> [kcal], e.g. /meal lunch Pasta 650 kcal"))
        return
    parsed = parse_meal(args)
    call: dict[str, Any] = parsed[0].args if parsed else {"description": args}
    result = await turn.tool("log_meal", call)
    turn.say_result(result)


COMMANDS = (
    Command("meal", N_("/meal lunch Pasta 650 kcal"), N_("Log a meal"), meal, aliases=("essen", "food")),
)
