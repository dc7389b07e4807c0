"""Date and time phrases in German and English, relative to the person's local today:
"heute", "tomorrow", "bis Freitag", "next monday", "am 3.12.", "5. Dezember", "Dec 5", "12/24", "2026-12-24",
"in 3 Tagen", "14:00", "halb acht", "noon", "morgen Abend um 8", "tomorrow night 9", "1,5 h"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, time, timedelta

WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0, "montag": 0, "mo": 0,
    "tuesday": 1, "tue": 1, "dienstag": 1, "di": 1,
    "wednesday": 2, "wed": 2, "mittwoch": 2, "mi": 2,
    "thursday": 3, "thu": 3, "donnerstag": 3, "do": 3,
    "friday": 4, "fri": 4, "freitag": 4, "fr": 4,
    "saturday": 5, "sat": 5, "samstag": 5, "sa": 5, "sonnabend": 5,
    "sunday": 6, "sun": 6, "sonntag": 6, "so": 6,
}
MONTHS: dict[str, int] = {
    "january": 1, "januar": 1, "jänner": 1, "jan": 1, "jän": 1,
    "february": 2, "februar": 2, "feb": 2,
    "march": 3, "märz": 3, "maerz": 3, "mar": 3, "mär": 3, "mrz": 3,
    "april": 4, "apr": 4,
    "may": 5, "mai": 5,
    "june": 6, "juni": 6, "jun": 6,
    "july": 7, "juli": 7, "jul": 7,
    "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oktober": 10, "oct": 10, "okt": 10,
    "november": 11, "nov": 11,
    "december": 12, "dezember": 12, "dec": 12, "dez": 12,
}
RELATIVE: dict[str, int] = {
    "today": 0, "heute": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
    "tomorrow": 1, "morgen": 1, "day after tomorrow": 2, "übermorgen": 2, "uebermorgen": 2, "yesterday": -1,
    "gestern": -1, "day before yesterday": -2, "vorgestern": -2,
}
# Parts of the day, as the hour they make of "8": the morning keeps it, the afternoon and evening take the later 8,
# the night the later one up to 11 and the small hours as they are ("night at 1" is 1:00 after midnight).
MORNING, MIDDAY, AFTERNOON, EVENING, NIGHT = "morning", "midday", "afternoon", "evening", "night"
# By the last word of the phrase ("am Abend", "in the evening", "at night").
PART_OF_DAY: dict[str, str] = {
    "morgens": MORNING, "früh": MORNING, "frueh": MORNING, "vormittags": MORNING, "morgen": MORNING,
    "vormittag": MORNING, "morning": MORNING, "mittags": MIDDAY, "mittag": MIDDAY, "nachmittags": AFTERNOON,
    "nachmittag": AFTERNOON, "afternoon": AFTERNOON, "abends": EVENING, "abend": EVENING, "evening": EVENING,
    "nachts": NIGHT, "nacht": NIGHT, "night": NIGHT,
}
# A day phrase that names its part of the day.
_RELATIVE_PARTS: dict[str, str] = {"tonight": EVENING, "this morning": MORNING, "this afternoon": AFTERNOON,
                                   "this evening": EVENING}
_PREFIX = r"(?:\b(?:bis|until|till|by|due|am|on|at|um|für|fuer|for|ab|spätestens|spaetestens)\s+)?"
_NEXT = (r"(?:(?:next|nächsten|naechsten|nächste|naechste|kommenden|kommende|this|an\s+diesem|diesen|diesem|dieser"
         r"|diese)\s+)?")
# "this tuesday" said on a Tuesday is today; "tuesday" alone, then, next week's.
_THIS_RE = re.compile(r"\b(?:this|diesen|diesem|dieser|diese)\b", re.I)
_WEEKDAY_ALT = "|".join(sorted((w for w in WEEKDAYS if len(w) > 2), key=len, reverse=True))
_RELATIVE_ALT = "|".join(sorted((re.escape(w) for w in RELATIVE), key=len, reverse=True))
_MONTH_ALT = "|".join(sorted(MONTHS, key=len, reverse=True))
# "Thu, Dec 24", "Do., 24. Dez.": a weekday in front of a full date belongs to it (the date decides).
_WEEKDAY_LEAD = rf"(?:(?:{_WEEKDAY_ALT})\b\.?,?\s+|(?:mo|di|mi|do|fr|sa|so)\.,?\s+)?"
# "5. Dezember", "5 Dec", "5th of December 2027", "24. Dez."
_DAY_MONTH = (rf"(?P<dm_d>\d{{1,2}})(?:\.|st|nd|rd|th)?\s*(?:of\s+)?(?P<dm_m>{_MONTH_ALT})\b\.?"
              rf"(?:,?\s+(?P<dm_y>\d{{4}})\b)?")
# "Dec 5", "December 5th", "December 5, 2027" (not "June 15:00")
_MONTH_DAY = (rf"(?P<md_m>{_MONTH_ALT})\b\.?\s*(?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?\b(?![:.]\d)"
              rf"(?:,?\s+(?P<md_y>\d{{4}})\b)?")
# "12/24", "12/24/2026": month first, as in the US; read only when the day says so (more than 12).
_SLASHED = r"(?<![\w/.])(?P<us_m>\d{1,2})/(?P<us_d>\d{1,2})(?:/(?P<us_y>\d{4}|\d{2}))?(?![\w/])"
_NEXT_WEEK = (r"(?:next\s+week|(?:in\s+der\s+)?(?:nächste[nrs]?|naechste[nrs]?|kommende[nrs]?)"
              r"\s+woche)")
DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"{_PREFIX}(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})", re.I),
    re.compile(rf"{_PREFIX}{_WEEKDAY_LEAD}(?P<d>\d{{1,2}})\.(?P<m>\d{{1,2}})\.(?P<y>\d{{2,4}})?", re.I),
    re.compile(rf"{_PREFIX}{_WEEKDAY_LEAD}(?:the\s+)?{_DAY_MONTH}", re.I),
    re.compile(rf"{_PREFIX}{_WEEKDAY_LEAD}{_MONTH_DAY}", re.I),
    re.compile(rf"{_PREFIX}{_SLASHED}", re.I),
    re.compile(rf"{_PREFIX}in\s+(?P<n>\d{{1,3}})\s+(?P<unit>tagen|tag|days|day|wochen|woche|weeks|week)", re.I),
    # "friday next week", "Freitag nächster Woche", "nächste Woche Freitag", and "next week" alone (its Monday)
    re.compile(rf"{_PREFIX}(?P<next_week>(?P<nw_day>{_WEEKDAY_ALT})\s+(?:of\s+)?{_NEXT_WEEK}"
               rf"|{_NEXT_WEEK}(?:\s+(?:am\s+|on\s+)?(?P<nw_day2>{_WEEKDAY_ALT}))?)\b", re.I),
    # "Freitag", "next friday", "Freitagabend" (German writes the part of the day onto the day)
    re.compile(rf"{_PREFIX}{_NEXT}(?P<weekday>{_WEEKDAY_ALT})"
               r"(?P<day_part>morgen|vormittag|mittag|nachmittag|abend|nacht)?\b", re.I),
    re.compile(rf"{_PREFIX}(?P<rel>{_RELATIVE_ALT})\b", re.I),
    # "Ende des Monats", "end of the month", "Monatsende": this month's last day
    re.compile(rf"{_PREFIX}(?P<month_end>(?:(?:zum\s+|am\s+)?ende\s+(?:des|dieses)\s+monats|monatsende"
               r"|(?:the\s+)?end\s+of\s+(?:the|this)\s+month))\b", re.I),
)
# A part of the day after a time ("8 Uhr abends", "halb acht abends", "7 in the evening", "um 8 am Abend") or before
# it ("abends um 8", "in the evening at 8"); the nouns alone ("Abend um 8", "Night 2:30") only after a day (see
# _DAY_PART_RE), as they may as well be the title.
_PART_AFTER_WORDS = (r"morgens|früh|frueh|vormittags|mittags|nachmittags|abends|nachts|in the morning|in the afternoon"
                     r"|in the evening|at night|am morgen|am vormittag|am mittag|am nachmittag|am abend|in der nacht")
_PART_AFTER_RE = re.compile(rf"\s*\b(?P<part>{_PART_AFTER_WORDS})\b", re.I)
_PART_BEFORE_RE = re.compile(rf"\b(?P<part>{_PART_AFTER_WORDS})\s+$", re.I)
# 12-hour times first ("3pm", "3:30 p.m."), then 24-hour ones ("14:00", "7.15", "14h30", "um 9", "20 Uhr"), then a
# bare hour that a part of the day makes a time ("8 abends", "9 at night").
TIME_RE = re.compile(r"(?:(?<!\w)(?:um|at|@)\s+)?\b(?P<h12>1[0-2]|0?[1-9])(?::(?P<min12>[0-5]\d))?\s*"
                     r"(?P<half>[ap])\.?m\b\.?"
                     r"|(?:(?<!\w)(?:um|at|@)\s+)?\b(?P<h>[01]?\d|2[0-3])(?::|\.|h)(?P<min>[0-5]\d)\b(?:\s*uhr)?"
                     r"|(?:(?<!\w)(?:um|at|@)\s+)(?P<h2>[01]?\d|2[0-3])\s*(?:uhr|h|o'clock)?\b"
                     r"|\b(?P<h3>[01]?\d|2[0-3])\s*uhr\b"
                     rf"|\b(?P<h4>1[0-2]|[1-9])(?=\s+(?:{_PART_AFTER_WORDS})\b)", re.I)
HOUR_WORDS: dict[str, int] = {
    "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5, "sechs": 6, "sieben": 7, "acht": 8,
    "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "zwoelf": 12,
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12,
}
_HOUR_ALT = "|".join(sorted(HOUR_WORDS, key=len, reverse=True)) + r"|1[0-2]|0?[1-9]"
# Minutes from the named hour: "halb acht" is 7:30, "viertel vor acht" 7:45, "quarter past seven" 7:15.
_SPOKEN_OFFSETS: dict[str, int] = {
    "halb": -30, "viertel nach": 15, "viertel vor": -15, "dreiviertel": -15,
    "half past": 30, "quarter past": 15, "quarter to": -15,
}
_SPOKEN_ALT = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(_SPOKEN_OFFSETS, key=len, reverse=True))
SPOKEN_TIME_RE = re.compile(
    rf"(?:(?<!\w)(?:um|at|@)\s+)?\b(?P<spoken>{_SPOKEN_ALT})\s+(?P<hour>{_HOUR_ALT})\b(?:\s*uhr\b)?"
    r"|(?:(?<!\w)(?:um|at|@|zu)\s+)?(?:\b12\s+)?\b(?P<named>noon|midday|midnight|mitternacht|mittags)\b"
    r"(?!\s+(?:um\s+)?(?:\d|halb|viertel))", re.I)
# Something written as a clock time that is not one ("25:00", "14:60", "13pm", "halb dreizehn"): worth a question,
# not a title.
CLOCKISH_RE = re.compile(r"\b\d{1,2}(?::\d{2}|\s*[ap]\.?m\b\.?|\s*uhr\b)"
                         rf"|\b(?:{_SPOKEN_ALT})\s+\w+", re.I)
_MINUTE_UNITS = r"(?:minutes|minute|minuten|mins|min|m)\b\.?"
DURATION_RE = re.compile(
    r"(?:\b(?:for|für|fuer)\s+)?"
    r"(?:\b(?P<half_hour>half\s+an\s+hour|(?:eine\s+)?halbe\s+stunde)\b"
    r"|\b(?P<one_hour>an|one|eine)\s+(?:hour|stunde)\b"
    r"|\b(?P<n>\d{1,3}(?:[.,]\d{1,2})?)\s*(?:(?P<hours>hours|hour|hrs|hr|h|stunden|stunde|std)\b\.?"
    rf"(?:\s*(?:and\s+|und\s+)?(?P<n2>\d{{1,2}})\s*{_MINUTE_UNITS})?|{_MINUTE_UNITS}))", re.I
)


# A part of the day right after the day: "morgen Abend", "Freitag früh", "tomorrow night", "heute am Nachmittag".
# Not "mittags": "morgen mittags" is noon, a time (see SPOKEN_TIME_RE).
_DAY_PART_RE = re.compile(r"\s+(?P<part>(?:am\s+|in\s+der\s+)?(?:morgen|vormittag|mittag|nachmittag|abend|nacht)"
                          r"|morgens|früh|frueh|vormittags|nachmittags|abends|nachts"
                          r"|(?:in\s+the\s+)?(?:morning|afternoon|evening)|(?:at\s+)?night)\b", re.I)


@dataclass(frozen=True)
class Found:
    value: date
    start: int
    end: int
    # The part of the day said with the day ("tomorrow evening", "Freitagabend", "tonight"), within the span.
    part: str | None = None


def find_date(text: str, today: date) -> Found | None:
    """The first date phrase in `text` with a part of the day right after it (its span, so callers can cut it out),
    or None."""
    best: Found | None = None
    for pattern in DATE_PATTERNS:
        for match in pattern.finditer(text):
            if match.start() > 0 and text[match.start() - 1].isalnum():
                continue
            if _plain_word(match):
                continue
            value = _resolve(match, today)
            if value is not None and (best is None or match.start() < best.start):
                best = _with_part_of_day(text, match, value)
                break
    return best


def _with_part_of_day(text: str, match: re.Match[str], value: date) -> Found:
    groups = match.groupdict()
    part = _RELATIVE_PARTS.get((groups.get("rel") or "").lower())
    if groups.get("day_part"):
        part = PART_OF_DAY[groups["day_part"].lower()]
    end = match.end()
    after = _DAY_PART_RE.match(text, end) if part is None else None
    if after is not None:
        part, end = PART_OF_DAY[after.group("part").lower().split()[-1]], after.end()
    return Found(value, match.start(), end, part)


# Short weekday names that are also everyday words ("sun cream", "sat down", "wed"): a day only after a word such as
# "on", "by" or "next" ("due sun", "next wed").
_WORDLIKE_WEEKDAYS = frozenset({"sun", "sat", "wed"})


def _plain_word(match: re.Match[str]) -> bool:
    weekday = (match.groupdict().get("weekday") or "").lower()
    return weekday in _WORDLIKE_WEEKDAYS and match.group(0).lower() == weekday


def _resolve(match: re.Match[str], today: date) -> date | None:
    groups = match.groupdict()
    try:
        if groups.get("month_end"):
            return (today.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
        if groups.get("iso"):
            return date.fromisoformat(groups["iso"])
        if groups.get("d"):
            day, month = int(groups["d"]), int(groups["m"])
            year_text = groups.get("y")
            if year_text:
                year = int(year_text) + (2000 if len(year_text) == 2 else 0)
                return date(year, month, day)
            return _named_month_day(today, month, day, None)
        if groups.get("dm_d"):
            return _named_month_day(today, MONTHS[groups["dm_m"].lower()], int(groups["dm_d"]), groups.get("dm_y"))
        if groups.get("md_d"):
            return _named_month_day(today, MONTHS[groups["md_m"].lower()], int(groups["md_d"]), groups.get("md_y"))
        if groups.get("us_d"):
            month, day = int(groups["us_m"]), int(groups["us_d"])
            if day <= 12:  # "3/4" is the 4th of March in the US and the 3rd of April elsewhere: not guessed
                return None
            return _named_month_day(today, month, day, groups.get("us_y"))
    except ValueError:
        return None
    if groups.get("n"):
        n = int(groups["n"])
        unit = groups["unit"].lower()
        return today + timedelta(days=n * (7 if unit.startswith(("woche", "week")) else 1))
    if groups.get("next_week"):
        monday = today + timedelta(days=7 - today.weekday())
        named = groups.get("nw_day") or groups.get("nw_day2")
        return monday + timedelta(days=WEEKDAYS[named.lower()]) if named else monday
    if groups.get("weekday"):
        target = WEEKDAYS[groups["weekday"].lower()]
        ahead = (target - today.weekday()) % 7
        phrase = match.group(0).lower()
        if ahead == 0 and _THIS_RE.search(phrase):
            return today
        if ahead == 0 or (re.search(r"\b(next|nächsten|naechsten|nächste|naechste)\b", phrase) and ahead < 7):
            ahead = ahead or 7
        return today + timedelta(days=ahead)
    if groups.get("rel"):
        return today + timedelta(days=RELATIVE[groups["rel"].lower()])
    return None


# A day and month without a year that has just gone is that date ("23.11." a week ago is a task already overdue, or an
# evening being logged, not one due in 51 weeks); further back the one ahead is meant: tasks and events are mostly
# planned, and "15.6." said in December is next summer, not last ("3.1." in December is January). Within a month.
_YEARLESS_REACH_BACK = timedelta(days=31)


def _named_month_day(today: date, month: int, day: int, year_text: str | None) -> date | None:
    """The given year's date, or without one the first such date from a month back (`_YEARLESS_REACH_BACK`; "29 Feb"
    may be years away)."""
    if year_text:
        return date(int(year_text) + (2000 if len(year_text) == 2 else 0), month, day)
    for year in range(today.year - 1, today.year + 9):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= today - _YEARLESS_REACH_BACK:
            return candidate
    return None


@dataclass(frozen=True)
class FoundTime:
    value: time
    start: int
    end: int
    # An hour from 1 to 12 that names no half of the day ("at 7", "7:30", "halb acht"): "tonight" may make it 19:30.
    open_meridiem: bool = False


def find_time(text: str) -> FoundTime | None:
    """The first clock time in `text`: "14:00", "3pm", "um 9", "20 Uhr", "noon", "mittags", "halb acht",
    "quarter to seven"; a part of the day next to it ("abends", "in the evening") is read with it."""
    matches = [m for m in (TIME_RE.search(text), SPOKEN_TIME_RE.search(text)) if m is not None]
    if not matches:
        return None
    match = min(matches, key=lambda m: (m.start(), -m.end()))
    groups = match.groupdict()
    if groups.get("h12"):
        hour = int(groups["h12"]) % 12 + (12 if groups["half"].lower() == "p" else 0)
        return FoundTime(time(hour, int(groups["min12"] or 0)), match.start(), match.end())
    if groups.get("named"):
        named = groups["named"].lower()
        return FoundTime(time(0 if named in {"midnight", "mitternacht"} else 12), match.start(), match.end())
    if groups.get("spoken"):
        hour_text = groups["hour"].lower()
        named_hour = HOUR_WORDS.get(hour_text) or int(hour_text)
        offset = _SPOKEN_OFFSETS[re.sub(r"\s+", " ", groups["spoken"].lower())]
        minutes = (named_hour * 60 + offset) % (12 * 60)
        minutes += 12 * 60 if minutes < 60 else 0  # "halb eins" is 12:30, not 0:30
        hour, minute, is_open = minutes // 60, minutes % 60, True
    else:
        hour_text = groups.get("h") or groups.get("h2") or groups.get("h3") or groups.get("h4") or "0"
        hour, minute = int(hour_text), int(groups.get("min") or 0)
        is_open = 1 <= hour <= 12 and not hour_text.startswith("0")
    start, end = match.start(), match.end()
    part = None
    if is_open:
        after = _PART_AFTER_RE.match(text, end)
        before = _PART_BEFORE_RE.search(text, 0, start)
        if after is not None:
            part, end = after.group("part").lower(), after.end()
        elif before is not None:
            part, start = before.group("part").lower(), before.start()
    if part is not None:
        hour = in_part_of_day(hour % 24, PART_OF_DAY[part.split()[-1]])
        is_open = False
    return FoundTime(time(hour % 24, minute), start, end, open_meridiem=is_open)


# A lone number that may be an hour: not "3h", "3 Stunden", "3.5", "3/4", "3 Uhr" (TIME_RE reads that one).
_BARE_HOUR_RE = re.compile(r"\s*(?P<hour>[01]?\d|2[0-3])(?![\w:.,/])"
                           r"(?!\s*(?:uhr|o'clock|[ap]\.?m\b|hours|hour|hrs|hr|h|stunden|stunde|std"
                           r"|minutes|minute|minuten|mins|min|m)\b)", re.I)


def find_bare_hour(text: str, at: int) -> FoundTime | None:
    """A lone number from 0 to 23 at `at`, say right after a day phrase ("friday 3", "tomorrow night 9", "morgen 18")
    or where a time is expected ("/morning 7"), as a time that names no half of the day; whether it is a time at
    all is the caller's call."""
    match = _BARE_HOUR_RE.match(text, at)
    if match is None:
        return None
    hour = int(match.group("hour"))
    is_open = 1 <= hour <= 12 and not match.group("hour").startswith("0")
    return FoundTime(time(hour), match.start("hour"), match.end(), open_meridiem=is_open)


