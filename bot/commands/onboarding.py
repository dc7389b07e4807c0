"""/start: a greeting and a four-step setup as buttons: language (the chat app's language is the default),
time zone (a shared location or a city name), quiet hours and the daily water goal. Every step can be
skipped. The step reached is stored (`onboarding_states`), so the setup resumes after a restart, an old
button of an answered step changes nothing, and a typed answer is read as one (a language's name as /lang reads
it, a city, quiet hours, an amount)."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, time, timedelta
from typing import Any

from sqlalchemy import ColumnElement, bindparam, select, update
from sqlalchemy.dialects.postgresql import UUID, insert

from bot.commands import Command
from bot.commands.basics import LANGUAGE_NAMES, choose_locale
from bot.delivery.keyboards import take_off_keyboards
from bot.parsing.amounts import parse_volume_ml
from bot.parsing.freetext import parse_free_text
from bot.turn import PendingButton, Turn
from brain.actions.models import ActionToken
from brain.errors import DomainError
from brain.i18n import N_, SUPPORTED_LOCALES, Renderer, Text, tr
from brain.onboarding.models import DONE, LANGUAGE, QUIET, STEPS, TIMEZONE, WATER, OnboardingState
from brain.onboarding.zones import city_name, zone_at, zone_for_city, zone_name
from brain.people.models import User
from brain.people.service import parse_locale, set_timezone

ACTION = "onboarding"
QUIET_PRESETS: tuple[tuple[time, time], ...] = (
    (time(22, 0), time(7, 0)), (time(23, 0), time(7, 0)), (time(21, 0), time(6, 0)), (time(0, 0), time(8, 0)),
)
WATER_PRESETS_ML: tuple[int, ...] = (1500, 2000, 2500, 3000)
# Zones offered as buttons at the time zone step, by language (a city name or a location finds any other).
ZONE_SUGGESTIONS: dict[str, tuple[str, ...]] = {
    "de": ("Europe/Berlin", "Europe/Vienna", "Europe/Zurich"),
    "en": ("Europe/London", "America/New_York", "America/Los_Angeles"),
}
# A city typed this long after the question is ordinary text again (the person has moved on).
ANSWER_WINDOW = timedelta(days=1)
# Text that names no city is told so ("I don't know a time zone for ...") only this soon after the question, and
# only if it is no question itself; later it is a message to the companion like any other ("hello there", written
# an hour after the setup was left at its second step, got the time zone hint).
HINT_WINDOW = timedelta(minutes=10)
_QUESTIONS: dict[str, str] = {
    LANGUAGE: N_("Step 1 of 4: which language should I speak with you?"),
    TIMEZONE: N_("Step 2 of 4: your time zone. It is {zone} now (local time {time}). Share your location, "
                 "or write the name of your city, e.g. Berlin."),
    QUIET: N_("Step 3 of 4: when should reminders stay quiet? Now from {start} to {end}."),
    WATER: N_("Step 4 of 4: how much water a day would you like to drink? Now {ml} ml."),
}


# ---- /start ---------------------------------------------------------------------------------------------
async def start(turn: Turn, args: str) -> None:
    state = await _load(turn)
    if state is not None and state.step in STEPS:
        async with turn.brain.transactions.begin() as uow:  # asked again now: a typed answer counts from here
            await uow.session.execute(update(OnboardingState).where(
                OnboardingState.user_id == turn.user.id, OnboardingState.step == state.step).values(updated_at=uow.now))
        await _ask(turn, state.step, tr("Welcome back! Let's finish setting up."))
        return
    name = turn.user.display_name
    greeting = (tr("Hello {name}! I keep your tasks, calendar, drinks, meals and places.", name=name) if name
                else tr("Hello! I keep your tasks, calendar, drinks, meals and places."))
    if state is not None and args.strip().lower() not in ("again", "neu", "setup"):
        # Set up before: a greeting, and the setup only when asked for.
        turn.say(greeting, tr("Try: /water 250, /task Buy milk by Friday, /today. /help lists everything."),
                 buttons=[[turn.button(tr("Go through the setup again"), ACTION, step=DONE, op="again")]])
        return
    await _begin(turn)
    await _ask(turn, LANGUAGE, greeting, tr("Four quick questions to set things up; each one can be skipped."))


async def _begin(turn: Turn) -> None:
    async with turn.brain.transactions.begin() as uow:
        await uow.session.execute(
            insert(OnboardingState)
            .values(user_id=turn.user.id, step=LANGUAGE, started_at=uow.now, updated_at=uow.now, finished_at=None)
            .on_conflict_do_update(index_elements=["user_id"],
                                   set_={"step": LANGUAGE, "updated_at": uow.now, "finished_at": None})
        )


async def _load(turn: Turn) -> OnboardingState | None:
    async with turn.brain.transactions.glance() as session:
        return await session.get(OnboardingState, turn.user.id)


# ---- the questions --------------------------------------------------------------------------------------
def _skip(turn: Turn, step: str) -> PendingButton:
    return turn.button(tr("Skip"), ACTION, step=step, op="skip")


async def _ask(turn: Turn, step: str, *lead: Text | str) -> None:
    """Asks the question of `step` in one message, after the `lead` lines (a greeting, the last answer)."""
    if step == LANGUAGE:
        current = turn.user.locale
        turn.say(*lead, tr(_QUESTIONS[LANGUAGE]), buttons=[
            [turn.button(LANGUAGE_NAMES[code] + (" ✓" if code == current else ""), ACTION, step=LANGUAGE,
                         value=code) for code in SUPPORTED_LOCALES],
            [_skip(turn, LANGUAGE)],
        ])
    elif step == TIMEZONE:
        suggestions = [zone for zone in ZONE_SUGGESTIONS.get(turn.render.locale, ()) if zone != turn.user.timezone]
        turn.say(*lead, tr(_QUESTIONS[TIMEZONE], zone=zone_name(turn.user.timezone, turn.render.locale),
                           time=turn.render.time_of(turn.now)),
                 buttons=[
            [turn.button(city_name(zone, turn.render.locale), ACTION, step=TIMEZONE, value=zone)
             for zone in suggestions],
            [_skip(turn, TIMEZONE)],
        ])
    elif step == QUIET:
        presets = [turn.button(_span(turn.render, start, end), ACTION, step=QUIET,
                               value=[start.isoformat("minutes"), end.isoformat("minutes")])
                   for start, end in QUIET_PRESETS if (start, end) != (turn.user.quiet_start, turn.user.quiet_end)]
        turn.say(*lead, tr(_QUESTIONS[QUIET], start=turn.user.quiet_start, end=turn.user.quiet_end),
                 buttons=[*_pairs(presets), [_skip(turn, QUIET)]])
    elif step == WATER:
        progress = await turn.tool("get_drink_progress", {})
        goal_ml = int(progress.data.get("water_goal_ml", 0)) if progress.ok else 0
        options = [turn.button(tr("{ml} ml", ml=ml), ACTION, step=WATER, value=ml)
                   for ml in WATER_PRESETS_ML if ml != goal_ml]
        turn.say(*lead, tr(_QUESTIONS[WATER], ml=goal_ml), buttons=[*_pairs(options), [_skip(turn, WATER)]])


def _span(render: Renderer, start: time, end: time) -> str:
    return f"{render.format_value(start)} – {render.format_value(end)}"


def _pairs(buttons: list[PendingButton]) -> list[list[PendingButton]]:
    return [buttons[i:i + 2] for i in range(0, len(buttons), 2)]


# ---- answers --------------------------------------------------------------------------------------------
async def onboarding_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    step, op, value = payload.get("step"), payload.get("op"), payload.get("value")
    if step == DONE and op == "again":
        await _begin(turn)
        await _ask(turn, LANGUAGE)
        return
    state = await _load(turn)
    if state is None or state.step != step:
        if state is not None and state.step in STEPS:
            await _ask(turn, state.step, tr("That question was already answered."))
        else:
            turn.say(tr("That question was already answered."))
        return
    confirmation = await _answer(turn, step, value) if op != "skip" else ""
    if confirmation is None:
        turn.say(tr("That button is not valid."))
        return
    await _advance(turn, step, confirmation)


async def _answer(turn: Turn, step: str, value: Any) -> Text | str | None:
    """Applies a pressed answer; returns what to confirm ("" for nothing), or None for a bad payload."""
    if step == LANGUAGE and value in SUPPORTED_LOCALES:
        await choose_locale(turn, str(value))
        return ""
    if step == TIMEZONE and isinstance(value, str) and any(value in z for z in ZONE_SUGGESTIONS.values()):
        return await _set_zone(turn, value)
    if step == QUIET and isinstance(value, list) and len(value) == 2:
        try:
            start, end = time.fromisoformat(str(value[0])), time.fromisoformat(str(value[1]))
        except ValueError:
            return None
        if (start, end) not in QUIET_PRESETS:
            return None
        await _update_user(turn, quiet_start=start, quiet_end=end)
        return tr("Reminders stay quiet from {start} to {end}.", start=start, end=end)
    if step == WATER and value in WATER_PRESETS_ML:
        result = await turn.tool("set_drink_goal", {"daily_ml": int(value)})
        return result.message or ""
    return None


async def _advance(turn: Turn, answered: str, confirmation: Text | str = "") -> None:
    """Moves past `answered` (if the person is still there) and asks the next question, or finishes; the
    confirmation of the answer leads the next message."""
    following = STEPS[STEPS.index(answered) + 1] if answered != STEPS[-1] else DONE
    async with turn.brain.transactions.begin() as uow:
        state = await uow.session.scalar(
            select(OnboardingState).where(OnboardingState.user_id == turn.user.id).with_for_update())
        if state is None or state.step != answered:
            if confirmation:
                turn.say(confirmation)
            return  # a concurrent press moved on already and asked the next question
        state.step = following
        state.updated_at = uow.now
        if following == DONE:
            state.finished_at = uow.now
    lead = [confirmation] if confirmation else []
    if following == DONE:
        turn.say(*lead, tr("All set."),
                 tr("Try: /water 250, /task Buy milk by Friday, /today. /help lists everything."))
    else:
        await _ask(turn, following, *lead)


async def _update_user(turn: Turn, **values: Any) -> None:
    async with turn.brain.transactions.begin() as uow:
        user = await uow.session.get(User, turn.user.id)
        assert user is not None
        for key, value in values.items():
            setattr(user, key, value)
    for key, value in values.items():
        setattr(turn.user, key, value)
    turn.render = Renderer(turn.user.locale, turn.user.timezone)


async def _set_zone(turn: Turn, zone: str) -> Text:
    async with turn.brain.transactions.begin() as uow:
        await set_timezone(uow, turn.user.id, zone)
    turn.user.timezone = zone
    turn.render = Renderer(turn.user.locale, zone)
    return tr("Your time zone is now {zone}. Local time: {time}.", zone=zone_name(zone, turn.render.locale),
              time=turn.render.time_of(turn.now))


# Built once (every free text asks it): the step the person's setup is at, and since when.
_STEP = select(OnboardingState.step, OnboardingState.updated_at).where(
    OnboardingState.user_id == bindparam("person", type_=UUID(as_uuid=True)))


async def _waiting_for_zone(turn: Turn) -> bool:
    async with turn.brain.db.autocommit() as connection:  # one Core read: no session, no transaction
        state = (await connection.execute(_STEP, {"person": turn.user.id})).first()
    return state is not None and waits_for_zone(turn, state.step, state.updated_at)


def waits_for_zone(turn: Turn, step: str | None, updated_at: datetime | None) -> bool:
    """Whether the setup, at `step` since `updated_at` (None: never started), waits for the time zone."""
    return waiting_step(turn, step, updated_at) == TIMEZONE


def step_question(step: str) -> ColumnElement[bool]:
    """The buttons of one of the setup's questions (a condition on `ActionToken`, for `take_off_keyboards`)."""
    return (ActionToken.kind == ACTION) & (ActionToken.payload["step"].astext == step)


