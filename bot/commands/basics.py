"""/lang and /tz: language and time zone (/help is the command table's, /start the onboarding)."""

from __future__ import annotations

from typing import Any

from bot.commands import Command
from bot.parsing.language import written_language
from bot.parsing.settings import setting_said
from bot.turn import Turn
from brain.errors import DomainError
from brain.i18n import N_, SUPPORTED_LOCALES, Renderer, tr
from brain.onboarding.zones import zone_for_city, zone_name
from brain.people.service import parse_locale, parse_timezone, set_timezone
from brain.people.service import set_locale as set_locale_of

LANGUAGE_NAMES = {"en": "English", "de": "Deutsch"}


async def lang(turn: Turn, args: str) -> None:
    if not args:
        turn.say(tr("Choose your language:"),
                 buttons=[[turn.button(LANGUAGE_NAMES[c], "set_locale", locale=c) for c in SUPPORTED_LOCALES]])
        return
    try:
        locale = parse_locale(args)
    except DomainError as refused:
        turn.say(refused.text)
        return
    await set_locale(turn, locale)


async def set_locale(turn: Turn, locale: str) -> None:
    await choose_locale(turn, locale)
    turn.say(tr("I'll speak English with you from now on."))


async def choose_locale(turn: Turn, locale: str) -> None:
    """The language the person chose (/lang, a language button, the setup's step): kept whatever they write, and
    their goals titled in it (brain.people.service.set_locale)."""
    async with turn.brain.transactions.begin() as uow:
        await set_locale_of(uow, turn.user.id, locale, chosen=True)
    turn.user.locale, turn.user.locale_chosen = locale, True
    turn.render = Renderer(locale, turn.user.timezone)


async def follow_written_language(turn: Turn, text: str) -> None:
    """A person who never chose a language is answered in the one they write, when a message says it plainly
    (`written_language`): the language is stored (not as chosen, so it follows them again) and they are told once
    how to keep the other. A message that asks for a language in words is that command's, not a sign."""
    if turn.user.locale_chosen:
        return
    written = written_language(text)
    if written is None or written == turn.user.locale or written not in SUPPORTED_LOCALES:
        return
    said = setting_said(text)
    if said is not None and said[0] == "lang":
        return
    async with turn.brain.transactions.begin() as uow:
        if not await set_locale_of(uow, turn.user.id, written, chosen=False):
            return  # chosen meanwhile in another chat
    turn.user.locale = written
    turn.render = Renderer(written, turn.user.timezone)
    other = next(code for code in SUPPORTED_LOCALES if code != written)
    turn.say(tr("I'll answer in English, as you write. /lang {other} switches back.", other=other))


async def locale_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    """A language button of /lang (and of the setup's language step)."""
    await set_locale(turn, str(payload["locale"]))


async def tz(turn: Turn, args: str) -> None:
    if not args:
        turn.say(tr("Your time zone is {zone}. Change it with /tz Europe/Berlin.",
                    zone=zone_name(turn.user.timezone, turn.render.locale)))
        return
    try:
        zone = parse_timezone(args)
    except DomainError as refused:
        # A city, as setup takes it ("/tz Berlin", "/tz New York"); the reply names the zone it chose.
        found = zone_for_city(args)
        if found is None:
            turn.say(refused.text)
            return
        zone = found
    async with turn.brain.transactions.begin() as uow:
        await set_timezone(uow, turn.user.id, zone)
    turn.user.timezone = zone
    turn.render = Renderer(turn.user.locale, zone)
    turn.say(tr("Your time zone is now {zone}. Local time: {time}.", zone=zone_name(zone, turn.render.locale),
                time=turn.render.time_of(turn.now)))


COMMANDS = (
    Command("lang", "/lang de|en", N_("Change the language"), lang, aliases=("language", "sprache")),
    Command("tz", "/tz Europe/Berlin", N_("Set your time zone"), tz, aliases=("timezone", "zeitzone")),
)
ACTIONS = {"set_locale": locale_pressed}