def with_time_of_day(text: str, found: Found) -> tuple[int, int]:
    """The span of a day phrase with a clock time right after or before it ("next monday 9am", "9am tomorrow",
    "morgen 14 Uhr", "tomorrow night 9", "Freitag 18"): what a task, which keeps only its day, leaves out of its
    title. A time elsewhere in the title stays ("Book the 9am train by Friday"), and so does "1.10" (more often a
    version than 1:10)."""
    start, end = found.start, found.end
    later = find_time(text[end:])
    if later is not None and not text[end:end + later.start].strip() and not _dotted(text, end + later.start,
                                                                                        end + later.end):
        return start, end + later.end
    bare = find_bare_hour(text, end)
    if bare is not None and (found.part is not None or not bare.open_meridiem):
        return start, bare.end
    earlier = find_time(text[:start])
    if earlier is not None and not text[earlier.end:start].strip() and not _dotted(text, earlier.start, earlier.end):
        return earlier.start, end
    return start, end


def time_with_day(text: str, found: Found) -> time | None:
    """The clock time said next to a day phrase (the one `with_time_of_day` cuts out with it), in the part of the day
    said with the day ("tomorrow evening at 7" is 19:00, "Freitag 18" 18:00); None when there is none."""
    start, end = with_time_of_day(text, found)
    if (start, end) == (found.start, found.end):
        return None
    said = find_time(text[start:found.start] + " " + text[found.end:end])
    if said is None:
        bare = find_bare_hour(text, found.end)
        said = bare if bare is not None and bare.end == end else None
    if said is None:
        return None
    if found.part is not None and said.open_meridiem:
        return said.value.replace(hour=in_part_of_day(said.value.hour, found.part))
    return said.value


