"""The person's daily rhythm: /ritual (lists, starts, schedules and archives rituals, and runs them as button
flows, one message per step), /morning and /evening (when the morning summary and the evening reflection come,
or off). The run's state is in the database (brain.rituals.runner); a button names its run and step, so a
button from an earlier step, or from before a restart, is answered correctly.

A step that waits for words or a number takes them as `/ritual <answer>`; `answer_free_text` lets the dialog
pass plain text to such a step too."""

from __future__ import annotations

import uuid
from datetime import time
from typing import Any

from sqlalchemy import ColumnElement

from bot.commands import Command
from bot.delivery.keyboards import take_off_keyboards
from bot.parsing.amounts import parse_count, parse_volume_ml
from bot.parsing.dates import EVENING, cut, find_bare_hour, find_time, in_part_of_day, written_with_minutes
from bot.turn import PendingButton, Turn
from brain.actions.models import ActionToken
from brain.errors import DomainError
from brain.events.actor import USER
from brain.i18n import N_, Text, ntr, tr
from brain.pulse.activity import in_quiet_hours
from brain.rituals.info import info_lines
from brain.rituals.models import ACTIVE, FINISHED, Ritual
from brain.rituals.runner import Outcome, Progress, ritual_logs
from brain.rituals.service import (
    ListedRitual,
    archive_ritual,
    find_ritual,
    list_rituals,
    ritual_from_template,
    ritual_title,
    schedule_ritual,
    unschedule_ritual,
)
from brain.rituals.steps import (
    BreathingStep,
    ChecklistStep,
    InfoDisplayStep,
    MoodPickerStep,
    NumberInputStep,
    Step,
    TextInputStep,
    ToolCallStep,
)
from brain.rituals.templates import TEMPLATES
from brain.schedules.models import EVENING_REFLECTION, MORNING_SUMMARY
from brain.schedules.service import push_setting, set_push
from brain.schedules.weekdays import EVERY_DAY, describe_weekdays, parse_weekdays
from brain.store.unit_of_work import UnitOfWork

ACTION = "ritual"
MOOD_FACES = {1: "😞", 2: "🙁", 3: "😐", 4: "🙂", 5: "😄"}
_STOP = frozenset({"stop", "cancel", "stopp", "abbrechen", "beenden"})
_SKIP = frozenset({"skip", "überspringen", "ueberspringen"})
_CONTINUE = frozenset({"continue", "resume", "fortsetzen", "weiter"})
_OFF = frozenset({"off", "aus", "none", "never", "nie"})
_ON = frozenset({"on", "an", "ein"})
_DELETE = frozenset({"delete", "archive", "remove", "löschen", "loeschen", "entfernen"})


def _rows(buttons: list[PendingButton], per_row: int = 2) -> list[list[PendingButton]]:
    return [buttons[i:i + per_row] for i in range(0, len(buttons), per_row)]


def _title(turn: Turn, ritual: Ritual) -> str:
    return ritual_title(ritual, turn.render)


def _schedule_text(turn: Turn, listed: ListedRitual) -> str:
    if listed.schedule is None:
        return turn.t(tr("started by hand"))
    return turn.t(tr("{days} at {time}", days=describe_weekdays(listed.schedule.weekdays, turn.render),
                     time=listed.schedule.at))


# ---- /ritual ----------------------------------------------------------------------------------------------
async def ritual(turn: Turn, args: str) -> None:
    runner = turn.brain.rituals
    text = args.strip()
    word = text.split(" ", 1)[0].lower() if text else ""
    current = await runner.current(turn.user)
    if not text:
        await _overview(turn, current)
    elif word in _STOP and len(text.split()) == 1:
        await _stop(turn)
    elif word in _CONTINUE and len(text.split()) == 1:
        if current is None:
            turn.say(tr("No ritual is running. /ritual lists yours."))
        else:
            await _render(turn, current)
    elif word in _SKIP and len(text.split()) == 1 and current is not None and current.step is not None:
        await _show(turn, await runner.answer(turn.user, current.run.id, current.index, skip=True))
    elif current is not None and await _is_answer(turn, current, text):
        await _typed_answer(turn, current, text)
    else:
        await _by_reference(turn, text)


