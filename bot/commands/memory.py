"""/remember, /recall and /forget: the person's own hand on the long-term memory. /recall shows why each
memory came up; /forget removes one memory or, after a confirmation button, everything remembered."""

from __future__ import annotations

import logging
import re
from typing import Any

from bot.commands import Command
from bot.parsing.questions import asks_plainly
from bot.turn import Turn
from brain.i18n import N_, Percent, Text, tr
from brain.memory.api import Memory
from brain.memory.models import ANSWERED, ASSISTANT, CONVERSATION
from brain.tools.coercion import visible

log = logging.getLogger(__name__)

RECALL_SHOWN = 5
ASKED_MORE = 3  # asked for beyond RECALL_SHOWN, for the person's own questions that are left out
WEAK_MEANING = 0.2  # a cosine below this is not 'close in meaning' where another reason brought the memory
MAX_MEMORY_NUMBER = 2**63 - 1  # memory numbers are bigint ids; a longer number names none
SNIPPET_CHARS = 200


def _memory(turn: Turn) -> Memory | None:
    memory = turn.brain.memory
    if memory is None:
        turn.say(tr("The long-term memory is not switched on here."))
    return memory


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS - 1].rstrip() + "…"


async def remember(turn: Turn, args: str) -> None:
    text = visible(args)
    if not text:
        turn.say(tr("Usage: /remember <what>, e.g. /remember Anna's birthday is on 12 May"))
        return
    memory = _memory(turn)
    if memory is None:
        return
    # Said on purpose: recallable at once, not after the next promotion run, and /undo can take it back.
    repeated = await memory.remember_on_request(turn.user.id, text, turn.now)
    if repeated is not None:
        turn.say(tr("I already remember that (memory #{number}).", number=str(repeated)))
        return
    turn.say(tr("I'll remember that."))


async def recall(turn: Turn, args: str) -> None:
    question = args.strip()
    if not question:
        turn.say(tr("Usage: /recall <question>, e.g. /recall When is Anna's birthday?"))
        return
    memory = _memory(turn)
    if memory is None:
        return
    found = [item for item in await memory.recall(turn.user.id, question, turn.now, k=RECALL_SHOWN + ASKED_MORE,
                                                  mode="reflection")
             if item.meant]  # not the nearest of unrelated memories when nothing is about it
    # The person's own earlier questions read most like the question, but tell nothing: what they said comes first,
    # and a question only when nothing else is remembered about it.
    told = [item for item in found if not _asked(item)]
    found = (told or found)[:RECALL_SHOWN]
    if not found:
        turn.say(tr("I don't remember anything about that."))
        return
    lines: list[Text | str] = [tr("What I remember:")]
    for item in found:
        lines.append(f"#{item.id} · {turn.render.date_of(item.at)} · {_said(turn, item)}")
        lines.append(tr("   why: {why}", why=_why(turn, item)))
    lines.append(tr("/forget <number> removes one of them."))
    turn.say(*lines)


ANSWERED_SHOWN = 3


async def _promote_just_said(turn: Turn, memory: Memory) -> None:
    """What the person said a moment ago is not promoted yet: it is, now, for them alone (one batch: a backlog, as
    after an import, is the background job's). A failure leaves it to that job; what is promoted still answers."""
    try:
        await memory.ingest_until_promoted(turn.user.id, max_rounds=1)
    except Exception:
        log.exception("promotion of what was just said failed")


async def _told_about(turn: Turn, memory: Memory, words: str, shown: int) -> list[Any]:
    """The person's memories clearly about `words`, best first, what was just said included; not their own earlier
    questions (they ask, they tell nothing)."""
    await _promote_just_said(turn, memory)
    return [item for item in await memory.recall(turn.user.id, words, turn.now, k=shown + ASKED_MORE,
                                                 mode="reflection")
            if item.meant and not _asked(item)]