def find_time_at_edge(text: str) -> FoundTime | None:
    """A clock time at the end or the start of a text ("Report at 3pm", "Bericht um 15 Uhr", "3pm call Anna"): with no
    day said, the time the text is for. A time inside it stays the title's ("Book the 9am train"), as does "1.10" (see
    `with_time_of_day`)."""
    found = find_time(text)
    if found is None or not text[:found.start].strip():
        return None if found is None or _dotted(text, found.start, found.end) else found
    last = _last_time(text)  # not at the start: the last one, if it ends the text
    if last is None or text[last.end:].strip(" .,;!") or _dotted(text, last.start, last.end):
        return None
    return FoundTime(last.value, last.start, len(text), last.open_meridiem)  # with a full stop after it


def _last_time(text: str) -> FoundTime | None:
    last, at = None, 0
    while (found := find_time(text[at:])) is not None:
        last = FoundTime(found.value, at + found.start, at + found.end, found.open_meridiem)
        at = last.end
    return last


def written_with_minutes(text: str, found: FoundTime) -> bool:
    """Whether the time was written as a clock ("9:00", "9.30", "9h30"): that is the time meant, while an hour alone
    ("9", "9 Uhr") or a spoken time ("halb acht") leaves the half of the day open."""
    return re.search(r"\d[:.h]\d", text[found.start:found.end]) is not None