async def _is_answer(turn: Turn, current: Progress, text: str) -> bool:
    """While a step waits for words or a number, anything but the name of a ritual is its answer (so "/ritual
    evening" still starts the evening routine); a number always answers a number step."""
    if isinstance(current.step, NumberInputStep) and _number(current.step, text) is not None:
        return True
    if not isinstance(current.step, TextInputStep | NumberInputStep):
        return False
    return not await _names_a_ritual(turn, text)


async def _names_a_ritual(turn: Turn, text: str) -> bool:
    reference, _ = _split_reference(text)
    needle = reference.lower()
    if any(needle in (t.id, t.title.lower(), turn.t(tr(t.title)).lower()) for t in TEMPLATES.values()):
        return True
    async with turn.brain.transactions.read() as session:
        listed = await list_rituals(session, turn.user.id)
    return any(needle in (str(item.position), _title(turn, item.ritual).lower()) for item in listed)


def _number(step: NumberInputStep, text: str) -> int | None:
    return parse_volume_ml(text) if step.unit == "ml" else parse_count(text)


async def answer_free_text(turn: Turn, text: str, *, running: bool) -> bool:
    """For the dialog: when the person's running ritual waits for words or a number, `text` is the answer
    (True: handled). Anything else is left to the usual free-text handling. `running`: whether the person has
    a run going (the dialog reads it with its other free-text checks)."""
    if not running:  # the usual case
        return False
    runner = turn.brain.rituals
    current = await runner.current(turn.user)
    if current is None:
        return False
    word = text.strip(" .!?").lower()
    if word in _STOP:  # "stop", "abbrechen" typed during a ritual ends it; it is no answer to the step
        await _stop(turn)
        return True
    if not isinstance(current.step, TextInputStep | NumberInputStep):
        return False
    await _typed_answer(turn, current, text, skip=word in _SKIP)
    return True


async def _stop(turn: Turn) -> None:
    stopped = await turn.brain.rituals.stop(turn.user)
    turn.say(tr("Stopped {title}.", title=_title(turn, stopped.ritual)) if stopped is not None
             else tr("No ritual is running."))


async def _typed_answer(turn: Turn, current: Progress, text: str, *, skip: bool = False) -> None:
    """The step's answer typed ("skip" / "überspringen" skips it), then its buttons taken off."""
    step = current.step
    value: Any = text
    if isinstance(step, NumberInputStep) and not skip:
        value = _number(step, text)
        if value is None:
            turn.say(tr("Please give a number from {min} to {max}.", min=step.minimum, max=step.maximum))
            return
    answered: dict[str, Any] = {"skip": True} if skip else {"value": value}
    await _show(turn, await turn.brain.rituals.answer(turn.user, current.run.id, current.index, **answered))
    async with turn.brain.transactions.begin() as uow:  # the step's buttons: answered by typing
        await take_off_keyboards(await uow.session.connection(), turn.user.id,
                                 step_question(current.run.id, current.index))


def step_question(run_id: uuid.UUID, index: int) -> ColumnElement[bool]:
    """The buttons of one step of a ritual's run (a condition on `ActionToken`, for `take_off_keyboards`)."""
    return (ActionToken.kind == ACTION) & (ActionToken.payload["run"].astext == str(run_id)) \
        & (ActionToken.payload["step"].astext == str(index))


