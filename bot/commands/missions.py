"""/mission and /missions: standing objectives for the companion ("/mission plan my week every sunday 18:00"),
listed with Pause / Resume, Run now and Delete buttons; and the delivery of a finished run (its summary,
then one message with Approve / Reject per proposal) to the person's outbox.

    /mission <objective> [every sunday 18:00 | daily 07:30 | every 2 hours | manual]

Without a cadence a mission is manual: it runs when the person presses "Run now"."""

from __future__ import annotations

import re
import secrets
import uuid
from datetime import datetime, timedelta
from typing import Any, cast

from bot.commands import Command
from bot.turn import APPROVE, REJECT, PendingButton, Turn
from brain.actions.models import ActionToken
from brain.actions.service import DEFAULT_TTL
from brain.companion.missions import (
    Action,
    Cadence,
    MissionRun,
    cadence_text,
    change_mission,
    create_mission,
    list_missions,
    run_due_missions,
    run_message,
)
from brain.companion.models import Mission
from brain.core import Brain
from brain.i18n import N_, Renderer, tr
from brain.outbox.models import Button, Outbound
from brain.outbox.service import enqueue
from brain.people.models import User

LIST_LIMIT = 10
MISSION_ACTION = "mission"
OUTBOX_KIND = "mission"

_DAYS = {
    "monday": 0, "mondays": 0, "montag": 0, "montags": 0, "mon": 0,
    "tuesday": 1, "tuesdays": 1, "dienstag": 1, "dienstags": 1, "tue": 1,
    "wednesday": 2, "wednesdays": 2, "mittwoch": 2, "mittwochs": 2, "wed": 2,
    "thursday": 3, "thursdays": 3, "donnerstag": 3, "donnerstags": 3, "thu": 3,
    "friday": 4, "fridays": 4, "freitag": 4, "freitags": 4, "fri": 4,
    "saturday": 5, "saturdays": 5, "samstag": 5, "samstags": 5, "sat": 5,
    "sunday": 6, "sundays": 6, "sonntag": 6, "sonntags": 6, "sun": 6,
}
_TIME = r"(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?\s*(?P<suffix>am|pm|uhr|h)?"
_AT = r"(?:\s+(?:at|um))?"
_CADENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("manual", re.compile(r"\s+(?:manual|manually|manuell)$", re.I)),
    ("interval", re.compile(r"\s+(?:every|each|alle)\s+(?:(?P<count>\d{1,4})\s*)?"
                            r"(?P<unit>hours?|h|stunden?|minutes?|mins?|minuten?)$", re.I)),
    ("hourly", re.compile(r"\s+(?:hourly|stündlich|stuendlich)$", re.I)),
    ("daily", re.compile(rf"\s+(?:daily|every\s+day|each\s+day|täglich|taeglich|jeden\s+tag){_AT}(?:\s+{_TIME})?$",
                         re.I)),
    ("weekly", re.compile(rf"\s+(?:(?:every|each|on|jeden|jede|am)\s+)?(?P<day>{'|'.join(_DAYS)}){_AT}"
                          rf"(?:\s+{_TIME})?$", re.I)),
)


class CadenceError(ValueError):
    pass


def parse_mission(text: str) -> tuple[str, Cadence]:
    """'plan my week every sunday 18:00' -> ('plan my week', weekly Sunday 18:00). The cadence phrase is at
    the end; without one the mission is manual. Raises CadenceError for a cadence that cannot be (an
    interval under 15 minutes, 25:00)."""
    text = " ".join(text.split())
    for kind, pattern in _CADENCES:
        found = pattern.search(" " + text)
        if found is None:
            continue
        objective = (" " + text)[:found.start()].strip()
        try:
            return objective, _cadence(kind, found.groupdict())
        except ValueError as bad:
            raise CadenceError(str(bad)) from None
    return text, Cadence("manual")


def _cadence(kind: str, groups: dict[str, Any]) -> Cadence:
    if kind == "manual":
        return Cadence("manual")
    if kind == "hourly":
        return Cadence("interval", minutes=60)
    if kind == "interval":
        count = int(groups.get("count") or 1)
        unit = str(groups["unit"]).lower()
        return Cadence("interval", minutes=count * (60 if unit.startswith(("h", "s")) else 1))
    hour, minute = _clock(groups)
    if kind == "daily":
        return Cadence("daily", hour=hour, minute=minute)
    return Cadence("weekly", hour=hour, minute=minute, weekday=_DAYS[str(groups["day"]).lower()])


def _clock(groups: dict[str, Any]) -> tuple[int, int]:
    if groups.get("hour") is None:
        return 9, 0
    hour, minute = int(groups["hour"]), int(groups.get("minute") or 0)
    suffix = (groups.get("suffix") or "").lower()
    if suffix in ("am", "pm") and not 1 <= hour <= 12:
        raise ValueError("12-hour times go from 1 to 12")
    if suffix == "pm" and hour != 12:
        hour += 12
    elif suffix == "am" and hour == 12:
        hour = 0
    return hour, minute


