"""/remind: set a reminder from a phrase ("/remind 15:00 call mom", "/remind morgen 9 Zahnarzt", "/remind in 20 min
tea"), list the waiting ones with a delete button each, or delete one ("/remind delete 2"); and the buttons a sent
reminder carries: done, snooze 15 min / 1 h / tomorrow. Free text that asks for a reminder comes here too, and,
with no language model to read it, free text that names a day and a time ("Zahnarzt morgen um 14 Uhr", "call mom
tomorrow at 9"): the rules cannot tell an appointment from a reminder or a task, so three buttons ask (`offer_plan`)."""

from __future__ import annotations

import dataclasses
import re
import secrets
import uuid
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import update

from bot.commands import Command
from bot.commands.tasks import say_task
from bot.offers import take_fresh_offer
from bot.parsing.dates import cut, find_date, find_time
from bot.parsing.freetext import NEED_TO_RE, NOT_A_TASK_RE, ReminderMove
from bot.parsing.reminders import ReminderRequest, names_a_time, only_when, read_reminder
from bot.turn import PendingButton, Turn
from brain.actions.models import ActionToken
from brain.errors import DomainError
from brain.events.actor import USER
from brain.i18n import N_, Text, tr
from brain.modules.calendar.service import find_event, last_made_upcoming
from brain.people.local_time import local_now
from brain.pulse.nudges import snooze_until
from brain.recurrence import describe
from brain.reminders import service
from brain.reminders.models import Reminder
from brain.reminders.sending import REMINDER_KIND

LIST_SHOWN = 10
PLAN_KIND = "dated_plan"
PLAN_MINUTES = 60  # an appointment offered this way lasts an hour, as /event's do
PLAN_MAX_WORDS, PLAN_MAX_CHARS = 8, 80
DELETE_WORDS = frozenset({"delete", "remove", "cancel", "löschen", "loeschen", "entfernen"})


async def remind(turn: Turn, args: str) -> None:
    if not args.strip():
        await _list(turn)
        return
    verb, _, reference = args.strip().partition(" ")
    if verb.casefold() in DELETE_WORDS:
        if not reference.strip():
            turn.say(tr("Which reminder? /remind delete 2 deletes the second one in the list, /remind alone shows "
                        "it."))
            return
        turn.say_result(await turn.tool("delete_reminder", {"reminder": reference.strip()}))
        return
    found = read_reminder(args, local_now(turn.user, turn.now))
    if isinstance(found, Text):
        turn.say(found)
        return
    await set_reminder(turn, found)


async def set_reminder(turn: Turn, request: ReminderRequest) -> None:
    """Stores what a phrase asked for and says when it comes (and that it is tomorrow's, if the time had passed)."""
    call = {"text": request.text, "at": request.at.isoformat()}
    if request.rule is not None:
        call["repeat"] = request.rule
    result = await turn.tool("create_reminder", call)
    if not result.ok or result.message is None:
        turn.say_result(result)
        return
    note = tr("{time} has already passed today, so it is tomorrow.", time=request.at.time()) if request.rolled \
        else None
    turn.say(result.message, note, buttons=[[turn.tool_button(tr("Delete it"), "delete_reminder",
                                                              reminder=str(result.data["id"]))]])


async def move_reminder_in_words(turn: Turn, move: ReminderMove) -> None:
    """"move the stretch reminder to 8pm": the reminder whose text has those words, at its new time; a time alone
    keeps its day (/undo sets it back while the old time is ahead)."""
    if not move.reminder:
        turn.say(tr("Which reminder? Name it, e.g. \"move the stretch reminder to 8 pm\"; /remind lists them."))
        return
    when = {"at": move.at.isoformat()} if move.day_said else {"time": move.at.time().isoformat("minutes")}
    turn.say_result(await turn.tool("move_reminder", {"reminder": move.reminder, **when}))


REMINDER_WHEN = "reminder_when"
WHEN_ANSWER_WINDOW = timedelta(minutes=10)  # a time typed this soon after "When should I remind you?" answers it
EVENING_HOUR, MORNING_HOUR = 19, 9