async def _overview(turn: Turn, current: Progress | None) -> None:
    async with turn.brain.transactions.read() as session:
        listed = await list_rituals(session, turn.user.id)
        today = await ritual_logs(session, turn.user.id, turn.today)
    lines: list[Text | str] = []
    buttons: list[PendingButton] = []
    if current is not None:
        lines.append(tr("You are in the middle of {title} (step {number} of {total}).",
                        title=_title(turn, current.ritual), number=current.index + 1, total=len(current.steps)))
        buttons += [turn.button(tr("Continue"), ACTION, op="continue"), turn.button(tr("Stop it"), ACTION, op="stop")]
    if listed:
        lines.append(tr("Your rituals:"))
        for item in listed:
            log = today.get(item.ritual.id)
            done = f" · {turn.t(tr('done today'))} ✓" if log is not None and log.completed_at is not None else ""
            lines.append(f"{item.position}. {_title(turn, item.ritual)} — {_schedule_text(turn, item)}{done}")
        buttons += [turn.button(tr("Start: {title}", title=_title(turn, item.ritual)), ACTION, op="start",
                                ritual_id=str(item.ritual.id)) for item in listed]
    in_use = {item.ritual.template for item in listed}
    templates = [t for t in TEMPLATES.values() if t.id not in in_use]
    if templates:
        lines.append(tr("Ready-made rituals to start:") if listed
                     else tr("No rituals yet. Start a ready-made one, or ask me to make you one:"))
        buttons += [turn.button(tr("+ {title}", title=tr(t.title)), ACTION, op="template", template=t.id)
                    for t in templates]
    if listed:  # the numbers are those of the person's own rituals
        lines.append(tr("/ritual 1 starts one; /ritual 1 07:30 weekdays schedules it; /ritual 1 off stops the "
                        "schedule; /ritual 1 delete removes it."))
    else:
        lines.append(tr("Press one, or write its name: /ritual {name}.",
                        name=turn.t(tr(templates[0].title)) if templates else "…"))
    turn.say(*lines, buttons=_rows(buttons))


async def _by_reference(turn: Turn, text: str) -> None:
    """'<ritual> [HH:MM [days] | off | delete]': the ritual by position, title or template."""
    reference, rest = _split_reference(text)
    verb = rest.lower().strip()
    when = _parse_when(rest) if verb and verb not in _OFF | _DELETE else None
    if verb and verb not in _OFF | _DELETE and when is None:
        turn.say(tr("I couldn't read that. Write it like /ritual 1 07:30 weekdays, /ritual 1 off or /ritual 1 delete."))
        return
    try:
        async with turn.brain.transactions.begin() as uow:
            ritual = await _resolve(turn, uow, reference)
            title = _title(turn, ritual)
            if verb in _OFF:
                await unschedule_ritual(uow, turn.user, ritual)
                turn.say(tr("{title} is no longer scheduled; start it with /ritual when you like.", title=title))
                return
            if verb in _DELETE:
                await archive_ritual(uow, turn.user, ritual)
                turn.say(tr("{title} is removed.", title=title))
                return
            if when is not None:
                at, days = when
                await schedule_ritual(uow, turn.user, ritual, at, days)
                turn.say(tr("{title}: I'll start it with you {days} at {time}.", title=title,
                            days=describe_weekdays(days, turn.render), time=at))
                return
            ritual_id = ritual.id
    except DomainError as refused:
        turn.say(refused.text)
        return
    await _show(turn, await turn.brain.rituals.start(turn.user, ritual_id))


def _split_reference(text: str) -> tuple[str, str]:
    """The part before a time or a verb is the reference: "morning routine 07:30" -> ("morning routine", "07:30")."""
    words = text.split()
    if words[0].isascii() and words[0].isdigit():
        return words[0], " ".join(words[1:])
    for i, word in enumerate(words):
        if i and (word.lower() in _OFF | _DELETE or find_time(word) is not None):
            return " ".join(words[:i]), " ".join(words[i:])
    return text, ""


async def _resolve(turn: Turn, uow: UnitOfWork, reference: str) -> Ritual:
    try:
        return (await find_ritual(uow.session, turn.user, reference)).ritual
    except DomainError as missing:
        if missing.code != "not_found":
            raise
        needle = reference.strip().lower()
        for template in TEMPLATES.values():
            if needle in (template.id, template.title.lower(), turn.t(tr(template.title)).lower()):
                return await ritual_from_template(uow, turn.user, USER, template.id)
        # The start of one template's title ("Abend" for "Abendroutine", as "start the evening ritual" says it).
        starting = [template for template in TEMPLATES.values() if len(needle) >= MIN_TITLE_START and any(
            title.startswith(needle) for title in (template.title.lower(), turn.t(tr(template.title)).lower()))]
        if len(starting) == 1:
            return await ritual_from_template(uow, turn.user, USER, starting[0].id)
        raise