def waiting_step(turn: Turn, step: str | None, updated_at: datetime | None) -> str | None:
    """The setup's question that a typed answer may answer (the language, the time zone, quiet hours, the water
    goal), if the setup, at `step` since `updated_at`, asked it recently."""
    if step in (LANGUAGE, TIMEZONE, QUIET, WATER) and updated_at is not None and turn.now - updated_at <= ANSWER_WINDOW:
        return step
    return None


# Quiet hours as people type them: "22-7", "22:00 - 07:00", "von 22 bis 6 Uhr", "from 23:30 to 6".
_QUIET_RE = re.compile(r"^\s*(?:von|from)?\s*(?P<h1>\d{1,2})(?:[:.](?P<m1>\d{2}))?\s*(?:uhr|h)?\s*"
                       r"(?:-|–|bis|to|until|till)\s*(?P<h2>\d{1,2})(?:[:.](?P<m2>\d{2}))?\s*(?:uhr|h)?\s*$", re.I)


def parse_quiet_hours(text: str) -> tuple[time, time] | None:
    match = _QUIET_RE.match(text)
    if match is None:
        return None
    hours = [0 if h == 24 else h for h in (int(match.group("h1")), int(match.group("h2")))]  # "bis 24 Uhr"
    try:
        start = time(hours[0], int(match.group("m1") or 0))
        end = time(hours[1], int(match.group("m2") or 0))
    except ValueError:  # "25-7", "22:75"
        return None
    return (start, end) if start != end else None