async def ask_when(turn: Turn, what: str) -> None:
    """"remind me to call mom" said no time: when, with a button for an hour from now, this evening (while it is
    ahead) and tomorrow morning; a time typed instead answers too (`when_answered`)."""
    now = local_now(turn.user, turn.now).replace(second=0, microsecond=0)
    choices: list[tuple[Text, datetime]] = [(tr("In an hour"), now + timedelta(hours=1))]
    evening = now.replace(hour=EVENING_HOUR, minute=0)
    if evening - now > timedelta(hours=1):
        choices.append((tr("This evening, {time}", time=evening.time()), evening))
    morning = (now + timedelta(days=1)).replace(hour=MORNING_HOUR, minute=0)
    choices.append((tr("Tomorrow, {time}", time=morning.time()), morning))
    ask = secrets.token_hex(6)
    turn.say(tr("When should I remind you of «{what}»? Press one, or write a time, e.g. \"at 5 pm\" or "
                "\"tomorrow at 9\".", what=what),
             buttons=[[turn.button(label, REMINDER_WHEN, ask=ask, text=what, at=at.isoformat())
                       for label, at in choices]])


async def _use_up_question(turn: Turn, kind: str, key: str, question: str) -> None:
    """One answer per question: its buttons (of `kind`, whose payload's `key` names the question) are used up, also
    where no adapter screens the press (the terminal); the adapters take the pressed message's keyboard off
    themselves."""
    async with turn.brain.transactions.begin() as uow:
        await uow.session.execute(update(ActionToken).where(
            ActionToken.user_id == turn.user.id, ActionToken.kind == kind,
            ActionToken.payload[key].astext == question, ActionToken.used_at.is_(None)).values(used_at=uow.now))


async def when_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    await _use_up_question(turn, REMINDER_WHEN, "ask", str(payload["ask"]))
    at = datetime.fromisoformat(str(payload["at"]))
    if at <= turn.now:
        turn.say(tr("{time} has already passed. Pick a time ahead, e.g. /remind 15:00 call mom.", time=at))
        return
    await set_reminder(turn, ReminderRequest(str(payload["text"]), at))


async def when_answered(turn: Turn, text: str) -> bool:
    """A time typed as the answer to `ask_when` ("at 5 pm", "morgen um 9"); False when the text is more than a time
    or no question waits (then it is read as anything else)."""
    now = local_now(turn.user, turn.now)
    if not only_when(text, now):
        return False
    payload = await take_fresh_offer(turn, REMINDER_WHEN, WHEN_ANSWER_WINDOW)
    if payload is None:
        return False
    await _use_up_question(turn, REMINDER_WHEN, "ask", str(payload["ask"]))
    read = read_reminder(f"{text.strip(' .!?')} {payload['text']}", now)
    if isinstance(read, ReminderRequest):
        await set_reminder(turn, read)
    else:
        turn.say(read)
    return True


async def _list(turn: Turn) -> None:
    result = await turn.tool("list_reminders", {"limit": LIST_SHOWN})
    items: list[dict[str, Any]] = result.data.get("reminders", []) if result.ok else []
    if not items:
        turn.say(tr("You have no reminders coming up."),
                 tr("To set one, write “remind me tomorrow at 9 to call the dentist” or /remind 15:00 call mom."))
        return
    lines = [turn.t(tr("Your reminders:"))]
    buttons: list[PendingButton] = []
    zone = ZoneInfo(turn.user.timezone)
    for item in items:
        at = datetime.fromisoformat(item["at"]).astimezone(zone)
        repeats = f" 🔁 {describe(item['repeat'], turn.render)}" if item.get("repeat") else ""
        lines.append(f"{item['position']}. {turn.render.format_value(at)} {item['text']}{repeats}")
        buttons.append(turn.tool_button(f"✕ {item['position']}", "delete_reminder", reminder=item["id"]))
    lines.append(turn.t(tr("✕ deletes one; /remind delete 2 does too.")))
    turn.say("\n".join(lines), buttons=[buttons[i:i + 5] for i in range(0, len(buttons), 5)])


