"""/facts: what the brain has learned about the person (from their logs, from how they answer nudges, and what the
model proposed), most confident first, with how sure it is and a delete button each; "/facts delete 2" deletes one,
which is then not learned again for 90 days."""

from __future__ import annotations

from typing import Any

from bot.commands import Command
from bot.turn import PendingButton, Turn
from brain.errors import DomainError
from brain.events.actor import USER
from brain.i18n import N_, Percent, tr
from brain.learning.service import forget_fact, list_facts
from brain.learning.wording import fact_text

FORGET_ACTION = "fact_forget"
DELETE_WORDS = frozenset({"delete", "remove", "forget", "löschen", "loeschen", "vergessen", "entfernen"})
SOURCES = {"rules": N_("from your logs"), "feedback": N_("from your answers to my nudges"),
           "model": N_("my guess from your week")}
BUTTONS_SHOWN = 10


async def facts(turn: Turn, args: str) -> None:
    verb, _, reference = args.strip().partition(" ")
    if verb.casefold() in DELETE_WORDS:
        await _forget(turn, reference)
        return
    if args.strip():
        turn.say(tr("Usage: /facts, or /facts delete 2"))
        return
    async with turn.brain.transactions.begin() as uow:
        listed = await list_facts(uow, turn.user)
    if not listed:
        turn.say(tr("I haven't learned anything about you yet. After a week of logging I start noticing patterns."))
        return
    lines = [turn.t(tr("What I think I know about you (how sure I am):"))]
    buttons: list[PendingButton] = []
    for fact in listed:
        source = turn.t(tr(SOURCES.get(fact.source, SOURCES["rules"])))
        sure = turn.render.format_value(Percent(round(fact.confidence * 100)))
        lines.append(f"{fact.position}. {turn.t(fact.said)} ({sure}, {source})")
        if len(buttons) < BUTTONS_SHOWN:
            buttons.append(turn.button(f"✕ {fact.position}", FORGET_ACTION, fact_id=str(fact.id)))
    lines.append(turn.t(tr("Below 50% I keep it to myself. ✕ deletes one, and I won't learn it again for 90 days.")))
    turn.say("\n".join(lines), buttons=[buttons[i:i + 5] for i in range(0, len(buttons), 5)])


async def _forget(turn: Turn, reference: str) -> None:
    if not reference.strip():
        turn.say(tr("Which fact? /facts delete 2 deletes the second one in the list."))
        return
    try:
        async with turn.brain.transactions.begin() as uow:
            fact = await forget_fact(uow, turn.user, USER, reference)
    except DomainError as refused:
        turn.say(refused.text)
        return
    turn.say(tr("Deleted. I won't learn that again for 90 days."),
             f"({turn.t(fact_text(fact.key, fact.statement, fact.said))})")


async def forget_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    await _forget(turn, str(payload.get("fact_id", "")))


COMMANDS = (Command("facts", "/facts", N_("What I have learned about you, and delete a fact"), facts,
                    aliases=("fakten",)),)
ACTIONS = {FORGET_ACTION: forget_pressed}