def next_day_at(text: str, found: FoundTime, today: date, now: time) -> tuple[date, time]:
    """The day of the next time `found` in `text` names from `now` (today, or tomorrow once it has passed), with the
    time meant: an hour said with no minutes and no half of the day ("at 3", "um 3 Uhr") is the afternoon's when only
    that is still ahead (15:00 at 8:30); once both have passed, tomorrow's as on any other day (`on_another_day`: "um 3"
    at 16:00 is 15:00, "um 7" at 23:45 is 7:00); an hour before 7 is always the afternoon's, also in the night ("um 5"
    at 0:30 is 17:00); "7:00" is seven in the morning, as written."""
    readings = [found.value]
    if found.open_meridiem and found.value.hour < 12 and not written_with_minutes(text, found):
        # An hour before 7 is the afternoon's as on any other day ("um 3" at 1:00 is 15:00, not 3:00 in the night).
        readings = [found.value.replace(hour=found.value.hour + 12)] if found.value.hour < AFTERNOON_BEFORE else [
            found.value, found.value.replace(hour=found.value.hour + 12)]
    ahead = [reading for reading in readings if reading > now]
    return (today, ahead[0]) if ahead else (today + timedelta(days=1), on_another_day(text, found))


# An hour alone ("um 3", "at 5") on another day is the afternoon's before this hour of the morning, the morning's
# from it on ("morgen um 8" is 8:00, "morgen um 3" 15:00).
AFTERNOON_BEFORE = 7


