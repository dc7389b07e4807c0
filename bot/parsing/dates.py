"""Date and time phrases in German and English, relative to the person's local today:
"heute", "tomorrow", "bis Freitag", "next monday", "am 3.12.", "2026-12-24", "in 3 Tagen", "14:00"."""

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
RELATIVE: dict[str, int] = {
    "today": 0, "heute": 0, "tonight": 0, "heute abend": 0, "tomorrow": 1, "morgen": 1,
    "day after tomorrow": 2, "übermorgen": 2, "uebermorgen": 2, "yesterday": -1, "gestern": -1,
}
_PREFIX = r"(?:\b(?:bis|until|till|by|due|am|on|at|um|für|fuer|for|ab|spätestens|spaetestens)\s+)?"
_NEXT = r"(?:(?:next|nächsten|naechsten|nächste|naechste|kommenden|kommende|this|diesen|diese)\s+)?"
_WEEKDAY_ALT = "|".join(sorted((w for w in WEEKDAYS if len(w) > 2), key=len, reverse=True))
_RELATIVE_ALT = "|".join(sorted((re.escape(w) for w in RELATIVE), key=len, reverse=True))
DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"{_PREFIX}(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})", re.I),
    re.compile(rf"{_PREFIX}(?P<d>\d{{1,2}})\.(?P<m>\d{{1,2}})\.(?P<y>\d{{2,4}})?", re.I),
    re.compile(rf"{_PREFIX}in\s+(?P<n>\d{{1,3}})\s+(?P<unit>tagen|tag|days|day|wochen|woche|weeks|week)", re.I),
    re.compile(rf"{_PREFIX}{_NEXT}(?P<weekday>{_WEEKDAY_ALT})\b", re.I),
    re.compile(rf"{_PREFIX}(?P<rel>{_RELATIVE_ALT})\b", re.I),
)
# 12-hour times first ("3pm", "3:30 p.m."), then 24-hour ones ("14:00", "7.15", "14h30", "um 9", "20 Uhr").
TIME_RE = re.compile(r"(?:(?:um|at|@)\s+)?\b(?P<h12>1[0-2]|0?[1-9])(?::(?P<min12>[0-5]\d))?\s*(?P<half>[ap])\.?m\b\.?"
                     r"|(?:(?:um|at|@)\s+)?\b(?P<h>[01]?\d|2[0-3])(?::|\.|h)(?P<min>[0-5]\d)\b(?:\s*uhr)?"
                     r"|(?:(?:um|at|@)\s+)(?P<h2>[01]?\d|2[0-3])\s*(?:uhr|h|o'clock)?\b"
                     r"|\b(?P<h3>[01]?\d|2[0-3])\s*uhr\b", re.I)
# Something written as a clock time that is not one ("25:00", "14:60", "13pm"): worth a question, not a title.
CLOCKISH_RE = re.compile(r"\b\d{1,2}(?::\d{2}|\s*[ap]\.?m\b\.?|\s*uhr\b)", re.I)
DURATION_RE = re.compile(
    r"\b(?:for\s+|für\s+|fuer\s+)?(?P<n>\d{1,3})\s*(?P<unit>min|minutes|minuten|m|h|std|hours|stunden)\b", re.I
)


@dataclass(frozen=True)
class Found:
    value: date
    start: int
    end: int


def find_date(text: str, today: date) -> Found | None:
    """The first date phrase in `text` (its span, so callers can cut it out), or None."""
    best: Found | None = None
    for pattern in DATE_PATTERNS:
        for match in pattern.finditer(text):
            if match.start() > 0 and text[match.start() - 1].isalnum():
                continue
            if _plain_word(match):
                continue
            value = _resolve(match, today)
            if value is not None and (best is None or match.start() < best.start):
                best = Found(value, match.start(), match.end())
                break
    return best


# Short weekday names that are also everyday words ("sun cream", "sat down", "wed"): a day only after a word such as
# "on", "by" or "next" ("due sat", "next wed").
_WORDLIKE_WEEKDAYS = frozenset({"sun", "sat", "wed"})


def _plain_word(match: re.Match[str]) -> bool:
    weekday = (match.groupdict().get("weekday") or "").lower()
    return weekday in _WORDLIKE_WEEKDAYS and match.group(0).lower() == weekday


def _resolve(match: re.Match[str], today: date) -> date | None:
    groups = match.groupdict()
    try:
        if groups.get("iso"):
            return date.fromisoformat(groups["iso"])
        if groups.get("d"):
            day, month = int(groups["d"]), int(groups["m"])
            year_text = groups.get("y")
            if year_text:
                year = int(year_text) + (2000 if len(year_text) == 2 else 0)
                return date(year, month, day)
            candidate = date(today.year, month, day)
            # "am 3.1." in December means next January.
            return candidate if candidate >= today - timedelta(days=7) else date(today.year + 1, month, day)
    except ValueError:
        return None
    if groups.get("n"):
        n = int(groups["n"])
        unit = groups["unit"].lower()
        return today + timedelta(days=n * (7 if unit.startswith(("woche", "week")) else 1))
    if groups.get("weekday"):
        target = WEEKDAYS[groups["weekday"].lower()]
        ahead = (target - today.weekday()) % 7
        phrase = match.group(0).lower()
        if ahead == 0 or (re.search(r"\b(next|nächsten|naechsten|nächste|naechste)\b", phrase) and ahead < 7):
            ahead = ahead or 7
        return today + timedelta(days=ahead)
    if groups.get("rel"):
        return today + timedelta(days=RELATIVE[groups["rel"].lower()])
    return None


@dataclass(frozen=True)
class FoundTime:
    value: time
    start: int
    end: int


def find_time(text: str) -> FoundTime | None:
    match = TIME_RE.search(text)
    if not match:
        return None
    if match.group("h12"):
        hour = int(match.group("h12")) % 12 + (12 if match.group("half").lower() == "p" else 0)
        return FoundTime(time(hour, int(match.group("min12") or 0)), match.start(), match.end())
    hour_text = match.group("h") or match.group("h2") or match.group("h3")
    minute = match.group("min") or "0"
    return FoundTime(time(int(hour_text), int(minute)), match.start(), match.end())


# Something written as a date that is not one ("2026-02-30", "31.02.", "45.13.2026").
DATEISH_RE = re.compile(r"(?<![\w.])(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}\.\d{1,2}\.(?:\d{2,4})?)(?![\w])")


def find_dateish(text: str, today: date) -> str | None:
    """A date as written that is none (a second, readable date in the text is left alone)."""
    for match in DATEISH_RE.finditer(text):
        if find_date(match.group(0), today) is None:
            return match.group(0)
    return None


def find_clockish(text: str) -> str | None:
    """A clock time as written that `find_time` could not read (call it on what is left after the readable one)."""
    match = CLOCKISH_RE.search(text)
    return match.group(0).strip() if match else None


def find_duration_minutes(text: str) -> tuple[int, int, int] | None:
    match = DURATION_RE.search(text)
    if not match:
        return None
    n = int(match.group("n"))
    unit = match.group("unit").lower()
    minutes = n * 60 if unit in {"h", "std", "hours", "stunden"} else n
    return minutes, match.start(), match.end()


def cut(text: str, start: int, end: int) -> str:
    return re.sub(r"\s{2,}", " ", (text[:start] + " " + text[end:])).strip(" ,;-")
