"""Repetition as RFC 5545 RRULE text ("FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"), expanded with python-dateutil's rrule over
wall times of one zone, so a series keeps its local time across DST changes. Pure: no database, no clock.

A rule is anchored at its first wall time (DTSTART, naive, in the series' zone); UNTIL is a wall time of that zone
too. A wall time the clocks skip happens right after the gap, one they repeat at its first instant (as the scheduled
pushes do). `describe` names a rule in the person's language."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from babel.dates import get_day_names
from dateutil.rrule import rrule, rrulestr

from brain.i18n import Renderer, Text, ntr, tr

FREQS = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")
DAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_PARTS = {"FREQ", "INTERVAL", "BYDAY", "BYMONTHDAY", "BYMONTH", "COUNT", "UNTIL"}
_BYDAY_RE = re.compile(r"([+-]?[1-5])?(MO|TU|WE|TH|FR|SA|SU)")
MAX_INTERVAL = 99
MAX_COUNT = 999
# However far a series reaches, one expansion looks at no more than this many occurrences.
MAX_EXPANDED = 2000


class RuleError(ValueError):
    """An RRULE this code does not take; `text` says why, for the person."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.msgid)
        self.text = text


def normalize(rule: str) -> str:
    """The rule in one canonical spelling (upper case, parts in a fixed order, no "RRULE:"), checked: the
    frequencies DAILY to YEARLY with INTERVAL, BYDAY, BYMONTHDAY, BYMONTH and one of COUNT or UNTIL."""
    text = rule.strip().upper()
    text = text.removeprefix("RRULE:")
    parts: dict[str, str] = {}
    for piece in filter(None, text.split(";")):
        name, _, value = piece.partition("=")
        if name not in _PARTS or not value or name in parts:
            raise RuleError(tr("I can't read the repetition \"{rule}\".", rule=rule[:60]))
        parts[name] = value
    if parts.get("FREQ") not in FREQS:
        raise RuleError(tr("A repetition needs to be daily, weekly, monthly or yearly."))
    if "COUNT" in parts and "UNTIL" in parts:
        raise RuleError(tr("A repetition ends either after a number of times or on a day, not both."))
    _check_number(parts, "INTERVAL", 1, MAX_INTERVAL)
    _check_number(parts, "COUNT", 1, MAX_COUNT)
    if "BYDAY" in parts and not all(_BYDAY_RE.fullmatch(d) for d in parts["BYDAY"].split(",")):
        raise RuleError(tr("I can't read the repetition \"{rule}\".", rule=rule[:60]))
    if "BYMONTHDAY" in parts:
        for day in parts["BYMONTHDAY"].split(","):
            if not day.lstrip("-").isdecimal() or not 1 <= abs(int(day)) <= 31:
                raise RuleError(tr("I can't read the repetition \"{rule}\".", rule=rule[:60]))
    if "UNTIL" in parts:
        parts["UNTIL"] = _until(parts["UNTIL"], rule)
    order = ("FREQ", "INTERVAL", "BYMONTH", "BYMONTHDAY", "BYDAY", "COUNT", "UNTIL")
    if parts.get("INTERVAL") == "1":
        del parts["INTERVAL"]
    return ";".join(f"{name}={parts[name]}" for name in order if name in parts)


def _check_number(parts: dict[str, str], name: str, low: int, high: int) -> None:
    if name in parts and (not parts[name].isdecimal() or not low <= int(parts[name]) <= high):
        raise RuleError(tr("A repetition's {part} must be between {low} and {high}.", part=name.lower(), low=low,
                           high=high))


def _until(value: str, rule: str) -> str:
    """UNTIL as a wall time of the series' zone, "20261231T235959" (a date alone means the end of that day)."""
    raw = value.rstrip("Z")
    try:
        if len(raw) == 8:
            return datetime.strptime(raw, "%Y%m%d").strftime("%Y%m%dT235959")
        return datetime.strptime(raw, "%Y%m%dT%H%M%S").strftime("%Y%m%dT%H%M%S")
    except ValueError:
        raise RuleError(tr("I can't read the repetition \"{rule}\".", rule=rule[:60])) from None


def with_until(rule: str, last_day: date) -> str:
    """The rule ending after the wall day `last_day`."""
    kept = [p for p in normalize(rule).split(";") if not p.startswith(("UNTIL=", "COUNT="))]
    return normalize(";".join([*kept, f"UNTIL={last_day:%Y%m%d}T235959"]))


def count_left(rule: str, start: datetime, zone: ZoneInfo, before: datetime) -> str:
    """A rule with COUNT less the occurrences of the series (from `start`, aware, read as a wall time of `zone`) before
    the instant `before`, those already gone out: moved to start anew, the series keeps the number it has left.
    Other rules as they are."""
    parts = normalize(rule).split(";")
    count = next((int(p.removeprefix("COUNT=")) for p in parts if p.startswith("COUNT=")), None)
    if count is None:
        return normalize(rule)
    gone = len(occurrences(rule, start, zone, start - timedelta(seconds=1), before - timedelta(seconds=1)))
    kept = [p for p in parts if not p.startswith("COUNT=")]
    return normalize(";".join([*kept, f"COUNT={max(count - gone, 1)}"]))