def on_another_day(text: str, found: FoundTime, part: str | None = None) -> time:
    """The time `found` in `text` means on a day other than today: with a part of the day said, in it; an hour alone
    early in the morning ("morgen um 3") in the afternoon; anything written with minutes as written."""
    value = found.value
    if not found.open_meridiem:
        return value
    if part is not None:
        return value.replace(hour=in_part_of_day(value.hour, part))
    if value.hour < AFTERNOON_BEFORE and not written_with_minutes(text, found):
        return value.replace(hour=value.hour + 12)
    return value


@dataclass(frozen=True)
class DueAtTime:
    """A task written with a clock time and no day: its title without the time, the day it is due, the time meant."""

    title: str
    due: date
    meant: time


def due_at_time(text: str, today: date, now: time) -> DueAtTime | None:
    """A task text with a clock time at its end or start and no day ("Report at 3pm", "Bericht um 15 Uhr"): a task
    keeps a day, not a time, so the time leaves the title and makes the task due on the day of the next such time
    (`find_time_at_edge`, `next_day_at`). None when there is no such time, or nothing else in the text."""
    at_time = find_time_at_edge(text)
    if at_time is None:
        return None
    title = cut(text, at_time.start, at_time.end)
    if not title:
        return None
    due, meant = next_day_at(text, at_time, today, now)
    return DueAtTime(title, due, meant)


