"""Reminder phrases in German and English, read without a language model: "remind me to call mom at 3pm",
"remind me at 9 tomorrow about the dentist", "erinnere mich morgen um 9 an den Zahnarzt", "in 20 minutes: tea",
"in 20 Minuten: Tee", and what /remind takes after the command ("15:00 call mom", "in 2 h laundry").

`read_reminder` reads a phrase that is meant as a reminder and says what is missing when it cannot; `free_text_reminder`
first decides whether a free text asks for one at all (None when it does not)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, time, timedelta

from bot.parsing.amounts import parse_count, parse_number
from bot.parsing.dates import (
    AFTERNOON,
    EVENING,
    MIDDAY,
    MORNING,
    NIGHT,
    cut,
    find_bare_hour,
    find_clockish,
    find_date,
    find_time,
    in_part_of_day,
    next_day_at,
    on_another_day,
)
from bot.parsing.recurrence import find_repetition
from brain.i18n import Text, tr

# What asks for a reminder in free text, and what it leaves in front of the reminder's words.
_ASK_RE = re.compile(
    r"^(?:please\s+|bitte\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?:remind\s+me|erinnere?\s+mich|reminder\s*:|erinnerung\s*:"
    r"|(?:set|add|create|make)\s+(?:me\s+)?(?:a|an|another|one)\s+reminder(?:\s+for)?\s*:?"
    r"|(?:stell|stelle|setz|setze|mach|mache|leg|lege)\s+(?:mir\s+)?(?:bitte\s+)?(?:eine|noch\s+eine)\s+erinnerung"
    r"(?:\s+(?:für|fuer|an))?(?:\s+an)?\s*:?)\s*(?:bitte\s+)?", re.I)
# The request said after when ("every day at 8 remind me to ...", "jeden Tag um 8 erinnere mich an ...").
_ASK_AFTER_RE = re.compile(r"^(?P<lead>.{2,60}?)[\s,]+(?:please\s+|bitte\s+)?(?:remind\s+me|erinnere?\s+mich)\b"
                           r"\s*(?:bitte\s+)?(?P<rest>.*)$", re.I)
# German asks with the verb last: "Kannst du mich morgen um 9 an den Zahnarzt erinnern?"
# "Könntest du mich bitte daran erinnern, Milch zu kaufen?"
_ASK_LAST_RE = re.compile(r"^(?:kannst|könntest|koenntest|würdest|wuerdest)\s+du\s+mich\s+(?:bitte\s+)?"
                          r"(?P<body>.*?)\s*\berinnern\b[\s,]*(?P<tail>.*?)[\s?!.]*$", re.I)
# "in 20 minutes: tea" alone (no "remind me") is a reminder only with the colon: "in 20 minutes I'm home" is not.
_RELATIVE_LEAD_RE = re.compile(r"^(?P<span>in\s+[^:]{1,30}?)\s*:\s*(?P<rest>.+)$", re.I)
_RELATIVE_RE = re.compile(
    r"\bin\s+(?:(?P<half>half\s+an|einer\s+halben|eine\s+halbe)\s+(?P<half_unit>hour|stunde)"
    r"|(?P<n>\d{1,4}(?:[.,]\d)?|[a-zäöü]+)\s*(?P<unit>minutes|minute|minuten|mins|min|m|hours|hour|hrs|hr|h"
    r"|stunden|stunde|std)\b\.?)", re.I)
# Words that join the reminder's words to the rest ("to call mom", "an den Zahnarzt", "daran, Mama anzurufen").
_LEADING_JOIN_RE = re.compile(
    r"^(?:(?:(?:to|that|about|of|for|an|ans|daran|dass|zu|um|at)\b|[:,-])\s*)+"  # whole words: "Tom", "Anna" stay
    r"(?:(?:den|die|das|dem|der|meinen|meine|meinem|my|the)\s+)?", re.I)
_TRAILING_JOIN_RE = re.compile(r"\s+(?:to|an|um|at|on|am|zu)$", re.I)
# A German infinitive with "zu" at the end ("daran, Mama anzurufen", "Milch zu kaufen") is the plain infinitive in the
# reminder's words ("Mama anrufen", "Milch kaufen"): the words stand on their own, as a note to oneself.
_ZU_INFINITIVE_RE = re.compile(
    r"(?:\bzu\s+(?P<verb>[a-zäöüß]{3,}en)|\b(?P<prefix>ab|an|auf|aus|bei|ein|fest|frei|heim|her|hin|los|mit|nach|vor"
    r"|weg|zurück|zusammen)zu(?P<stem>[a-zäöüß]{3,}en))$")
# The hour a day said without a time means, by the part of the day said with it.
_PART_DEFAULT_HOURS = {MORNING: 9, MIDDAY: 12, AFTERNOON: 15, EVENING: 19, NIGHT: 21}
DEFAULT_HOUR = 9
MAX_AHEAD_DAYS = 366 * 5


@dataclass(frozen=True)
class ReminderRequest:
    text: str
    at: datetime  # aware, in the person's zone
    # Said with a time of day only, which had passed today, so it is tomorrow's: the reply says so.
    rolled: bool = False
    rule: str | None = None  # repeats ("every day at 8", "jeden Montag um 9"): an RRULE from `at` on


# A wake-up asked for: "wake me up at 7", "weck mich morgen um 6:30 (auf)": a reminder to get up, in the morning.
_WAKE_RE = re.compile(
    r"^(?:please\s+|bitte\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?P<verb>wake\s+me(?:\s+up)?|wecke?\s+mich)\b\s*(?:bitte\s+)?(?P<when>.*?)"
    r"(?:\s+auf)?(?:,?\s+(?:please|bitte))?[\s?!.]*$", re.I)
_WAKE_LAST_RE = re.compile(r"^(?:kannst|könntest|koenntest|würdest|wuerdest)\s+du\s+mich\s+(?:bitte\s+)?"
                           r"(?P<when>.*?)\s*(?:auf)?wecken[\s?!.]*$", re.I)


def _wake_up(stripped: str, now: datetime) -> ReminderRequest | Text | None:
    asked = _WAKE_RE.match(stripped) or _WAKE_LAST_RE.match(stripped)
    if asked is None:
        return None
    when = asked.group("when").strip(" ,")
    if not when:
        return tr("When should I wake you? e.g. \"wake me up at 6:30\" or \"wake me tomorrow at 7\".")
    english = asked.re is _WAKE_RE and asked.group("verb").lower().startswith("wake")
    read = read_reminder(f"{when} {'Wake up' if english else 'Aufstehen'}", now)
    clock = find_time(when)
    if isinstance(read, ReminderRequest) and clock is not None and clock.open_meridiem and read.at.hour >= 12 \
            and clock.value.hour < 12:
        # "wake me at 6" is six in the morning, never the evening's, whatever the hour of reading
        morning = read.at - timedelta(hours=12)
        if morning <= now:
            morning += timedelta(days=1)
        read = replace(read, at=morning, rolled=morning.date() > now.date() and read.rule is None)
    return read


# A reminder some time before an appointment: "remind me 10 minutes before", "also remind me an hour before the
# dentist", "erinnere mich 15 Minuten vorher", "erinnere mich eine Stunde vor dem Zahnarzt".
_BEFORE_AMOUNT_EN = (r"(?:(?P<half>half\s+an)\s*(?P<half_unit>hour)|(?P<n>\d{1,3}|an?|one|two|three)\s*"
                     r"(?P<unit>minutes?|mins?|m|hours?|hrs?|h))")
_BEFORE_AMOUNT_DE = (r"(?:(?P<half>eine\s+halbe|einer\s+halben)\s*(?P<half_unit>stunde)"
                     r"|(?P<n>\d{1,3}|eine|einer|einen|zwei|drei)\s*(?P<unit>minuten|min|m|stunden?|std|h))")
_BEFORE_RES = (
    re.compile(r"^(?:(?:also|and|please|can\s+you|could\s+you)\s+)*remind\s+me\s+(?:about\s+it\s+|of\s+it\s+)?"
               + _BEFORE_AMOUNT_EN + r"\s+(?:before(?:hand)?|ahead|earlier)(?:\s+(?:the|my)\s+(?P<what>.+?))?"
               r"(?:,?\s+please)?[.!?]*$", re.I),
    re.compile(r"^(?:(?:und|auch|bitte|kannst\s+du)\s+)*(?:erinnere?\s+mich|mich)\s+(?:bitte\s+)?(?:auch\s+)?"
               + _BEFORE_AMOUNT_DE + r"\s+(?:vorher|davor|früher|vor\s+(?:dem|der|meinem|meiner|den)\s+"
               r"(?P<what>.+?))(?:\s+(?:bitte|erinnern))?[.!?]*$", re.I),
)
MAX_BEFORE = timedelta(days=7)
# What names an appointment before the words that are in its title ("meeting with Tom" is "Tom").
_APPOINTMENT_LEAD_RE = re.compile(r"^(?:(?:appointment|meeting|call|termin|treffen)\s+(?:with|at|mit|beim|bei|bei\s+der"
                                  r"|zum|zur|am)\s+)|\s+(?:appointment|meeting|termin)$", re.I)


def before_event_said(text: str) -> tuple[timedelta, str | None] | None:
    """How long before which appointment (None: the one just made) a reminder is asked for, or None."""
    said = next((m for pattern in _BEFORE_RES if (m := pattern.match(text.strip())) is not None), None)
    lead = _delta(said) if said is not None else None  # an amount read as "in 20 minutes" reads it
    if said is None or lead is None or not timedelta(0) < lead <= MAX_BEFORE:
        return None
    what = _APPOINTMENT_LEAD_RE.sub("", said.group("what") or "").strip(" ,")
    return lead, what or None


def free_text_reminder(text: str, now: datetime) -> ReminderRequest | Text | None:
    """A free text that asks for a reminder, read; what is missing when it asks for one that cannot be read; None
    when it asks for none."""
    stripped = text.strip()
    woken = _wake_up(stripped, now)
    if woken is not None:
        return woken
    asked = _ASK_RE.match(stripped)
    if asked is not None:
        return read_reminder(stripped[asked.end():].rstrip("?"), now)
    verb_last = _ASK_LAST_RE.match(stripped)
    if verb_last is not None:
        return read_reminder(f"{verb_last.group('body')}, {verb_last.group('tail')}".strip(" ,"), now)
    after = _ASK_AFTER_RE.match(stripped)
    if after is not None and _only_when(after.group("lead"), now):
        return read_reminder(f"{after.group('lead')} {after.group('rest')}".rstrip("?"), now)
    lead = _RELATIVE_LEAD_RE.match(stripped)
    if lead is not None and _RELATIVE_RE.fullmatch(lead.group("span").strip()) is not None:
        return read_reminder(stripped, now)
    return None


def reminder_without_when(text: str, now: datetime) -> str | None:
    """What a request for a reminder that says no time asks to be reminded of ("remind me to call mom": "Call mom"),
    or None (a request with a time, one for nothing, or no request)."""
    stripped = text.strip()
    asked = _ASK_RE.match(stripped)
    if asked is None:
        return None
    phrase = stripped[asked.end():].rstrip("?")
    read = read_reminder(phrase, now)
    if isinstance(read, ReminderRequest) or not read.msgid.startswith("When should I remind you?"):
        return None
    return _words(_VAGUE_WHEN_RE.sub(" ", phrase)) or None


def reminder_of_nothing(text: str) -> bool:
    """Whether a text asks for a reminder and says neither what nor when ("remind me", "remind me later")."""
    asked = _ASK_RE.match(text.strip())
    if asked is None:
        return False
    rest = _VAGUE_WHEN_RE.sub(" ", text.strip()[asked.end():])
    return not re.sub(r"\b(?:please|bitte)\b", " ", rest, flags=re.I).strip(" .!?,")


# A "when" that says no time ("remind me later to water the plants", "erinnere mich nachher an den Müll"): the
# question asks when, so these words are not the reminder's.
_VAGUE_WHEN_RE = re.compile(
    r"(?:^|(?<=\s))(?:later(?:\s+on)?|sometime|some\s+time|at\s+some\s+point|soon|another\s+time|später|spaeter"
    r"|nachher|irgendwann|bald|demnächst)(?=\s|[,.!?]|$)", re.I)


def only_when(text: str, now: datetime) -> bool:
    """Whether a short text says only when ("at 5 pm", "morgen um 9", "in 20 minutes"): the answer to "when?"."""
    return len(text.split()) <= 6 and _only_when(text.strip(" .!?"), now)


def _only_when(lead: str, now: datetime) -> bool:
    """Whether the words before "remind me" say only when (a repetition, a day, a time, a span from now), so they can
    be read as the reminder's time: "every day at 8", "morgen früh", not "I keep forgetting, so".
    """
    rest = lead.strip(" ,")
    repetition = find_repetition(rest, now.date())
    if repetition is not None:
        rest = repetition.cut_from(rest)
    relative = _RELATIVE_RE.search(rest)
    if relative is not None:
        rest = cut(rest, relative.start(), relative.end())
    day = find_date(rest, now.date())
    if day is not None:
        rest = cut(rest, day.start, day.end)
    found = find_time(rest)
    if found is not None:
        rest = cut(rest, found.start, found.end)
    said_when = repetition is not None or relative is not None or day is not None or found is not None
    return said_when and not re.sub(r"\b(?:please|bitte|and|und|then|dann)\b", "", rest, flags=re.I).strip(" ,.")


# A repetition within the day, which reminders do not have ("every 2 hours", "alle 30 Minuten", "stündlich").
_WITHIN_DAY_RE = re.compile(
    r"\b(?:every|alle|jede|jeden)\s+(?:\d+(?:[.,]\d+)?|half\s+an|halbe|two|three|four|few|couple\s+of|zwei|drei|vier|"
    r"paar)?\s*(?:hours?|hrs?|h|minutes?|mins?|stunden?|std|minuten?)\b|\b(?:hourly|stündlich|stuendlich)\b", re.I)
_ABOUT_WATER_RE = re.compile(r"\b(?:water|wasser|drink|trinken|hydrat\w*)\b", re.I)


def read_reminder(phrase: str, now: datetime) -> ReminderRequest | Text:
    """The reminder `phrase` asks for, relative to the person's local `now` (aware), or what to ask them."""
    if _WITHIN_DAY_RE.search(phrase):
        if _ABOUT_WATER_RE.search(phrase):
            return tr("I already remind you to drink water on my own, through the day whenever you are behind your "
                      "daily goal. /pulse shows when; \"my water goal is 2.5 l\" changes the goal.")
        return tr("A reminder repeats every day, week, month or year, not every few hours. For several times a day, "
                  "set one per time, e.g. /remind every day 10:00 stretch and /remind every day 15:00 stretch.")
    repetition = find_repetition(phrase, now.date())
    if repetition is None:
        return _read_once(phrase, now)
    rest = repetition.cut_from(phrase)
    read = _read_once(rest, now, repeating=True)
    part = repetition.part
    if isinstance(read, ReminderRequest):
        clock = find_time(rest)
        if part is not None and clock is not None and clock.open_meridiem:
            # "jeden Abend um 10": 22:00, the first one still ahead
            meant = time(in_part_of_day(clock.value.hour, part), clock.value.minute)
            first = datetime.combine(now.date(), meant, tzinfo=now.tzinfo)
            read = replace(read, at=first if first > now else first + timedelta(days=1))
        return replace(read, rule=repetition.rule)
    if read.msgid.startswith("When should I remind you?"):
        # "every Monday: bins": a repeating reminder without a time comes in the morning; "every evening" at 19:00.
        hour = _PART_DEFAULT_HOURS.get(part or "", DEFAULT_HOUR)
        first = datetime.combine(now.date(), time(hour), tzinfo=now.tzinfo)
        if first <= now:
            first += timedelta(days=1)
        words = _finish(rest, first)
        return replace(words, rule=repetition.rule) if isinstance(words, ReminderRequest) else words
    return read


