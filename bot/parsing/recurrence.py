"""Repetition phrases in German and English, as an RRULE: "every Monday", "jeden zweiten Dienstag", "daily",
"täglich", "werktags", "every 3 days", "alle 2 Wochen", "monthly on the 1st", "jeden Monat am 15.", "every year",
with an end: "until 31.12.", "bis Dezember 24", "10 times", "10 mal", "5x", "for 3 days", "eine Woche lang".

`find_repetition` returns the rule and the spans of text it was read from, so a command can cut them out of a title
and read the rest (the first day, the time) as it reads any other."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

from bot.parsing.amounts import NUMBER_WORDS, parse_count
from bot.parsing.dates import AFTERNOON, EVENING, MIDDAY, MORNING, NIGHT, find_date
from brain.recurrence import DAY_CODES, MAX_COUNT, normalize, with_until

_DAY_WORDS: dict[str, int] = {
    "monday": 0, "mondays": 0, "montag": 0, "montags": 0,
    "tuesday": 1, "tuesdays": 1, "dienstag": 1, "dienstags": 1,
    "wednesday": 2, "wednesdays": 2, "mittwoch": 2, "mittwochs": 2,
    "thursday": 3, "thursdays": 3, "donnerstag": 3, "donnerstags": 3,
    "friday": 4, "fridays": 4, "freitag": 4, "freitags": 4,
    "saturday": 5, "saturdays": 5, "samstag": 5, "samstags": 5, "sonnabend": 5,
    "sunday": 6, "sundays": 6, "sonntag": 6, "sonntags": 6,
}
_DAY_ALT = "|".join(sorted(_DAY_WORDS, key=len, reverse=True))
_DAYS = rf"(?P<days>(?:{_DAY_ALT})(?:\s*(?:,|and|und|&)\s*(?:{_DAY_ALT}))*)"
_ORDINALS: dict[str, int] = {
    "other": 2, "second": 2, "2nd": 2, "zweiten": 2, "zweite": 2, "2.": 2, "third": 3, "3rd": 3, "dritten": 3,
    "dritte": 3, "3.": 3, "fourth": 4, "4th": 4, "vierten": 4, "vierte": 4, "4.": 4,
}
_ORDINAL_ALT = "|".join(re.escape(w) for w in sorted(_ORDINALS, key=len, reverse=True))
_EVERY = r"(?:every|each|jeden|jede|jedes|alle)"
_UNITS: dict[str, str] = {
    "day": "DAILY", "days": "DAILY", "tag": "DAILY", "tage": "DAILY", "week": "WEEKLY", "weeks": "WEEKLY",
    "woche": "WEEKLY", "wochen": "WEEKLY", "month": "MONTHLY", "months": "MONTHLY", "monat": "MONTHLY",
    "monate": "MONTHLY", "year": "YEARLY", "years": "YEARLY", "jahr": "YEARLY", "jahre": "YEARLY",
}
_UNIT_ALT = "|".join(sorted(_UNITS, key=len, reverse=True))
# "daily for 3 days ..." (a title starting with "Daily" is otherwise a thing: see below)
_FOR_LENGTH = r"(?:for|für)\s+(?:the\s+next\s+)?\S+\s+(?:days?|weeks?|months?|tage|wochen?|monate?)\b"
_ADVERBS: dict[str, str] = {
    "daily": "FREQ=DAILY", "täglich": "FREQ=DAILY", "taeglich": "FREQ=DAILY", "weekly": "FREQ=WEEKLY",
    "wöchentlich": "FREQ=WEEKLY", "woechentlich": "FREQ=WEEKLY", "monthly": "FREQ=MONTHLY",
    "monatlich": "FREQ=MONTHLY", "yearly": "FREQ=YEARLY", "annually": "FREQ=YEARLY", "jährlich": "FREQ=YEARLY",
    "jaehrlich": "FREQ=YEARLY", "weekdays": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "werktags": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "wochentags": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
}
_PATTERNS: tuple[re.Pattern[str], ...] = (
    # "every weekday", "jeden Werktag"
    re.compile(rf"\b{_EVERY}\s+(?P<weekday>weekday|werktag)\b", re.I),
    # "every evening", "jeden Abend", "jeden Morgen": daily, at a time of that part of the day
    re.compile(rf"\b{_EVERY}\s+(?P<part>morning|evening|night|afternoon|morgen|abend|nachmittag|vormittag|mittag)\b",
               re.I),
    # "every other Tuesday", "jeden zweiten Dienstag", "every 2nd tuesday"
    re.compile(rf"\b{_EVERY}\s+(?P<ordinal>{_ORDINAL_ALT})\s+{_DAYS}\b", re.I),
    # "every Monday", "jeden Montag und Donnerstag"
    re.compile(rf"\b{_EVERY}\s+{_DAYS}\b", re.I),
    # "every 2 weeks on Tuesday", "alle 2 Wochen dienstags", "every 3 days", "jeden Tag", "every month"
    re.compile(rf"\b{_EVERY}\s+(?:(?P<n>\d{{1,2}}|[a-zäöü]+)\s+)?(?P<unit>{_UNIT_ALT})\b"
               rf"(?:\s+(?:on|am|an)?\s*{_DAYS})?", re.I),
    # "Mondays", "montags und donnerstags"
    re.compile(rf"(?<!\w)(?P<plural>(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|montags"
               rf"|dienstags|mittwochs|donnerstags|freitags|samstags|sonntags)"
               rf"(?:\s*(?:,|and|und|&)\s*(?:{_DAY_ALT}))*)\b", re.I),
    # "daily", "täglich", "werktags"; at the start of a title only with a time or day after it ("daily at 8 pills"),
    # since "Daily report" or "Weekly review" names a thing, not a repetition
    re.compile(rf"(?<=\S)\s+(?P<adverb>{'|'.join(_ADVERBS)})\b"
               rf"|^(?P<lead_adverb>{'|'.join(_ADVERBS)})\b(?=\s*(?:$|,|at\b|um\b|on\b|am\b|\d|{_FOR_LENGTH}))", re.I),
)
# "on the 1st", "am 1.", "on day 15": the day of the month of a monthly series.
_MONTH_DAY_RE = re.compile(r"\b(?:on\s+the|on\s+day|am|on)\s+(?P<day>[1-9]|[12]\d|3[01])(?:\.|st|nd|rd|th)?(?!\S)",
                           re.I)
_COUNT_RE = re.compile(r"\b(?:for\s+)?(?P<count>\d{1,3})\s*(?:times|time|mal|x)\b|\b(?P<count2>\d{1,3})-mal\b", re.I)
_UNTIL_RE = re.compile(r"\b(?:until|till|bis)\s+", re.I)
# "for 3 days", "for the next two weeks", "für einen Monat", "drei Tage lang", "die nächsten 2 Wochen"
_NUMBER_ALT = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_LENGTH_UNITS: dict[str, str] = {
    "day": "DAILY", "days": "DAILY", "tag": "DAILY", "tage": "DAILY", "week": "WEEKLY", "weeks": "WEEKLY",
    "woche": "WEEKLY", "wochen": "WEEKLY", "month": "MONTHLY", "months": "MONTHLY", "monat": "MONTHLY",
    "monate": "MONTHLY",
}
_LENGTH = (rf"(?P<n>\d{{1,3}}|{_NUMBER_ALT})\s+(?P<unit>{'|'.join(sorted(_LENGTH_UNITS, key=len, reverse=True))})")
_LENGTH_RE = re.compile(
    rf"\b(?:(?:for|für)\s+(?:the\s+next\s+|die\s+nächsten\s+)?{_LENGTH}(?:\s+lang)?"
    rf"|(?:die\s+nächsten\s+)?{_LENGTH.replace('<n>', '<n2>').replace('<unit>', '<unit2>')}\s+lang"
    rf"|(?:the\s+next|die\s+nächsten)\s+{_LENGTH.replace('<n>', '<n3>').replace('<unit>', '<unit3>')})\b", re.I)


# The part of the day "every evening" / "jeden Abend" names (bot.parsing.dates' names for them).
_PARTS = {"morning": MORNING, "morgen": MORNING, "vormittag": MORNING, "mittag": MIDDAY, "afternoon": AFTERNOON,
          "nachmittag": AFTERNOON, "evening": EVENING, "abend": EVENING, "night": NIGHT}


@dataclass(frozen=True)
class FoundRepetition:
    rule: str
    spans: tuple[tuple[int, int], ...]  # the text it was read from, in order
    part: str | None = None  # "every evening": the part of the day its time is in

    def cut_from(self, text: str) -> str:
        out, last = [], 0
        for start, end in self.spans:
            out.append(text[last:start])
            last = end
        out.append(text[last:])
        return re.sub(r"\s{2,}", " ", "".join(out)).strip(" ,;-")


def find_repetition(text: str, today: date) -> FoundRepetition | None:
    """The repetition a phrase names, with its end, or None when it names none."""
    for pattern in _PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        rule = _rule_of(match)
        if rule is None:
            continue
        spans = [(match.start(), match.end())]
        if rule.startswith("FREQ=MONTHLY") and "BYMONTHDAY" not in rule:
            day = _MONTH_DAY_RE.search(text, match.end()) or _MONTH_DAY_RE.search(text[:match.start()])
            if day is not None:
                rule += f";BYMONTHDAY={int(day.group('day'))}"
                spans.append((day.start(), day.end()))
        rule, spans = _with_end(text, rule, spans, today)
        part = _PARTS.get((match.groupdict().get("part") or "").lower())
        return FoundRepetition(normalize(rule), tuple(sorted(spans)), part)
    return None


def _rule_of(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    if groups.get("weekday"):
        return "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    if groups.get("part"):
        return "FREQ=DAILY"
    adverb = groups.get("adverb") or groups.get("lead_adverb")
    if adverb:
        return _ADVERBS[adverb.lower()]
    if groups.get("plural"):
        return f"FREQ=WEEKLY;BYDAY={_codes(groups['plural'])}"
    if groups.get("unit"):
        n = groups.get("n")
        interval = parse_count(n) if n else 1
        if interval is None:
            return None
        freq = _UNITS[groups["unit"].lower()]
        if groups.get("days") and freq == "WEEKLY":  # "alle 2 Wochen dienstags"
            return f"FREQ=WEEKLY;INTERVAL={interval};BYDAY={_codes(groups['days'])}"
        return f"FREQ={freq};INTERVAL={interval}"
    days = groups.get("days")
    if days:
        interval = _ORDINALS.get((groups.get("ordinal") or "").lower(), 1)
        return f"FREQ=WEEKLY;INTERVAL={interval};BYDAY={_codes(days)}"
    return None


def _codes(days: str) -> str:
    found = [_DAY_WORDS[w.lower()] for w in re.findall(r"[a-zäöü]+", days, re.I) if w.lower() in _DAY_WORDS]
    return ",".join(DAY_CODES[d] for d in sorted(set(found)))


def _with_end(text: str, rule: str, spans: list[tuple[int, int]], today: date) -> tuple[str, list[tuple[int, int]]]:
    """The rule with an end said in the text ("until 31.12.", "10 times"), and its span."""
    counted = _COUNT_RE.search(text)
    if counted is not None:
        count = int(counted.group("count") or counted.group("count2"))
        if count >= 1:
            return f"{rule};COUNT={count}", [*spans, (counted.start(), counted.end())]
    for until in _UNTIL_RE.finditer(text):
        day = find_date(text[until.end():], today)
        if day is not None and day.start == 0:
            return with_until(rule, day.value), [*spans, (until.start(), until.end() + day.end)]
    length = _LENGTH_RE.search(text)
    if length is not None:
        n = parse_count(next(v for k, v in length.groupdict().items() if k.startswith("n") and v))
        unit = _LENGTH_UNITS[next(v for k, v in length.groupdict().items() if k.startswith("unit") and v).lower()]
        if n is not None and 1 <= n <= MAX_LENGTH[unit]:
            return _for_length(rule, n, unit, today), [*spans, (length.start(), length.end())]
    return rule, spans


# The longest "for N days / weeks / months" read as the end of a series (about two years).
MAX_LENGTH = {"DAILY": 731, "WEEKLY": 104, "MONTHLY": 24}


def _for_length(rule: str, n: int, unit: str, today: date) -> str:
    """A series said to last n days, weeks or months. Where that is a whole number of its own steps it goes out that
    often from its first time, however late today it is said: "every day for 3 days" 3 times, "every evening for a
    week" 7, "Mondays and Thursdays for 2 weeks" 4. Otherwise ("every 2 days for a month") it ends on the last day
    of that length from today."""
    parts = dict(part.split("=", 1) for part in normalize(rule).split(";"))
    steps = None
    if "INTERVAL" not in parts and "BYMONTHDAY" not in parts:
        per_week = len(parts.get("BYDAY", "").split(",")) if "BYDAY" in parts else 1
        if parts["FREQ"] == "DAILY" and unit in ("DAILY", "WEEKLY"):
            steps = n * (7 if unit == "WEEKLY" else 1)
        elif parts["FREQ"] == "WEEKLY" and unit == "WEEKLY":
            steps = n * per_week
    if parts["FREQ"] == "MONTHLY" and unit == "MONTHLY" and "INTERVAL" not in parts \
            and "," not in parts.get("BYMONTHDAY", ""):
        steps = n
    if steps is not None:
        return f"{rule};COUNT={min(steps, MAX_COUNT)}"
    step = relativedelta(months=n) if unit == "MONTHLY" else timedelta(weeks=n if unit == "WEEKLY" else 0,
                                                                         days=n if unit == "DAILY" else 0)
    return with_until(rule, today + step - timedelta(days=1))