def _expander(rule: str, start: datetime) -> rrule:
    """dateutil's expansion of the rule from `start`, a naive wall time."""
    parsed = rrulestr(normalize(rule), dtstart=start.replace(tzinfo=None, second=0, microsecond=0))
    assert isinstance(parsed, rrule)
    return parsed


def wall_instant(local: datetime, zone: ZoneInfo) -> datetime:
    """A naive wall time of `zone` as a UTC instant (fold 0: see the module docstring)."""
    return local.replace(tzinfo=zone).astimezone(UTC)


def occurrences(rule: str, start: datetime, zone: ZoneInfo, after: datetime, until: datetime) -> list[datetime]:
    """The UTC instants of the series with after < instant <= until, oldest first. `start` is the first wall time
    (naive, or aware: then read as a wall time of its own zone's clock face)."""
    wall = start.replace(tzinfo=None)
    expander = _expander(rule, wall)
    # A day of margin either side: an instant's wall date differs from its UTC date by less than that.
    low = after.astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
    high = until.astimezone(zone).replace(tzinfo=None) + timedelta(days=1)
    found: list[datetime] = []
    for local in _walk(expander, low, high):
        instant = wall_instant(local, zone)
        if after < instant <= until:
            found.append(instant)
    return found


def _walk(expander: rrule, low: datetime, high: datetime) -> Iterator[datetime]:
    for n, local in enumerate(expander.xafter(low, inc=True)):
        if local > high or n >= MAX_EXPANDED:
            return
        yield local


def next_after(rule: str, start: datetime, zone: ZoneInfo, after: datetime) -> datetime | None:
    """The first occurrence strictly after the instant `after`, or None when the series has ended."""
    expander = _expander(rule, start.replace(tzinfo=None))
    low = after.astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
    for n, local in enumerate(expander.xafter(low, inc=True)):
        instant = wall_instant(local, zone)
        if instant > after:
            return instant
        if n >= MAX_EXPANDED:
            return None
    return None


def next_day(rule: str, start: date, after: date) -> date | None:
    """For a series of days (a task's due days): the first day strictly after `after`."""
    expander = _expander(rule, datetime.combine(start, time.min))
    found = expander.after(datetime.combine(after, time.min), inc=False)
    return found.date() if found is not None else None


def first_day(rule: str, start: date, on_or_after: date) -> date | None:
    """The first day of a series of days on or after `on_or_after`."""
    expander = _expander(rule, datetime.combine(start, time.min))
    found = expander.after(datetime.combine(on_or_after, time.min), inc=True)
    return found.date() if found is not None else None


# ---- in words --------------------------------------------------------------------------------------------------
def describe(rule: str, render: Renderer) -> str:
    """"every Monday", "every 2 weeks on Tuesday", "every day", "monthly on day 1", "until Dec 31", "10 times"."""
    parts = dict(p.split("=", 1) for p in normalize(rule).split(";"))
    interval = int(parts.get("INTERVAL", "1"))
    freq = parts["FREQ"]
    days = _day_names(parts.get("BYDAY", ""), render)
    if freq == "DAILY":
        said = tr("every day") if interval == 1 else tr("every {n} days", n=interval)
    elif freq == "WEEKLY" and days:
        said = tr("every {days}", days=days) if interval == 1 else \
            tr("every {n} weeks on {days}", n=interval, days=days)
    elif freq == "WEEKLY":
        said = tr("every week") if interval == 1 else tr("every {n} weeks", n=interval)
    elif freq == "MONTHLY" and "BYMONTHDAY" in parts:
        said = tr("monthly on day {day}", day=parts["BYMONTHDAY"]) if interval == 1 else \
            tr("every {n} months on day {day}", n=interval, day=parts["BYMONTHDAY"])
    elif freq == "MONTHLY":
        said = tr("every month") if interval == 1 else tr("every {n} months", n=interval)
    else:
        said = tr("every year") if interval == 1 else tr("every {n} years", n=interval)
    words = render(said)
    if "COUNT" in parts:
        count = int(parts["COUNT"])
        words += ", " + render(ntr("{count} time", "{count} times", count))
    elif "UNTIL" in parts:
        words += ", " + render(tr("until {date}", date=datetime.strptime(parts["UNTIL"], "%Y%m%dT%H%M%S").date()))
    return words


def _day_names(byday: str, render: Renderer) -> str:
    names = get_day_names("wide", locale=render.locale)
    found = [_BYDAY_RE.fullmatch(d) for d in byday.split(",") if d]
    if [m.group(2) for m in found if m] == list(DAY_CODES[:5]):
        return render(tr("weekday"))
    return ", ".join(str(names[DAY_CODES.index(m.group(2))]) for m in found if m)
