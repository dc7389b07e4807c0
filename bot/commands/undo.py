"""/undo: take back the last thing you logged or created (one step per call)."""

from __future__ import annotations

from bot.commands import Command
from bot.turn import Turn
from brain.events.actor import USER
from brain.i18n import N_
from brain.undo import undo_last


async def undo(turn: Turn, args: str) -> None:
    result = await undo_last(turn.brain.transactions, turn.brain.tools, turn.user.id, USER)
    turn.say_result(result)


COMMANDS = (Command("undo", "/undo", N_("Take back your last entry"), undo, aliases=("rückgängig",)),)
