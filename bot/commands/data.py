"""/export and /delete_me: a person's data rights. /export sends everything stored about them as one JSON file
(at most one a minute); /delete_me, after a confirmation button, erases all of it and says goodbye
(brain/data_rights.py does both), and the access grants of the person's accounts go with it (`bot.access`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bot.access import forget_accounts
from bot.commands import Command
from bot.turn import Turn
from brain.data_rights import erase_person, export_person, exported_recently
from brain.i18n import N_, tr

DELETE_CONFIRMED = "data_delete_confirm"  # the press that erases a person, and their access grants with them


async def export(turn: Turn, args: str) -> None:
    async with turn.brain.transactions.read() as session:
        recent = await exported_recently(session, turn.user.id)
    if recent:
        turn.say(tr("I've just sent you an export. You can ask for the next one in a minute."))
        return
    body, name = await export_person(turn.brain, turn.user.id)
    turn.say(tr("Here is everything I have stored about you, as one JSON file ({name}). "
                "Keep it safe: it is all your data.", name=name),
             document=body, document_name=name)


async def delete_me(turn: Turn, args: str) -> None:
    turn.say(
        tr("Delete everything I have stored about you: your logs, goals, rituals, memories and settings? "
           "This cannot be undone."),
        buttons=[[turn.button(tr("Delete everything"), DELETE_CONFIRMED),
                  turn.button(tr("Keep my data"), "data_delete_keep")]],
    )


async def delete_confirmed(turn: Turn, payload: dict[str, Any]) -> None:
    inbound = turn.inbound

    async def without_access(session: AsyncSession, accounts: Sequence[tuple[str, str]]) -> None:
        # Their grants hold their account ids (a Telegram grant may name the @username): they go with the data.
        named = [(inbound.platform, f"@{inbound.username.lower()}")] if inbound.username else []
        await forget_accounts(session, [*accounts, *named])

    # The goodbye is queued by the erasure itself (the turn's own replies would go with the person's rows).
    await erase_person(
        turn.brain, turn.user.id, turn.t(tr("All your data is deleted. If you write again, you start fresh.")),
        platform=inbound.platform, chat_id=inbound.chat_id,
        slot=f"{inbound.platform}:{inbound.chat_id}:{inbound.message_id}", with_accounts=without_access,
    )


async def delete_declined(turn: Turn, payload: dict[str, Any]) -> None:
    turn.say(tr("Nothing was deleted. Your data stays as it is."))


COMMANDS = (
    Command("export", "/export", N_("All your data as one file"), export, aliases=("daten",)),
    Command("delete_me", "/delete_me", N_("Delete everything I have stored about you"), delete_me,
            aliases=("deleteme", "loeschen")),
)

ACTIONS = {DELETE_CONFIRMED: delete_confirmed, "data_delete_keep": delete_declined}