async def reminder_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    """Done, or snoozed for 15 minutes, an hour or until tomorrow at its time (never into quiet hours)."""
    try:
        reminder_id = uuid.UUID(str(payload["reminder_id"]))
        key, delivery, op = str(payload["key"]), int(payload.get("n", 0)), str(payload["op"])
    except (KeyError, ValueError):
        turn.say(tr("That button is not valid."))
        return
    async with turn.brain.transactions.begin() as uow:
        reminder = await uow.session.get(Reminder, reminder_id, with_for_update=True, populate_existing=True)
        if reminder is not None and reminder.user_id != turn.user.id:
            reminder = None
        refused = service.answer_refused(reminder, key, delivery)
        if refused is not None or reminder is None:
            turn.say(refused or tr("That button is not valid."))
            return
        if op == "done":
            await service.mark_done(uow, turn.user, USER, reminder, key)
            turn.say(tr("Done: {text}.", text=reminder.text))
            return
        quiet = (turn.user.quiet_start, turn.user.quiet_end)
        if op == "snooze":
            until = snooze_until(local_now(turn.user, uow.now), minutes=int(payload.get("minutes", 15)), quiet=quiet)
        elif op == "tomorrow":
            until = snooze_until(service.tomorrow_at(reminder, key).astimezone(ZoneInfo(turn.user.timezone)),
                                 minutes=0, quiet=quiet)
        else:
            turn.say(tr("That button is not valid."))
            return
        await service.snooze(uow, turn.user, USER, reminder, key, until)
    turn.say(tr("Okay, I'll remind you again at {time}.", time=until))


COMMANDS = (
    Command("remind", N_("/remind 15:00 call mom"), N_("Set a reminder, or list them"), remind,
            aliases=("erinnere", "erinnern", "erinnerung", "reminders")),
)
# Verbs that tell what was done or had ("had", "drank", "getrunken"), never what is planned.
_DONE_TENSE_RE = re.compile(r"\b(?:had|drank|ate|eaten|hatte|hatten|getrunken|gegessen|trank|aß)\b", re.I)
_NEGATED_RE = re.compile(r"^(?:no|not|never|don'?t|keine?[nmrs]?|nicht|nie|kein)\b", re.I)


def read_plan(text: str, now: datetime) -> ReminderRequest | None:
    """A free text that names a time ahead and something for it ("Zahnarzt morgen um 14 Uhr"), read as a reminder
    phrase reads, relative to the person's local `now`; None when it names no time ahead (or repeats)."""
    if _NEGATED_RE.match(text):
        return None  # "keine Erinnerungen nach 22 Uhr" says what is not wanted: nothing to make
    if _DONE_TENSE_RE.search(text):
        return None  # "I had a coffee at 7", "um 8 Wasser getrunken": told of what was, no plan
    needed = NEED_TO_RE.match(text)
    if needed is not None:  # "I need to pick up Anna at 5": the entry is "Pick up Anna"
        text = needed.group("rest")
    found = read_reminder(text, now)
    if not isinstance(found, ReminderRequest) or found.rule is not None or not names_a_time(text, now):
        return None  # a day alone ("the weather is strange today") is no appointment
    had = _HAVE_RE.match(found.text)
    if had is not None:  # "Um 15 Uhr habe ich einen Termin beim Friseur": the entry is "Termin beim Friseur"
        rest = had.group("rest")
        found = dataclasses.replace(found, text=rest[:1].upper() + rest[1:])
    # A note is short; a longer text that mentions a time ("so tired, and tomorrow at 9 it's work again, and
    # then ...") is no entry to make.
    return found if len(found.text) <= PLAN_MAX_CHARS and len(found.text.split()) <= PLAN_MAX_WORDS else None


@dataclasses.dataclass(frozen=True)
class DayPlan:
    """Something for a coming day said without a time ("dentist on Friday", "Annas Geburtstag am 12. Mai")."""

    text: str
    day: date


# What a day plan must not say: how things are or were ("the weather is odd on Mondays", "Freitag war schön").
_STATE_WORD_RE = re.compile(r"\b(?:is|isn't|are|was|were|be|feel|felt|ist|sind|war|waren|bin|bist|fühle|fand"
                            r"|weather|wetter|always|immer|usually|meistens|every|jeden|jede)\b"
                            r"|^(?:see\s+you|talk\s+to\s+you|bis|tschüss|bye)\b", re.I)
# Who says it, before what it is: "I'm going to the cinema with Anna" is "cinema with Anna".
_GOING_TO_RE = re.compile(r"^(?:i'?m\s+|i\s+am\s+|we'?re\s+|we\s+are\s+)?(?:going|off)\s+to\s+(?:the\s+)?"
                          r"|^(?:ich\s+gehe|wir\s+gehen|gehe)\s+(?:ins|in\s+die|in\s+den|zum|zur)\s+", re.I)