def _dotted(text: str, start: int, end: int) -> bool:
    return re.fullmatch(r"\d{1,2}\.\d{2}", text[start:end].strip()) is not None


def in_part_of_day(hour: int, part: str) -> int:
    """A 1-12 hour in a part of the day (MORNING ... NIGHT): 8 in the evening is 20:00, 1 at midday 13:00, 12 at
    night midnight."""
    if part in (AFTERNOON, EVENING) and 1 <= hour <= 11:
        return hour + 12
    if part == MIDDAY and 1 <= hour <= 5:
        return hour + 12
    if part == NIGHT:
        return hour + 12 if 6 <= hour <= 11 else (0 if hour == 12 else hour)
    return hour


# Something written as a date that is not one ("2026-02-30", "31.02.", "45.13.2026", "31 November", "Feb 30").
DATEISH_RE = re.compile(r"(?<![\w.])(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}\.\d{1,2}\.(?:\d{2,4})?)(?![\w])"
                        rf"|(?<![\w.])\d{{1,2}}(?:\.|st|nd|rd|th)?\s*(?:of\s+)?(?:{_MONTH_ALT})\b\.?"
                        rf"(?:,?\s+\d{{4}}\b)?"
                        rf"|\b(?:{_MONTH_ALT})\b\.?\s*\d{{1,2}}(?:st|nd|rd|th)?\b(?![:.]\d)(?:,?\s+\d{{4}}\b)?", re.I)