# How much of a template's title names it ("Abend", "Morgen"; "Ab" is too little).
MIN_TITLE_START = 4


def _parse_when(text: str) -> tuple[time, int] | None:
    found = find_time(text)
    if found is None:
        return None
    days = parse_weekdays(cut(text, found.start, found.end))
    return (found.value, days) if days else None


# ---- buttons ------------------------------------------------------------------------------------------------
async def ritual_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    runner = turn.brain.rituals
    op = str(payload.get("op", ""))
    # A token's payload is written by us, but read it as if it were not: a bad one does nothing.
    run_id = ritual_id = None
    step = item = None
    at = None
    days = EVERY_DAY
    try:
        run_id = uuid.UUID(str(payload["run"])) if "run" in payload else None
        step = int(payload["step"]) if "step" in payload else None
        ritual_id = uuid.UUID(str(payload["ritual_id"])) if "ritual_id" in payload else None
        item = int(payload["item"]) if "item" in payload else None
        at = time.fromisoformat(str(payload["at"])) if "at" in payload else None
        days = int(payload.get("days", EVERY_DAY))
    except (ValueError, TypeError):
        op = ""
    if op in ("do", "done", "skip", "value") and run_id is not None and step is not None:
        await _show(turn, await runner.answer(turn.user, run_id, step, skip=op == "skip",
                                              value=payload.get("value") if op == "value" else None))
    elif op == "tick" and run_id is not None and step is not None and item is not None:
        await _show(turn, await runner.tick(turn.user, run_id, step, item))
    elif op == "start" and ritual_id is not None:
        await _show(turn, await runner.start(turn.user, ritual_id))
    elif op == "template" and str(payload.get("template")) in TEMPLATES:
        await _show(turn, await runner.start_template(turn.user, str(payload["template"])))
    elif op in ("continue", "stop"):
        await ritual(turn, op)
    elif op == "later":
        turn.say(tr("Okay, not today."))
    elif op == "schedule" and ritual_id is not None and at is not None:
        await _schedule_pressed(turn, ritual_id, at, days)
    else:
        turn.say(tr("That button is not valid."))


async def _schedule_pressed(turn: Turn, ritual_id: uuid.UUID, at: time, days: int) -> None:
    async with turn.brain.transactions.begin() as uow:
        ritual = await uow.session.get(Ritual, ritual_id)
        if ritual is None or ritual.user_id != turn.user.id or ritual.status != ACTIVE:
            turn.say(tr("That ritual no longer exists."))
            return
        await schedule_ritual(uow, turn.user, ritual, at, days)
        turn.say(tr("{title}: I'll start it with you {days} at {time}.", title=_title(turn, ritual),
                    days=describe_weekdays(days, turn.render), time=at))


# ---- rendering a run ----------------------------------------------------------------------------------------
async def _show(turn: Turn, outcome: Outcome) -> None:
    if outcome.said:
        turn.say(*outcome.said)
    if outcome.refused is not None:
        turn.say(outcome.refused)
        if outcome.progress is not None and not outcome.progress.finished and not outcome.progress.passed:
            await _render(turn, outcome.progress)
        return
    if outcome.progress is not None:
        await _render(turn, outcome.progress)


async def _render(turn: Turn, progress: Progress) -> None:
    title = _title(turn, progress.ritual)
    total = len(progress.steps)
    lines: list[Text | str] = []
    if progress.stopped is not None:
        lines.append(tr("I stopped {title}; what you did of it is kept.", title=_title(turn, progress.stopped)))
    for index in progress.passed:
        step = progress.steps[index]
        assert isinstance(step, InfoDisplayStep)
        lines.append(f"▸ {turn.t(tr(step.label))}")
        lines.extend(f"  {line}" for line in await info_lines(turn.brain, turn.user, step.source, turn.render))
    if progress.finished:
        lines.append(_finished_line(progress, title))
        turn.say(*lines, buttons=await _after_buttons(turn, progress))
        return
    waiting = progress.step
    assert waiting is not None
    lines.append(tr("{title} — step {number} of {total}", title=title, number=progress.index + 1, total=total))
    step_lines, buttons = _prompt(turn, progress, waiting)
    lines.extend(step_lines)
    buttons.append([_step_button(turn, progress, tr("Skip"), "skip"),
                    turn.button(tr("Stop the ritual"), ACTION, op="stop")])
    turn.say(*lines, buttons=buttons)