# What is left of the day's words around it: "Anna's birthday is on" -> "Anna's birthday".
_DAY_GLUE_RE = re.compile(r"\s+(?:(?:is|ist)\s+)?(?:on|am|at|this|next|coming|nächsten|kommenden|diesen)$"
                          r"|\s+(?:is|ist)$|^(?:on|am)\s+", re.I)
DAY_PLAN_AHEAD = timedelta(days=366)


def read_day_plan(text: str, today: date) -> DayPlan | None:
    """A short note that names a coming day but no time ("dentist on Friday", "Party bei Tom am Samstag"); None for
    anything else (a time makes it `read_plan`'s; a question, a negation, the past or how things are make it none)."""
    if _NEGATED_RE.match(text) or _DONE_TENSE_RE.search(text) or find_time(text) is not None:
        return None
    found = find_date(text, today)
    if found is None or not today < found.value <= today + DAY_PLAN_AHEAD:
        return None
    rest = cut(text, found.start, found.end).strip(" .!")
    for _ in range(2):
        rest = _DAY_GLUE_RE.sub("", rest).strip(" ,.!")
    rest = _GOING_TO_RE.sub("", rest)
    had = _HAVE_RE.match(rest)
    if had is not None:
        rest = had.group("rest")
    words = rest.split()
    if not words or len(words) > PLAN_MAX_WORDS - 2 or len(rest) > PLAN_MAX_CHARS or _STATE_WORD_RE.search(rest) \
            or NOT_A_TASK_RE.search(rest):
        return None
    return DayPlan(rest[:1].upper() + rest[1:], found.value)


def offer_day_plan(turn: Turn, plan: DayPlan) -> None:
    """Asks what to make of a note for a coming day: an all-day calendar entry or a task due that day."""
    values = {"plan": secrets.token_hex(6), "text": plan.text, "day": plan.day.isoformat()}
    turn.say(tr("{day}: {what}. Should I put it in your calendar for that day, or make it a task?",
                day=plan.day, what=plan.text),
             buttons=[[turn.button(tr("📅 Calendar"), PLAN_KIND, make="event", **values),
                       turn.button(tr("✓ Task"), PLAN_KIND, make="task", **values)]])


# Who has the appointment, before what it is: "(ich) habe (ich) einen Termin beim Friseur", "I have a meeting with Tom",
# "I've got a dentist appointment", "wir haben ein Treffen", "I'm meeting Sarah for lunch" ("Meeting Sarah ...").
_HAVE_RE = re.compile(r"^(?:ich\s+habe?|habe?\s+ich|habe?|wir\s+haben|haben\s+wir|i\s+have(?:\s+got)?"
                      r"|i've(?:\s+got)?|i\s+got|we\s+have|we've\s+got|i'm(?=\s+\w+ing\b)|i\s+am(?=\s+\w+ing\b)"
                      r"|we're(?=\s+\w+ing\b))\s+(?:(?:noch|dann|da|einen|eine|ein|an|a|my|meinen|meine|mein)\s+)*"
                      r"(?P<rest>\S.*)$", re.I)


def offer_plan(turn: Turn, plan: ReminderRequest) -> None:
    """Asks what to make of a dated note: a calendar entry, a reminder or a task, one button each (one answer)."""
    question = secrets.token_hex(6)
    values = {"plan": question, "text": plan.text, "at": plan.at.isoformat()}
    turn.say(tr("{when}: {what}. Should I put it in your calendar, remind you then, or make it a task?",
                when=plan.at, what=plan.text),
             buttons=[[turn.button(tr("📅 Calendar"), PLAN_KIND, make="event", **values),
                       turn.button(tr("⏰ Reminder"), PLAN_KIND, make="reminder", **values),
                       turn.button(tr("✓ Task"), PLAN_KIND, make="task", **values)]])


