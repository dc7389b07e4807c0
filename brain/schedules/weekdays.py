"""Which days of the week a schedule runs on: a 7-bit mask (bit 0 Monday .. bit 6 Sunday), parsed from
what people write ("weekdays", "werktags", "mon,wed,fri", "Sonntag") and named back in their language."""

from __future__ import annotations

import re

from babel.dates import get_day_names

from brain.i18n import Renderer, Text, tr

EVERY_DAY = 0b1111111
WORKDAYS = 0b0011111
WEEKEND = 0b1100000

_DAY_WORDS: dict[str, int] = {
    "monday": 0, "mon": 0, "mo": 0, "montag": 0, "montags": 0, "mondays": 0,
    "tuesday": 1, "tue": 1, "di": 1, "dienstag": 1, "dienstags": 1, "tuesdays": 1,
    "wednesday": 2, "wed": 2, "mi": 2, "mittwoch": 2, "mittwochs": 2, "wednesdays": 2,
    "thursday": 3, "thu": 3, "do": 3, "donnerstag": 3, "donnerstags": 3, "thursdays": 3,
    "friday": 4, "fri": 4, "fr": 4, "freitag": 4, "freitags": 4, "fridays": 4,
    "saturday": 5, "sat": 5, "sa": 5, "samstag": 5, "samstags": 5, "saturdays": 5,
    "sunday": 6, "sun": 6, "so": 6, "sonntag": 6, "sonntags": 6, "sundays": 6,
}
_SET_WORDS: dict[str, int] = {
    "daily": EVERY_DAY, "everyday": EVERY_DAY, "day": EVERY_DAY, "days": EVERY_DAY, "täglich": EVERY_DAY,
    "taeglich": EVERY_DAY, "jeden tag": EVERY_DAY, "every day": EVERY_DAY, "alle tage": EVERY_DAY,
    "weekdays": WORKDAYS, "weekday": WORKDAYS, "workdays": WORKDAYS, "werktags": WORKDAYS, "werktage": WORKDAYS,
    "wochentags": WORKDAYS, "mo-fr": WORKDAYS, "mon-fri": WORKDAYS,
    "weekends": WEEKEND, "weekend": WEEKEND, "wochenende": WEEKEND, "wochenenden": WEEKEND, "sa-so": WEEKEND,
    "sat-sun": WEEKEND,
}
_FILLER = frozenset({"every", "each", "on", "and", "am", "an", "jeden", "jede", "und", "at", "um"})


def parse_weekdays(text: str) -> int | None:
    """The mask for a phrase of days, or None when a word is not a day (so callers can report it).
    An empty phrase means every day."""
    phrase = text.strip().lower()
    if not phrase:
        return EVERY_DAY
    if phrase in _SET_WORDS:
        return _SET_WORDS[phrase]
    mask = 0
    for word in re.split(r"[\s,;/+&]+", phrase):
        if not word or word in _FILLER:
            continue
        if word in _SET_WORDS:
            mask |= _SET_WORDS[word]
        elif word in _DAY_WORDS:
            mask |= 1 << _DAY_WORDS[word]
        else:
            return None
    return mask or None


def runs_on(mask: int, weekday: int) -> bool:
    return bool(mask >> weekday & 1)


def describe_weekdays(mask: int, render: Renderer) -> str:
    """"every day", "on weekdays", "at weekends" or the day names ("Monday, Wednesday")."""
    named: dict[int, Text] = {EVERY_DAY: tr("every day"), WORKDAYS: tr("on weekdays"), WEEKEND: tr("at weekends")}
    if mask in named:
        return render(named[mask])
    names = get_day_names("wide", locale=render.locale)
    return ", ".join(str(names[d]) for d in range(7) if runs_on(mask, d))