# ---- commands ------------------------------------------------------------------------------------------
async def mission(turn: Turn, args: str) -> None:
    if not args.strip():
        turn.say(tr("Usage: /mission <what> [every sunday 18:00 | daily 07:30 | every 2 hours | manual], "
                    "e.g. /mission plan my week every sunday 18:00"))
        return
    try:
        objective, cadence = parse_mission(args)
    except CadenceError:
        turn.say(tr("I couldn't use that schedule. Try \"every sunday 18:00\", \"daily 07:30\", \"every 2 hours\" "
                    "(at least every 15 minutes) or \"manual\"."))
        return
    if not objective:
        turn.say(tr("What should the mission do? E.g. /mission plan my week every sunday 18:00"))
        return
    created = await create_mission(turn.brain, turn.user, objective, cadence)
    when = cadence_text(created, turn.render)
    if created.next_run_at is None:
        turn.say(tr("Mission created: {title}. It runs {cadence}.", title=created.title, cadence=when),
                 buttons=[[_button(turn, tr("Run now"), "run_now", created)]])
        return
    turn.say(tr("Mission created: {title}. It runs {cadence}; next run {time}.", title=created.title, cadence=when,
                time=created.next_run_at))


async def missions(turn: Turn, args: str) -> None:
    async with turn.brain.transactions.read() as session:
        found = await list_missions(session, turn.user.id)
    if not found:
        turn.say(tr("You have no missions. Create one with /mission, e.g. /mission plan my week every sunday 18:00"))
        return
    turn.say(tr("Your missions:"))
    for position, item in enumerate(found[:LIST_LIMIT], start=1):
        turn.say(*_lines(turn, position, item), buttons=[_buttons(turn, item)])


def _lines(turn: Turn, position: int, item: Mission) -> list[Any]:
    lines: list[Any] = [f"{position}. {item.title}"]
    cadence = cadence_text(item, turn.render)
    if item.state == "paused":
        lines.append(tr("{cadence} · paused", cadence=cadence))
    elif item.next_run_at is not None:
        lines.append(tr("{cadence} · next run {time}", cadence=cadence, time=item.next_run_at))
    else:
        lines.append(cadence)
    return lines


def _buttons(turn: Turn, item: Mission) -> list[PendingButton]:
    toggle = (_button(turn, tr("Resume"), "resume", item) if item.state == "paused"
              else _button(turn, tr("Pause"), "pause", item))
    return [toggle, _button(turn, tr("Run now"), "run_now", item), _button(turn, tr("Delete"), "delete", item)]


def _button(turn: Turn, label: Any, action: Action, item: Mission) -> PendingButton:
    return turn.button(label, MISSION_ACTION, op=action, mission_id=str(item.id))


async def mission_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    op = str(payload.get("op", ""))
    try:
        mission_id = uuid.UUID(str(payload.get("mission_id", "")))
    except ValueError:
        mission_id = None
    if op not in ("pause", "resume", "run_now", "delete") or mission_id is None:
        turn.say(tr("That button is not valid."))
        return
    changed = await change_mission(turn.brain, turn.user, mission_id, cast(Action, op))
    if changed is None:
        turn.say(tr("That mission does not exist any more."))
    elif op == "pause":
        turn.say(tr("Paused: {title}.", title=changed.title))
    elif op == "resume":
        turn.say(tr("Resumed: {title}.", title=changed.title))
    elif op == "delete":
        turn.say(tr("Deleted: {title}.", title=changed.title))
    else:
        turn.say(tr("{title} runs within the next minute.", title=changed.title))


WAITS = True  # the embedder and the language model (see bot.commands)

COMMANDS = (
    Command("mission", N_("/mission plan my week every sunday 18:00"), N_("Give the assistant a standing task"),
            mission),
    Command("missions", "/missions", N_("Your missions: pause, resume, run, delete"), missions),
)
ACTIONS = {MISSION_ACTION: mission_pressed}


# ---- running and delivering --------------------------------------------------------------------------------
async def run_missions(brain: Brain, now: datetime, *, idle_hold: timedelta = timedelta(0),
                       grace: timedelta | None = None) -> list[MissionRun]:
    """Runs the due missions and delivers each run; for the scheduler and the terminal chat's ticker. A person in a
    conversation gets theirs once they have been quiet for `idle_hold` (at most `grace` late)."""
    companion = brain.companion
    if companion is None:
        return []

    async def deliver(run: MissionRun) -> None:
        await deliver_run(brain, run)

    return await run_due_missions(brain, companion.llm, now, deliver=deliver, idle_hold=idle_hold, grace=grace)


async def deliver_run(brain: Brain, run: MissionRun) -> None:
    """The run's summary, then each proposal with Approve / Reject, into the person's outbox."""
    async with brain.transactions.begin() as uow:
        user = await uow.session.get(User, run.user_id)
        if user is None:
            return
        render = Renderer(user.locale, user.timezone)
        await enqueue(uow.session, user.id, Outbound(text=render(run_message(run))), kind=OUTBOX_KIND,
                      slot=f"{run.iteration_id}:summary")
        for call in run.proposals:
            pid = call.proposal_id
            assert pid is not None
            tokens = [ActionToken(token=secrets.token_urlsafe(8), user_id=user.id, kind=kind,
                                  payload={"proposal_id": pid}, single_use=True, expires_at=uow.now + DEFAULT_TTL)
                      for kind in (APPROVE, REJECT)]
            text = render(call.result.message) if call.result is not None and call.result.message else call.message
            buttons = [[Button(label=render(tr("Approve")), token=tokens[0].token),
                        Button(label=render(tr("Reject")), token=tokens[1].token)]]
            if await enqueue(uow.session, user.id, Outbound(text=text, buttons=buttons), kind=OUTBOX_KIND,
                             slot=f"{run.iteration_id}:{pid}") is not None:
                uow.session.add_all(tokens)
