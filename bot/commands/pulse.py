"""/pulse (the reminder rules, what they learned, and an Undo per learned change), /pause [days] and
/resume, and the buttons of a nudge: act now, snooze 15 min / 1 h / tomorrow, dismiss."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import time
from typing import Any

from babel.dates import get_day_names

from bot.commands import Command
from bot.commands.onboarding import parse_quiet_hours
from bot.inbound import split_command
from bot.parsing.amounts import parse_count
from bot.parsing.dates import find_date_range
from bot.scheduler.jobs import PULSE_RULES
from bot.turn import PendingButton, Turn
from brain.events.actor import USER
from brain.feedback.learning import active_adaptations, combine, shifted
from brain.feedback.models import MOVED_LATER, RuleAdaptation
from brain.i18n import N_, Text, tr
from brain.people.local_time import local_now
from brain.people.service import get_user
from brain.pulse.activity import is_paused, pulse_states
from brain.pulse.models import ACTED, DISMISSED, SENT
from brain.pulse.nudges import (
    NudgeAction,
    content_from_json,
    decide_nudge,
    lock_nudge,
    open_for_press,
    snooze_nudge,
    snooze_until,
)
from rules import DailyAt, EventTrigger, Every, Rule, Weekly

UNDO_ACTION = "pulse_undo"


# ---- /pulse --------------------------------------------------------------------------------------------
def _schedule(turn: Turn, rule: Rule, offset: int) -> str:
    parts: list[str] = []
    daily = [shifted(t.at, offset) for t in rule.triggers if isinstance(t, DailyAt)]
    if daily:
        times = ", ".join(turn.render.format_value(t) for t in daily if t is not None)
        parts.append(turn.t(tr("daily at {times}", times=times)))
    for trigger in rule.triggers:
        if isinstance(trigger, Every):
            parts.append(turn.t(tr("every {minutes} min from {start} to {end}", minutes=trigger.minutes,
                                   start=shifted(trigger.start, offset) or trigger.start, end=trigger.end)))
        elif isinstance(trigger, Weekly):
            day = get_day_names("wide", locale=turn.render.locale)[trigger.weekday]
            parts.append(turn.t(tr("{day}s at {time}", day=day, time=shifted(trigger.at, offset) or trigger.at)))
        elif isinstance(trigger, EventTrigger):
            parts.append(turn.t(tr("when it happens")))
    return "; ".join(parts)


def _change(adaptation: RuleAdaptation) -> Text:
    if adaptation.change == MOVED_LATER:
        return tr("moved {minutes} min later", minutes=adaptation.offset_minutes)
    return tr("sent less often (every {n}. time)", n=adaptation.backoff_factor)


async def pulse(turn: Turn, args: str) -> None:
    async with turn.brain.transactions.read() as session:
        state = (await pulse_states(session, [turn.user.id])).get(turn.user.id)
        adaptations = await active_adaptations(session, turn.user.id)
    lines: list[Text | str] = [tr("Your reminders:")]
    buttons: list[list[PendingButton]] = []
    for rule in PULSE_RULES:
        mine = [a for a in adaptations if a.rule == rule.name]
        tuning = combine(mine)
        line = f"• {turn.t(tr(rule.label))}: {_schedule(turn, rule, tuning.offset_minutes)}"
        if mine:
            line += " (" + ", ".join(turn.t(_change(a)) for a in mine) + ")"
        lines.append(line)
        for a in mine:
            buttons.append([turn.button(tr("Undo: {rule}, {change}", rule=tr(rule.label), change=_change(a)),
                                        UNDO_ACTION, adaptation_id=str(a.id))])
    lines.append(tr("Quiet hours: {start} to {end}.", start=turn.user.quiet_start, end=turn.user.quiet_end))
    lines.append(tr("/quiet 22-7 changes them."))
    if is_paused(state, turn.now):
        until = state.paused_until if state else None
        lines.append(tr("Paused until {until}. /resume turns reminders back on.", until=until) if until
                     else tr("Paused until you say /resume."))
    else:
        lines.append(tr("/pause [days] pauses all reminders."))
    lines.append(tr("The reminders you set yourself: /remind lists them."))
    turn.say(*lines, buttons=buttons)


async def quiet(turn: Turn, args: str) -> None:
    """Quiet hours: shown, or set from a span as setup takes it ("22-7", "23:00-06:30", "von 22 bis 6")."""
    if not args.strip():
        turn.say(tr("Quiet hours: {start} to {end}.", start=turn.user.quiet_start, end=turn.user.quiet_end),
                 tr("/quiet 22-7 changes them."))
        return
    span = parse_quiet_hours(args)
    half = re.fullmatch(r"\s*(?P<start>\d{1,2}:\d{2})?\s*-\s*(?P<end>\d{1,2}:\d{2})?\s*", args)
    if span is None and half is not None and (half["start"] is None) != (half["end"] is None):
        # One end said ("no reminders after 10pm" is /quiet 22:00-): the other stays as it was.
        said = _clock(half["start"] or half["end"])
        if said is not None:
            span = (said, turn.user.quiet_end) if half["start"] else (turn.user.quiet_start, said)
            span = span if span[0] != span[1] else None
    if span is None:
        turn.say(tr("I couldn't read that. Write the quiet hours like /quiet 22-7 or /quiet 22:30-6:30."))
        return
    async with turn.brain.transactions.begin() as uow:
        user = await get_user(uow.session, turn.user.id)
        user.quiet_start, user.quiet_end = span
    turn.user.quiet_start, turn.user.quiet_end = span
    turn.say(tr("Quiet hours are now {start} to {end}: no reminders then.", start=span[0], end=span[1]))


def _clock(text: str) -> time | None:
    """ "22:00" as a time of day, or None ("25:00")."""
    hours, minutes = (int(part) for part in text.split(":"))
    try:
        return time(0 if hours == 24 else hours, minutes)
    except ValueError:
        return None


async def pause(turn: Turn, args: str) -> None:
    """/pause [days], or a vacation: /vacation 3.-10.8., /urlaub bis Freitag (streaks and goals are kept)."""
    call: dict[str, Any] = {}
    if args:
        days = parse_count(args.split()[0]) if len(args.split()) == 1 else None
        span = find_date_range(args, turn.today) if days is None else None
        if days is not None:
            call["days"] = days
        elif span is not None:
            first, last = span
            call["last_day"] = last.isoformat()
            if first is not None:
                call["first_day"] = first.isoformat()
        else:
            turn.say(tr("Usage: /pause [days], e.g. /pause 7, or a vacation: /vacation 3.8.-10.8."))
            return
    turn.say_result(await turn.tool("pause_pulse", call))


async def resume(turn: Turn, args: str) -> None:
    turn.say_result(await turn.tool("resume_pulse", {}))


async def undo_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    turn.say_result(await turn.tool("undo_rule_adaptation", {"adaptation_id": str(payload.get("adaptation_id"))}))


# ---- nudge buttons -------------------------------------------------------------------------------------
async def nudge_pressed(turn: Turn, payload: dict[str, Any], commands: Mapping[str, Command]) -> None:
    try:
        nudge_id = uuid.UUID(str(payload["nudge_id"]))
        delivery = int(payload.get("n", 0))
        op = str(payload["op"])
    except (KeyError, ValueError):
        turn.say(tr("That button is not valid."))
        return
    action: NudgeAction | None = None
    async with turn.brain.transactions.begin() as uow:
        found = await open_for_press(uow, turn.user.id, nudge_id, delivery)
        if isinstance(found, Text):
            turn.say(found)
            return
        if op == "dismiss":
            await decide_nudge(uow, found, DISMISSED, USER)
            turn.say(tr("Okay, I'll leave it."))
            return
        if op in ("snooze", "tomorrow"):
            local = local_now(turn.user, uow.now)
            minutes = int(payload.get("minutes", 15)) if op == "snooze" else None
            until = snooze_until(local, minutes=minutes, quiet=(turn.user.quiet_start, turn.user.quiet_end))
            await snooze_nudge(uow, found, until, USER, local_hour=until.hour)
            turn.say(tr("Okay, I'll remind you again at {time}.", time=until))
            return
        actions = content_from_json(found.content).actions
        index = int(payload.get("index", 0))
        if op != "act" or not 0 <= index < len(actions):
            turn.say(tr("That button is not valid."))
            return
        action = actions[index]
    if await _act(turn, action, commands):
        async with turn.brain.transactions.begin() as uow:
            nudge = await lock_nudge(uow.session, turn.user.id, nudge_id)
            if nudge is not None and nudge.status == SENT and nudge.snoozes == delivery:
                await decide_nudge(uow, nudge, ACTED, USER)


async def _act(turn: Turn, action: NudgeAction, commands: Mapping[str, Command]) -> bool:
    if action.tool is not None:
        result = await turn.tool(action.tool, dict(action.args))
        turn.say_result(result)
        return result.ok
    if action.command is not None:
        name, args = split_command(action.command)
        command = commands.get(name)
        if command is not None:
            await command.handler(turn, args)
            return True
    turn.say(tr("That button is not valid."))
    return False


COMMANDS = (
    Command("pulse", "/pulse", N_("Your reminders, what they learned, and undo"), pulse, aliases=("erinnerungen",)),
    Command("quiet", "/quiet 22-7", N_("Quiet hours: no reminders then"), quiet, aliases=("ruhezeit",)),
    Command("pause", "/pause [7]", N_("Pause all reminders (for some days)"), pause),
    Command("vacation", N_("/vacation 3.8.-10.8."), N_("Vacation: no reminders, streaks and goals kept"), pause,
            aliases=("urlaub",)),
    Command("resume", "/resume", N_("Turn reminders back on"), resume, aliases=("weiter",)),
)
# The nudges' own buttons (`nudge_pressed`, kind "nudge") run commands: bot.commands.table registers them with the
# command table.
ACTIONS = {UNDO_ACTION: undo_pressed}