def _finished_line(progress: Progress, title: str) -> Text:
    run = progress.run
    if run.status == FINISHED and run.completed_steps >= len(progress.steps):
        return tr("{title} done: every step. Well done!", title=title)
    return tr("{title} done: {completed} of {total} steps.", title=title, completed=run.completed_steps,
              total=len(progress.steps))


async def _after_buttons(turn: Turn, progress: Progress) -> list[list[PendingButton]]:
    """After a run of an unscheduled template ritual: one tap to have it every day at its suggested time."""
    template = TEMPLATES.get(progress.ritual.template or "")
    if template is None or template.suggested_at is None:
        return []
    async with turn.brain.transactions.read() as session:
        listed = await list_rituals(session, turn.user.id)
    if any(item.ritual.id == progress.ritual.id and item.schedule is not None for item in listed):
        return []
    label = tr("Remind me {days} at {time}", days=describe_weekdays(template.suggested_days, turn.render),
               time=template.suggested_at)
    return [[turn.button(label, ACTION, op="schedule", ritual_id=str(progress.ritual.id),
                         at=template.suggested_at.isoformat(timespec="minutes"), days=template.suggested_days)]]


def _step_button(turn: Turn, progress: Progress, label: Text | str, op: str, **extra: Any) -> PendingButton:
    return turn.button(label, ACTION, op=op, run=str(progress.run.id), step=progress.index, **extra)


def _prompt(turn: Turn, progress: Progress, step: Step) -> tuple[list[Text | str], list[list[PendingButton]]]:
    label = turn.t(tr(step.label))
    if isinstance(step, ToolCallStep):
        return [label], [[_step_button(turn, progress, tr("Done"), "do")]]
    if isinstance(step, NumberInputStep):
        unit = f" {step.unit}" if step.unit else ""
        presets = [_step_button(turn, progress, f"{turn.render.format_value(p)}{unit}", "value", value=p)
                   for p in step.presets]
        hint = tr("Or type it, e.g. /ritual {example}.", example=step.presets[0] if step.presets else step.minimum)
        return [label, hint], _rows(presets, 4)
    if isinstance(step, TextInputStep):
        example = turn.t(tr(step.placeholder)) if step.placeholder else turn.t(tr("a few words"))
        return [label, tr("Answer with /ritual and your words, e.g. /ritual {example}", example=example)], []
    if isinstance(step, MoodPickerStep):
        return [label], [[_step_button(turn, progress, f"{n} {MOOD_FACES[n]}", "value", value=n) for n in MOOD_FACES]]
    if isinstance(step, ChecklistStep):
        ticked = set(progress.ticked(progress.index))
        lines: list[Text | str] = [label]
        lines.extend(f"{'☑' if i in ticked else '☐'} {turn.t(tr(item.label))}" for i, item in enumerate(step.items))
        buttons = [_step_button(turn, progress, f"☐ {turn.t(tr(item.label))}", "tick", item=i)
                   for i, item in enumerate(step.items) if i not in ticked]
        return lines, [*_rows(buttons), [_step_button(turn, progress, tr("Done"), "done")]]
    if isinstance(step, BreathingStep):
        breathe_in, hold, breathe_out, rest = step.rhythm
        parts = [tr("in {seconds} s", seconds=breathe_in)]
        if hold:
            parts.append(tr("hold {seconds} s", seconds=hold))
        parts.append(tr("out {seconds} s", seconds=breathe_out))
        if rest:
            parts.append(tr("hold {seconds} s", seconds=rest))
        rhythm = " · ".join(turn.t(p) for p in parts)
        return [label, tr("{rhythm}, {times}", rhythm=rhythm, times=ntr("{count} time", "{count} times", step.cycles)),
                tr("Press Done when you have finished.")], [[_step_button(turn, progress, tr("Done"), "done")]]
    raise AssertionError(step)