async def plan_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    """One of `offer_plan`'s buttons: the other two are used up (one answer, also where no adapter screens the
    press, as the terminal; the adapters take the pressed message's keyboard off themselves), then the entry is
    made as if typed as its command."""
    await _use_up_question(turn, PLAN_KIND, "plan", str(payload["plan"]))
    if "day" in payload:  # a day without a time (`offer_day_plan`)
        await _make_day_plan(turn, str(payload["make"]), str(payload["text"]), date.fromisoformat(str(payload["day"])))
        return
    text, at = str(payload["text"]), datetime.fromisoformat(str(payload["at"]))
    if at <= turn.now and payload["make"] != "task":
        turn.say(tr("{time} has already passed. Pick a time ahead, e.g. /remind 15:00 call mom.", time=at))
        return
    if payload["make"] == "event":
        turn.say_result(await turn.tool("create_event", {
            "title": text, "start_time": at.isoformat(),
            "end_time": (at + timedelta(minutes=PLAN_MINUTES)).isoformat()}))
    elif payload["make"] == "reminder":
        await set_reminder(turn, ReminderRequest(text, at))
    else:
        local = at.astimezone(ZoneInfo(turn.user.timezone))
        say_task(turn, await turn.tool("create_task", {
            "title": text, "due_date": local.date().isoformat(),
            "due_time": local.time().isoformat(timespec="minutes")}))


async def _make_day_plan(turn: Turn, make: str, text: str, day: date) -> None:
    if make == "event":
        start = datetime.combine(day, time(), ZoneInfo(turn.user.timezone))
        turn.say_result(await turn.tool("create_event", {"title": text, "start_time": start.isoformat(),
                                                         "end_time": start.isoformat(), "is_all_day": True}))
    else:
        say_task(turn, await turn.tool("create_task", {"title": text, "due_date": day.isoformat()}))


async def remind_before(turn: Turn, lead: timedelta, what: str | None) -> None:
    """A reminder `lead` before an appointment: the one named (`what`), or the upcoming one made last."""
    try:
        async with turn.brain.transactions.begin() as uow:
            event = (await find_event(uow, turn.user, what)).event if what else \
                await last_made_upcoming(uow, turn.user)
    except DomainError as refused:
        turn.say(refused.text)
        return
    if event is None:
        turn.say(tr("Before which appointment? e.g. \"remind me 10 minutes before the dentist\"; /event lists them."))
        return
    at = (event.start_time - lead).astimezone(ZoneInfo(turn.user.timezone))
    if at <= turn.now:
        turn.say(tr("{title} starts at {time}: that is too soon for a reminder so long before.", title=event.title,
                    time=event.start_time))
        return
    await set_reminder(turn, ReminderRequest(event.title, at))


# The offer's answer typed instead of pressed: "Kalender", "in den Kalender", "as a reminder", "eine Aufgabe, bitte".
_PLAN_ANSWERS = {"calendar": "event", "kalender": "event", "termin": "event", "appointment": "event",
                 "event": "event", "reminder": "reminder", "erinnerung": "reminder", "remind me": "reminder",
                 "erinnere mich": "reminder", "erinnern": "reminder", "task": "task", "aufgabe": "task",
                 "todo": "task", "to-do": "task"}
_PLAN_ANSWER_FILLER_RE = re.compile(r"^(?:(?:please|bitte|ja|yes|ok|okay|as|als|a|an|eine|einen|ein|in|into|ins|den"
                                    r"|the|my|meinen|mein|put\s+it|trag\s+es|mach)\s+)*|(?:,?\s+(?:please|bitte))?"
                                    r"[\s.!]*$", re.I)
# An offer answered by typing is one still on the screen: asked this long ago at most.
PLAN_ANSWER_WINDOW = timedelta(minutes=30)


def plan_answer_said(text: str) -> str | None:
    """Which of the offer's buttons a typed answer names ("event", "reminder", "task"), or None."""
    said = _PLAN_ANSWER_FILLER_RE.sub("", text.strip().lower().lstrip("📅⏰✓ ")).strip()
    return _PLAN_ANSWERS.get(said) if len(text) <= 40 else None


async def plan_answered(turn: Turn, text: str) -> bool:
    """The last dated-plan offer answered in words, as if its button was pressed; False when the text names none of
    its answers or no offer waits (then the text is read as anything else)."""
    make = plan_answer_said(text)
    if make is None:
        return False
    payload = await take_fresh_offer(turn, PLAN_KIND, PLAN_ANSWER_WINDOW, make=make)
    if payload is None:
        return False
    await plan_pressed(turn, payload)
    return True


ACTIONS = {REMINDER_KIND: reminder_pressed, PLAN_KIND: plan_pressed, REMINDER_WHEN: when_pressed}