def names_a_time(phrase: str, now: datetime) -> bool:
    """Whether `phrase` says when on the clock: a time ("14 Uhr", "at 9:30"), an hour after a day ("morgen 9") or a
    span from now ("in 2 hours"). A day alone ("the weather is strange today") does not; a reminder for it would
    come at the day's default hour, a guess."""
    body = phrase.strip()
    if _RELATIVE_RE.search(body) is not None or find_time(body) is not None:
        return True
    day = find_date(body, now.date())
    return day is not None and find_bare_hour(body, day.end) is not None


def _read_once(phrase: str, now: datetime, *, repeating: bool = False) -> ReminderRequest | Text:
    """`read_reminder` for one time. `repeating`: a time alone is the series' time of day as written ("every day
    at 8" is 8:00), its first one today or tomorrow; no afternoon is guessed and no "tomorrow" note is due."""
    body = phrase.strip()
    relative = _RELATIVE_RE.search(body)
    if relative is not None and (delta := _delta(relative)) is not None:
        if not timedelta(minutes=1) <= delta <= timedelta(days=MAX_AHEAD_DAYS):
            return tr("I can remind you from a minute to five years ahead.")
        return _finish(cut(body, relative.start(), relative.end()), now + delta)
    day = find_date(body, now.date())
    if day is not None:
        rest = cut(body, day.start, day.end)
        found, bare = find_time(rest), None
        if found is not None:
            at = on_another_day(rest, found, day.part)
            rest = cut(rest, found.start, found.end)
        elif (bare := find_bare_hour(body, day.end)) is not None:  # "morgen 9", "tomorrow night 9"
            at = on_another_day(body, bare, day.part)
            rest = cut(body, day.start, bare.end)
        else:
            at = time(_PART_DEFAULT_HOURS.get(day.part or "", DEFAULT_HOUR))
        when = datetime.combine(day.value, at, tzinfo=now.tzinfo)
        if when <= now:
            if found is None and bare is None:
                return tr("When on {date}? Add a time, e.g. /remind {day} 18:00 {text}.", date=day.value,
                          day=body[day.start:day.end], text=_words(rest)[:60] or "…")
            return tr("{time} has already passed. Pick a time ahead, e.g. /remind 15:00 call mom.", time=when)
        return _finish(rest, when)
    found = find_time(body)
    if found is None:
        unreadable = find_clockish(body)
        if unreadable is not None:
            return tr("I couldn't read the time \"{text}\". Write it like 14:00 or 2:30 pm.", text=unreadable[:20])
        return tr("When should I remind you? e.g. /remind 15:00 call mom, /remind tomorrow 9:00 dentist or "
                  "/remind in 20 min tea.")
    rest = cut(body, found.start, found.end)
    if repeating:
        first = datetime.combine(now.date(), found.value, tzinfo=now.tzinfo)
        return _finish(rest, first if first > now else first + timedelta(days=1))
    on, at = next_day_at(body, found, now.date(), now.time().replace(second=0, microsecond=0))
    return _finish(rest, datetime.combine(on, at, tzinfo=now.tzinfo), rolled=on > now.date())


def _finish(rest: str, at: datetime, *, rolled: bool = False) -> ReminderRequest | Text:
    words = _words(rest)
    if not words:
        return tr("What should I remind you of? e.g. /remind 15:00 call mom")
    return ReminderRequest(words, at, rolled)


def _words(rest: str) -> str:
    """The reminder's own words: without the joining words around them."""
    words = _LEADING_JOIN_RE.sub("", rest.strip(" ,;:-")).strip(" ,;:-")
    words = _TRAILING_JOIN_RE.sub("", words).strip(" ,;:-")
    words = _ZU_INFINITIVE_RE.sub(lambda m: m["verb"] or f"{m['prefix']}{m['stem']}", words)
    return words[:1].upper() + words[1:] if words[:1].islower() and words[:1].isascii() else words


def _delta(match: re.Match[str]) -> timedelta | None:
    if match.group("half"):
        return timedelta(minutes=30)
    raw = match.group("n").lower()
    number = 1 if raw == "einer" else parse_count(raw)
    amount = float(number) if number is not None else parse_number(raw)
    if amount is None:
        return None
    unit = match.group("unit").lower()
    if unit.startswith(("h", "stund", "std")):
        return timedelta(hours=amount)
    return timedelta(minutes=amount)
