"""/undo: take back the last thing you logged or created (one step per call), or the memory you just asked for with
/remember when that came last."""

from __future__ import annotations

from bot.commands import Command
from bot.turn import Turn
from brain.events.actor import USER
from brain.i18n import N_, tr
from brain.undo import UNDO_WINDOW, last_step_at, undo_last


async def undo(turn: Turn, args: str) -> None:
    memory = turn.brain.memory
    if memory is not None:
        # A memory asked for is not an event: without this, /undo right after /remember took back an older entry.
        asked = await memory.latest_asked_for(turn.user.id, turn.now - UNDO_WINDOW)
        last = await last_step_at(turn.brain.transactions, turn.user.id, USER) if asked is not None else None
        if asked is not None and (last is None or asked.at > last):
            if asked.node_id is not None and await memory.forget(turn.user.id, asked.node_id, undoing=True):
                turn.say(tr("Forgotten: memory #{number} is gone.", number=str(asked.node_id)))
            elif asked.entry_id is not None and await memory.drop_repeat(turn.user.id, asked.entry_id):
                # It only repeated a memory there was already: that one stays, and the next /undo goes further back.
                turn.say(tr("Taken back. It repeated memory #{number}, which I still remember.",
                            number=str(asked.repeated)) if asked.repeated is not None else
                         tr("Taken back. It repeated something I still remember."))
            else:
                turn.say(tr("Your last change cannot be undone, so I left everything as it is."))
            return
    result = await undo_last(turn.brain.transactions, turn.brain.tools, turn.user.id, USER)
    turn.say_result(result)


COMMANDS = (Command("undo", "/undo", N_("Take back your last entry"), undo, aliases=("rückgängig",)),)