async def take_shared_location(turn: Turn, lat: float, lng: float) -> bool:
    """A location shared while the setup asks for the time zone answers that question; True when taken."""
    if not await _waiting_for_zone(turn):
        return False
    zone = zone_at(lat, lng)
    if zone is None:
        turn.say(tr("I couldn't find a time zone for that place. Write the name of your city instead, or skip."),
                 buttons=[[_skip(turn, TIMEZONE)]])
        return True
    await _advance(turn, TIMEZONE, await _set_zone(turn, zone))
    async with turn.brain.transactions.begin() as uow:  # the step's buttons: answered by the location
        await take_off_keyboards(await uow.session.connection(), turn.user.id, step_question(TIMEZONE))
    return True


async def take_typed_answer(turn: Turn, text: str, *, waiting: str | None,
                            asked_at: datetime | None = None) -> bool:
    """Free text while the setup asks a question is read as its answer: a language's name or code ("Deutsch",
    "english", "de"), a city for the time zone, a span for the quiet hours, an amount for the water goal; True
    when it was taken. Text that does not answer it but reads
    as a log entry ("250 ml water") goes its usual way. `waiting`: the question waiting for an answer
    (`waiting_step`, which the dialog reads with its other free-text checks), asked at `asked_at`."""
    if waiting == LANGUAGE:
        try:
            locale = parse_locale(text)  # as /lang reads it
        except DomainError:
            return False  # not a language: a log entry or a chat, which goes its usual way
        await choose_locale(turn, locale)
        await _advance(turn, LANGUAGE)
        return True
    if waiting == QUIET:
        quiet = parse_quiet_hours(text)
        if quiet is None:
            return await _not_an_answer(turn, text, QUIET, tr(
                "I couldn't read that as quiet hours. Write them like 22:00-07:00, or use a button."))
        await _update_user(turn, quiet_start=quiet[0], quiet_end=quiet[1])
        await _advance(turn, QUIET, tr("Reminders stay quiet from {start} to {end}.", start=quiet[0], end=quiet[1]))
        return True
    if waiting == WATER:
        ml = parse_volume_ml(text.replace(" ", "").lower().removesuffix("wasser").removesuffix("water"))
        if ml is None:
            return await _not_an_answer(turn, text, WATER, tr(
                "I couldn't read that as an amount. Write it like 2000 or 2.5 l, or use a button."))
        result = await turn.tool("set_drink_goal", {"daily_ml": ml})
        if not result.ok:
            await _ask(turn, WATER, result.message or "")
            return True
        await _advance(turn, WATER, result.message or "")
        return True
    if waiting != TIMEZONE:
        return False
    # The first lookup builds an index of about 600 zones in two languages: off the event loop.
    zone = await asyncio.to_thread(zone_for_city, text)
    if zone is None:
        just_asked = asked_at is not None and turn.now - asked_at <= HINT_WINDOW
        if not just_asked or "?" in text or parse_free_text(text, turn.today):
            return False
        turn.say(tr("I don't know a time zone for \"{city}\". Try a larger city nearby, share your location, "
                    "or skip.", city=text[:64]), buttons=[[_skip(turn, TIMEZONE)]])
        return True
    await _advance(turn, TIMEZONE, await _set_zone(turn, zone))
    return True


async def _not_an_answer(turn: Turn, text: str, step: str, hint: Text) -> bool:
    """A message that does not answer the setup's question: one that tries to (it has a number, "ab 22 Uhr") gets
    the hint and the question again; anything else, a log entry or a chat, goes its usual way (False): the person
    may have moved on from the setup."""
    if not any(ch.isdigit() for ch in text) or parse_free_text(text, turn.today):
        return False
    await _ask(turn, step, hint)
    return True


COMMANDS = (Command("start", "/start", N_("Greeting and setup: language, time zone, quiet hours, water goal"),
                    start),)
ACTIONS = {ACTION: onboarding_pressed}
