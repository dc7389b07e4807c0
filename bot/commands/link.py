"""/link: one person, several chat apps. `/link` in one app gives a one-time code (ten minutes, single
use); `/link CODE` in the other joins both identities to the same companion. Which side keeps its data,
and when a link is refused, is decided in brain.people.linking."""

from __future__ import annotations

from bot.commands import Command
from bot.turn import Turn
from brain.errors import DomainError
from brain.i18n import N_, Renderer, tr
from brain.people.linking import LINK_CODE_TTL, create_link_code, link_with_code


async def link(turn: Turn, args: str) -> None:
    if not args.strip():
        async with turn.brain.transactions.begin() as uow:
            code = await create_link_code(uow.session, turn.user.id, turn.inbound.platform, now=uow.now)
        turn.say(
            tr("Your link code: {code}", code=code),
            tr("Send /link {code} in your other chat app within {minutes} minutes. The code works once.",
               code=code, minutes=int(LINK_CODE_TTL.total_seconds() // 60)),
        )
        return
    try:
        async with turn.brain.transactions.begin() as uow:
            survivor = await link_with_code(uow.session, args, turn.user.id, now=uow.now)
    except DomainError as refused:
        turn.say(refused.text)
        return
    # The person who typed the code may have been absorbed into the other one: answer as the survivor
    # (its language, and its outbox rows, since the absorbed user no longer exists).
    turn.user = survivor
    turn.render = Renderer(survivor.locale, survivor.timezone)
    turn.say(tr("Linked. Both chat apps now reach the same companion, with the same entries."))


COMMANDS = (
    Command("link", N_("/link [code]"), N_("Connect another chat app to the same companion"), link,
            aliases=("verbinden",)),
)