# "3/4", "13/12", "12/31/2026": a date only next to a cue word ("bis 3/4") or where a date is expected (an event);
# elsewhere it may be a fraction ("1/2 cup").
SLASHED_DATEISH_RE = re.compile(r"(?:\b(?P<cue>bis|until|till|by|due|am|on|ab)\s+)?"
                                r"(?<![\w/.])(?P<date>\d{1,2}/\d{1,2}(?:/\d{2,4})?)(?![\w/])", re.I)


def find_dateish(text: str, today: date, *, slashed: bool = False) -> str | None:
    """A date as written that is none (a second, readable date in the text is left alone); with `slashed`, also
    "3/4" and the like without a cue word."""
    for match in DATEISH_RE.finditer(text):
        if find_date(match.group(0), today) is None:
            return match.group(0).strip()
    for match in SLASHED_DATEISH_RE.finditer(text):
        if (slashed or match.group("cue")) and find_date(match.group("date"), today) is None:
            return match.group("date")
    return None


def find_clockish(text: str) -> str | None:
    """A clock time as written that `find_time` could not read (call it on what is left after the readable one)."""
    match = CLOCKISH_RE.search(text)
    return match.group(0).strip() if match else None


def find_duration_minutes(text: str) -> tuple[int, int, int] | None:
    """A length ("45m", "1,5 h", "for 1 hour", "20 mins", "1 Std. 30 Min.", "half an hour") in whole minutes,
    with its span."""
    match = DURATION_RE.search(text)
    if not match:
        return None
    if match.group("half_hour"):
        minutes = 30
    elif match.group("one_hour"):
        minutes = 60
    else:
        n = float(match.group("n").replace(",", "."))
        minutes = round(n * 60) + int(match.group("n2") or 0) if match.group("hours") else round(n)
    return minutes, match.start(), match.end()