async def answer_from_memory(turn: Turn, question: str, before: Text | None = None) -> bool:
    """A question no log answers, answered with what the person told the memory about it ("Wann hat Anna
    Geburtstag?" after "/remember Annas Geburtstag ist am 12. Mai"), `before` first; False, saying nothing, when the
    memory is off or holds nothing about it but earlier questions. Without a model this is the answer a companion
    that remembers can give."""
    memory = turn.brain.memory
    if memory is None:
        return False
    found = await _told_about(turn, memory, question, ANSWERED_SHOWN)
    if not found:
        return False
    # The best memory, and beside it only those that share a word with the question: an answer, not a list of
    # everything that is near ("Wie heißt meine Katze?" is not answered with "Ich heiße Max").
    found = [found[0], *(item for item in found[1:] if item.lexical)][:ANSWERED_SHOWN]
    if before is not None:
        turn.say(before)
    lines: list[Text | str] = [tr("Here is what I remember about that:")]
    lines += [f"• {_said(turn, item)} ({turn.render.date_of(item.at)})" for item in found]
    lines.append(tr("/recall shows why, /forget removes one."))
    turn.say(*lines)
    return True


ABOUT_ME_SHOWN = 5


async def about_me(turn: Turn, *, name: bool = False) -> None:
    """"What do you know about me?": what the person told about themselves, newest first, or that there is none;
    with `name` ("who am I?") their name first."""
    said_name: list[Text] = []
    if name:
        said_name.append(tr("You're {name}.", name=turn.user.display_name) if turn.user.display_name
                         else tr("You haven't told me your name yet. Tell me, e.g. \"my name is Sam\"."))
    memory = turn.brain.memory
    if memory is None:
        turn.say(*(said_name or [tr("The long-term memory is not switched on here.")]))
        return
    await _promote_just_said(turn, memory)
    told = await memory.told_about_self(turn.user.id, ABOUT_ME_SHOWN)
    if not told:
        turn.say(*(said_name or [tr("You haven't told me anything about yourself yet. Tell me, or use /remember, "
                                    "e.g. /remember I am vegetarian.")]))
        return
    turn.say(*said_name, tr("What you told me about yourself:"),
             *(f"• {_snippet(said)} ({turn.render.date_of(at)})" for said, at in told),
             tr("/recall <question> finds more, /forget removes one."))


def _asked(item: Any) -> bool:
    """Whether a memory is a question the person asked (it asks, it does not tell)."""
    return bool(item.speaker == "user" and asks_plainly(item.text))  # "what are my tasks" too


def _said(turn: Turn, item: Any) -> str:
    """A memory's words, and who said them when it was not the person: a reply of the companion is not something
    the person told it, and a memory of an imported chat may be another participant's."""
    snippet = _snippet(item.text)
    if item.speaker == "user":
        return snippet
    if item.speaker == ASSISTANT:
        return turn.t(tr("I said: {text}", text=snippet))
    return f"{item.speaker}: {snippet}"


# What an edge's layer (brain.memory.models.LAYERS) means to a person.
REASONS: dict[str, str] = {
    "entity": N_("the same person, place or thing"), "embedding": N_("a similar meaning"),
    "themes": N_("the same topic"), "timeline": N_("the same time"),
    CONVERSATION: N_("said in the same conversation"), ANSWERED: N_("my answer to it fits the question"),
}


def _why(turn: Turn, item: Any) -> str:
    """Why a memory came, in the person's words: how close it is to the question, or the memories it was reached
    through and what links them."""
    if item.route:
        route = " → ".join(f"#{node}" for node in item.route)
        reasons = {reason for step in item.route_reasons for reason in step if reason in REASONS}
        named = ", ".join(turn.t(tr(REASONS[r])) for r in sorted(reasons, key=list(REASONS).index))
        return turn.t(tr("linked through {route} ({reasons})", route=route, reasons=named) if named else
                      tr("linked through {route}", route=route))
    parts = []
    # How close in meaning, unless it is so little that another reason brought the memory ("close in meaning (3%)"
    # for a memory found by the day asked about reads as if it were unrelated).
    if item.vector >= WEAK_MEANING or not (item.lexical or item.in_window):
        parts.append(turn.t(tr("close in meaning ({percent})", percent=Percent(max(0, round(item.vector * 100))))))
    if item.lexical:
        parts.append(turn.t(tr("shares words with the question")))
    if item.in_window:
        parts.append(turn.t(tr("in the time asked about")))
    return ", ".join(parts)