# ---- /morning and /evening ----------------------------------------------------------------------------------
_DAILY_NAMES: dict[str, str] = {MORNING_SUMMARY: N_("Morning summary"), EVENING_REFLECTION: N_("Evening reflection")}


async def _daily(turn: Turn, args: str, kind: str, example: str) -> None:
    name = tr(_DAILY_NAMES[kind])
    text = args.strip().lower()
    async with turn.brain.transactions.begin() as uow:
        current = await push_setting(uow.session, turn.user.id, kind)
        assert current is not None
        if not text:
            state = (tr("{days} at {time}", days=describe_weekdays(current.weekdays, turn.render), time=current.at)
                     if current.enabled else tr("off"))
            turn.say(tr("{name}: {state}.", name=name, state=state),
                     tr("Change it with /{command} {example} (or add days: weekdays), or turn it off with "
                        "/{command} off.", command=_command_of(kind), example=example))
            return
        if text in _OFF:
            await set_push(uow.session, turn.user, kind, uow.now, enabled=False)
            turn.say(tr("{name} is off. /{command} {example} turns it on again.", name=name,
                        command=_command_of(kind), example=example))
            return
        if text in _ON:
            setting = await set_push(uow.session, turn.user, kind, uow.now, enabled=True)
        else:
            found = _daily_when(text, kind)
            if found is None:
                turn.say(tr("I couldn't read that time. Write it like /{command} {example} or /{command} off.",
                            command=_command_of(kind), example=example))
                return
            setting = await set_push(uow.session, turn.user, kind, uow.now, at=found[0], weekdays=found[1])
        turn.say(tr("{name}: {days} at {time}.", name=name, days=describe_weekdays(setting.weekdays, turn.render),
                    time=setting.at))
        quiet = (turn.user.quiet_start, turn.user.quiet_end)
        if setting.enabled and in_quiet_hours(setting.at, *quiet):
            # Scheduled pushes keep quiet hours too: held to their end, or dropped when that is beyond the grace.
            turn.say(tr("{time} is inside your quiet hours ({start} to {end}), so it comes late or not at all. "
                        "Choose another time, or change them with /quiet.", time=setting.at, start=quiet[0],
                        end=quiet[1]))


def _daily_when(text: str, kind: str) -> tuple[time, int] | None:
    """When a daily push comes: "07:30", "7am weekdays", and a bare hour ("/morning 7"). The evening reflection's
    hour written alone is in the evening ("/evening 9" and "/abend 9 Uhr" are 21:00); a clock time is kept as
    written ("/evening 10:25" is 10:25, "/evening 9:00" 9:00)."""
    found = find_time(text) or find_bare_hour(text, 0)
    if found is None:
        return None
    days = parse_weekdays(cut(text, found.start, found.end))
    if days is None:
        return None
    at = found.value
    if kind == EVENING_REFLECTION and found.open_meridiem and not written_with_minutes(text, found):
        at = at.replace(hour=in_part_of_day(at.hour, EVENING))
    return at, days


def _command_of(kind: str) -> str:
    return "morning" if kind == MORNING_SUMMARY else "evening"


async def morning(turn: Turn, args: str) -> None:
    await _daily(turn, args, MORNING_SUMMARY, "07:30")


async def evening(turn: Turn, args: str) -> None:
    await _daily(turn, args, EVENING_REFLECTION, "21:30")


COMMANDS = (
    Command("ritual", N_("/ritual morning"), N_("Rituals: guided routines, started by hand or at set times"), ritual,
            aliases=("rituals", "routine", "rituale", "routinen")),
    Command("morning", "/morning 07:30", N_("When your morning summary comes, or off"), morning,
            aliases=("morgen",)),
    Command("evening", "/evening 21:30", N_("When your evening reflection comes, or off"), evening,
            aliases=("abend",)),
)
ACTIONS = {ACTION: ritual_pressed}