def cut(text: str, start: int, end: int) -> str:
    return re.sub(r"\s{2,}", " ", (text[:start] + " " + text[end:])).strip(" ,;-")


# "3.-10.8.": a first day that borrows the month (and year) of the last.
_SHORT_RANGE_RE = re.compile(r"^\s*(?P<first>\d{1,2})\.?\s*[-–]\s*(?=\d{1,2}\.\d{1,2}\.)")
_RANGE_JOIN_RE = re.compile(r"\s*(?:[-–]|\b(?:bis|to|until|till)\b)\s*", re.I)
_UNTIL_LEAD_RE = re.compile(r"^\s*(?:bis|until|till|to)\s+", re.I)


def find_date_range(text: str, today: date) -> tuple[date | None, date] | None:
    """A span of days as people write a vacation: "3.-10.8.", "3.8.-10.8.", "24.12. bis 27.12.", "Aug 3 to Aug 10",
    "from monday to friday", or only its end ("bis 10.8.", "until Friday": the first day is left to the caller).
    None when the text is not one (or the end comes before the start)."""
    short = _SHORT_RANGE_RE.match(text)
    if short is not None:
        last = find_date(text[short.end():], today)
        if last is None or last.start != 0:
            return None
        first_day, year, month = int(short.group("first")), last.value.year, last.value.month
        if first_day > last.value.day:
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        try:
            first = date(year, month, first_day)
        except ValueError:
            return None
        return (first, last.value) if first <= last.value else None
    lead = _UNTIL_LEAD_RE.match(text)
    if lead is not None:
        last = find_date(text[lead.end():], today)
        return (None, last.value) if last is not None and last.start == 0 else None
    rest = re.sub(r"^\s*(?:from|vom|von|ab)\s+", "", text, flags=re.I)
    start = find_date(rest, today)
    if start is None:
        return None
    joined = _RANGE_JOIN_RE.match(rest, start.end)
    if joined is None:
        return None
    end = find_date(rest[joined.end():], today)
    if end is None or end.start != 0 or end.value < start.value:
        return None
    return start.value, end.value