async def forget(turn: Turn, args: str) -> None:
    what = args.strip().lstrip("#").lower()
    if not what:
        turn.say(tr("Usage: /forget <number> (from /recall), /forget <what it was about>, or /forget all"))
        return
    memory = _memory(turn)
    if memory is None:
        return
    if what in ("all", "everything", "alles"):
        turn.say(
            tr("Forget everything I remember about you, and our conversation so far? Your logs (tasks, drinks, meals, "
               "places, calendar) stay. This cannot be undone."),
            buttons=[[turn.button(tr("Yes, forget everything"), "memory_forget_all"),
                      turn.button(tr("Keep it"), "memory_forget_keep")]],
        )
        return
    if not what.isdecimal():  # what int() reads: "²" is a digit to isdigit(), not a number
        await _offer_to_forget(turn, memory, args.strip())
        return
    number = int(what)  # "00012" and "１２" are 12
    if number <= MAX_MEMORY_NUMBER and await memory.forget(turn.user.id, number):
        turn.say(tr("Forgotten: memory #{number} is gone.", number=str(number)))
    else:
        turn.say(tr("I have no memory #{number}.", number=str(number) if number <= MAX_MEMORY_NUMBER else what))


FORGET_OFFERED = 3
FORGET_ONE = "memory_forget_one"


async def _offer_to_forget(turn: Turn, memory: Memory, words: str) -> None:
    """"/forget the bike lock code", "vergiss den Code vom Fahrradschloss": the memories about it, each with a
    button that forgets it; nothing is forgotten before one is pressed (the words may find more than was meant)."""
    found = (await _told_about(turn, memory, words, FORGET_OFFERED))[:FORGET_OFFERED]
    if not found:
        turn.say(tr("I don't remember anything about that. /recall <question> shows what I remember."))
        return
    lines: list[Text | str] = [tr("Which one should I forget?")]
    lines += [f"#{item.id} · {turn.render.date_of(item.at)} · {_said(turn, item)}" for item in found]
    turn.say(*lines, buttons=[[turn.button(tr("Forget #{number}", number=str(item.id)), FORGET_ONE, memory=item.id)
                               for item in found]])


async def forget_one_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    memory = _memory(turn)
    if memory is None:
        return
    try:
        number = int(payload["memory"])
    except (KeyError, TypeError, ValueError):
        turn.say(tr("Which memory? /recall shows their numbers, e.g. /forget 12"))
        return
    if await memory.forget(turn.user.id, number):
        turn.say(tr("Forgotten: memory #{number} is gone.", number=str(number)))
    else:
        turn.say(tr("I have no memory #{number}.", number=str(number)))


# Forgetting said in words: "forget the bike lock code", "please forget that my code is 4711", "vergiss das mit dem
# Schloss". Not "don't forget ..." or "vergiss nicht ..." (a task), and not "forget it" (never mind).
_FORGET_SAID_RE = re.compile(r"^(?:please\s+|bitte\s+)?(?:forget|vergiss|vergesse)\s+(?:bitte\s+)?"
                             r"(?:about\s+|that\s+|das\s+mit\s+|dass\s+)?(?P<what>.+?)[\s.!]*$", re.I)
_NOT_FORGET_WHAT_RE = re.compile(r"^(?:it|this|that|es|das|nicht|not|to|zu|about\s+it|all|everything|alles)$"
                                 r"|^(?:nicht|not|to)\b", re.I)


def forget_said(text: str) -> str | None:
    """What a message asks to be forgotten, in words; None for anything else."""
    said = _FORGET_SAID_RE.match(text.strip())
    if said is None or _NOT_FORGET_WHAT_RE.match(said.group("what")):
        return None
    return said.group("what")


async def forget_all_confirmed(turn: Turn, payload: dict[str, Any]) -> None:
    memory = _memory(turn)
    if memory is None:
        return
    await memory.forget_everything(turn.user.id)
    turn.say(tr("Done: I have forgotten everything I remembered about you."))


async def forget_all_declined(turn: Turn, payload: dict[str, Any]) -> None:
    turn.say(tr("Nothing was forgotten."))


WAITS = True  # the embedder and the language model (see bot.commands)

COMMANDS = (
    Command("remember", N_("/remember Anna's birthday is on 12 May"), N_("Remember something for later"), remember,
            aliases=("merken", "merk")),
    # ("/erinnern" and "/erinnerung" set a reminder: that is what a German who types them asks for.)
    Command("recall", N_("/recall When is Anna's birthday?"), N_("What I remember about something, and why"), recall),
    Command("forget", N_("/forget 12, /forget all"), N_("Forget one memory, or everything"), forget,
            aliases=("vergessen", "vergiss")),
)

ACTIONS = {"memory_forget_all": forget_all_confirmed, "memory_forget_keep": forget_all_declined,
           FORGET_ONE: forget_one_pressed}
