"""/event: add a calendar entry from a phrase ("/event Zahnarzt morgen 14:00 45m", "/event Urlaub 24.12.-27.12."), a
repeating one ("/event every Monday 9:00 team meeting", "/termin jeden zweiten Dienstag 18:00 Yoga"), or, without
one, show what is coming up; "/event delete 2" asks, for a repeating one, whether this one or the series goes."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.commands import Command
from bot.parsing.dates import (
    MIDDAY,
    NIGHT,
    FoundTime,
    cut,
    find_bare_hour,
    find_clockish,
    find_date,
    find_dateish,
    find_duration_minutes,
    find_time,
    in_part_of_day,
)
from bot.parsing.recurrence import find_repetition
from bot.turn import Turn
from brain.errors import DomainError
from brain.i18n import N_, Text, ntr, tr
from brain.modules.calendar.service import find_event
from brain.tools.coercion import FIRST_YEAR, LAST_YEAR

UPCOMING_SHOWN = 5
UPCOMING_FETCH = 50  # the upcoming list's maximum, read to count what is not shown

# Between the first and the last day of an all-day event: "24.12.-27.12.", "24.12. bis 27.12.", "Dec 24 to Dec 27".
_RANGE_JOIN_RE = re.compile(r"\s*(?:[-–]|\b(?:bis|to|until|till)\b)\s*", re.I)
_RANGE_LEAD_RE = re.compile(r"\b(?:vom|von|from)\s+$", re.I)


# "/event delete 2", "/termin löschen Zahnarzt": the number is the one the list shows.
DELETE_WORDS = frozenset({"delete", "remove", "cancel", "löschen", "loeschen", "entfernen", "absagen"})


async def event(turn: Turn, args: str) -> None:
    if not args:
        await _upcoming(turn)
        return
    verb, _, reference = args.partition(" ")
    if verb.casefold() in DELETE_WORDS:
        if not reference.strip():
            turn.say(tr("Which event? /event delete 2 removes the second one in the list, /event alone shows it."))
            return
        await _delete(turn, reference.strip())
        return
    # "every Monday 9:00 team meeting", "jeden zweiten Dienstag Yoga": the rest is read as the first appointment.
    repetition = find_repetition(args, turn.today)
    text = repetition.cut_from(args) if repetition is not None else args
    # The day first: "3.12. 14:00" is the 3rd of December at two, and read as a time first "3.12" would be 3:12.
    day = find_date(text, turn.today)
    last_day: date | None = None
    # "tomorrow evening at 7", "morgen Abend halb acht", "tonight 9": the part of the day said with the day
    part = day.part if day is not None else None
    at_time: FoundTime | None = None
    if day is not None:
        cut_from, cut_to = day.start, day.end
        joined = _RANGE_JOIN_RE.match(text, cut_to)
        if joined is not None:
            last = find_date(text[joined.end():], turn.today)
            if last is not None and last.start == 0:
                last_day, cut_to = last.value, joined.end() + last.end
                lead = _RANGE_LEAD_RE.search(text, 0, cut_from)
                cut_from = lead.start() if lead is not None else cut_from
        bare = find_bare_hour(text, cut_to) if last_day is None else None
        if bare is not None and find_time(cut(text, cut_from, cut_to)) is None:
            # "friday 3": 3 at night or in the afternoon, or no time at all ("Room 3")? Asked, as a wrong guess
            # would go unnoticed; "friday 15" and "tomorrow night 9" say it.
            if part is None and bare.open_meridiem:
                turn.say(tr("I couldn't read the time \"{text}\". Write it like 14:00 or 2:30 pm.",
                            text=text[bare.start:bare.end]))
                return
            at_time, cut_to = bare, bare.end
        text = cut(text, cut_from, cut_to)
    if at_time is None:
        at_time = find_time(text)
        if at_time is not None:
            text = cut(text, at_time.start, at_time.end)
    if at_time is None and part == MIDDAY:
        # "morgen Mittag", "tomorrow at midday": noon, as "mittags" and "noon" are; the other parts of the day
        # name no hour ("morgen Abend" stays all day).
        at_time = FoundTime(time(12, 0), 0, 0)
    until = None
    if at_time is not None:
        until = find_time(text)  # a second time is the end: "9:00-9:15", "14:00 bis 15:30"
        if until is not None:
            text = cut(text, until.start, until.end)
            text = re.sub(r"(?:^|\s)(?:bis|to|until|till)$", "", text, flags=re.I).strip(" ,;-–")
    duration = find_duration_minutes(text)
    if duration is not None:
        text = cut(text, duration[1], duration[2])
    # "2026-02-30", "31.02.", "31 November", "3/4": asked about, not made an event of today
    bad_day = find_dateish(text, turn.today, slashed=True)
    if bad_day is not None:
        turn.say(tr("I couldn't read the date \"{text}\". Write it like 24.12., 24.12.2026 or 2026-12-24.",
                    text=bad_day[:20]))
        return
    unreadable = find_clockish(text)
    if unreadable is not None:  # "25:00", "14:60": asked about, not kept in the title of an all-day event
        turn.say(tr("I couldn't read the time \"{text}\". Write it like 14:00 or 2:30 pm.", text=unreadable[:20]))
        return
    if not text:
        turn.say(tr("What is the event called? e.g. /event Dentist tomorrow 14:00"))
        return
    if day is None and at_time is None and repetition is None:
        turn.say(tr("When is it? Add a day or a time, e.g. /event {title} tomorrow 14:00", title=text[:80]))
        return
    on = day.value if day is not None else turn.today
    if not all(FIRST_YEAR <= d.year <= LAST_YEAR for d in (on, last_day or on)):
        # "31.12.9999 23:30" plus an hour is past the end of time
        turn.say(tr("I can only keep dates from {first} to {last}.", first=str(FIRST_YEAR), last=str(LAST_YEAR)))
        return
    call: dict[str, Any] = {"title": text}
    zone = ZoneInfo(turn.user.timezone)
    rolled: Text | None = None  # said when a time without a day was taken as tomorrow's
    if at_time is None:
        # The tool takes the end of an all-day event as its last day; one day needs none.
        call.update(start_time=datetime.combine(on, time.min, tzinfo=zone).isoformat(), is_all_day=True)
        if last_day is not None:
            call["end_time"] = datetime.combine(last_day, time.min, tzinfo=zone).isoformat()
    else:
        if last_day is not None:
            turn.say(tr("From {first} to {last} is an all-day event: leave out the time, or add each day on its own.",
                        first=on, last=last_day))
            return
        minutes = duration[0] if duration is not None else 60
        span = _span(on, at_time, until, minutes, part, zone)
        if day is None and isinstance(span, tuple) and span[1] <= turn.now and repetition is None:
            # "/event Dentist 9:00" at 15:00: no day said, so the next 9:00, as "Tuesday" said on a Tuesday is next
            # week's. A day said is kept even when past ("today 9:00" logs it); one going on now stays today.
            on += timedelta(days=1)
            span = _span(on, at_time, until, minutes, part, zone)
            rolled = tr("{time} has already passed today, so it is tomorrow. For today: /event {title} today {time}",
                        time=_clock(at_time, part), title=text[:80])
        if not isinstance(span, tuple):
            turn.say(span)
            return
        start, end = span
        # Lengths are counted in real time, so an hour on the night the clocks go back is an hour.
        call.update(start_time=start.astimezone(zone).isoformat(), end_time=end.astimezone(zone).isoformat())
    if repetition is not None:
        call["repeat"] = repetition.rule
    result = await turn.tool("create_event", call)
    if rolled is not None and result.ok and result.message is not None:
        turn.say(result.message, rolled)
        return
    turn.say_result(result)


async def _delete(turn: Turn, reference: str) -> None:
    """Deletes the event; of a repeating one, asks first: this occurrence, or the whole series?"""
    try:
        async with turn.brain.transactions.begin() as uow:
            found = await find_event(uow, turn.user, reference)
    except DomainError as refused:
        turn.say(refused.text)
        return
    event = found.event
    if event.series_id is None:
        turn.say_result(await turn.tool("delete_event", {"event": str(event.id)}))
        return
    turn.say(tr("{title} repeats. Delete only the one on {date}, or the whole series?", title=event.title,
                date=turn.render.date_of(event.start_time)),
             buttons=[[turn.tool_button(tr("Only this one"), "delete_event", event=str(event.id), scope="this"),
                       turn.tool_button(tr("The whole series"), "delete_event", event=str(event.id),
                                        scope="series")]])


def _span(on: date, at_time: FoundTime, until: FoundTime | None, minutes: int, part: str | None,
          zone: ZoneInfo) -> tuple[datetime, datetime] | Text:
    """The start and end of a timed event on `on`, or what to say when the clocks skip one of them."""
    starts = _clock(at_time, part)
    if part == NIGHT and at_time.open_meridiem and starts.hour < 6:
        on += timedelta(days=1)  # "Samstag Nacht um 1", "friday night at 1": after midnight, the day after
    start = _instant(on, starts, zone)
    if start is None:
        return _skipped(starts, on)
    if until is None:
        return start, start + timedelta(minutes=minutes)
    ends = _clock(until, part)
    if until.open_meridiem and ends < starts and ends.hour < 12 and ends.replace(hour=ends.hour + 12) > starts:
        ends = ends.replace(hour=ends.hour + 12)  # "14:00 bis halb vier" ends at 15:30
    end_day = on if ends > starts else on + timedelta(days=1)  # "22:00-1:00" ends the next day
    end = _instant(end_day, ends, zone)
    if end is None:
        return _skipped(ends, end_day)
    return start, end


def _clock(found: FoundTime, part: str | None) -> time:
    """The time an hour that names no half of the day ("at 7", "halb acht") is in the part of the day said with the
    day ("tomorrow evening", "heute Abend")."""
    value = found.value
    if part is not None and found.open_meridiem:
        return value.replace(hour=in_part_of_day(value.hour, part))
    return value


def _instant(on: date, at: time, zone: ZoneInfo) -> datetime | None:
    """The UTC instant of a wall-clock time: the first of the two when the clocks go back (fold 0), None when the
    clocks skip it."""
    local = datetime.combine(on, at, tzinfo=zone)
    instant = local.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) != local.replace(tzinfo=None):
        return None
    return instant


def _skipped(at: time, on: date) -> Text:
    return tr("{time} does not exist on {date} in your time zone: the clocks go forward then. Pick another time.",
              time=at, date=on)


async def _upcoming(turn: Turn) -> None:
    """The next events (a few, and how many more), then how to add one."""
    result = await turn.tool("get_upcoming_events", {"limit": UPCOMING_FETCH})
    if not result.ok:
        turn.say_result(result)
        return
    items: list[dict[str, Any]] = result.data.get("events", [])
    lines = []
    if items:
        lines.append(turn.t(tr("Coming up:")))
        lines.extend(f"{item.get('position') or '•'}. {_when(turn, item)} {item['title']}"
                     + (" 🔁" if item.get("series_id") else "") for item in items[:UPCOMING_SHOWN])
        hidden = len(items) - UPCOMING_SHOWN
        if hidden > 0:
            more = (ntr("… and {count} more.", "… and {count} more.", hidden, count=hidden)
                    if len(items) < UPCOMING_FETCH else tr("… and more."))
            lines.append(turn.t(more))
    else:
        lines.append(turn.t(tr("Nothing coming up in your calendar.")))
    lines.append(turn.t(tr("To add one, write “appointment: dentist tomorrow 2pm” or "
                           "/event Dentist tomorrow 14:00 45m.")))
    if len(items) > 1:  # the example names the second one listed (numbers count from what is shown)
        lines.append(turn.t(tr("/event delete 2 removes the second one.")))
    turn.say("\n".join(lines))


def _when(turn: Turn, item: dict[str, Any]) -> str:
    start = datetime.fromisoformat(item["start"])
    if not item.get("is_all_day"):
        return turn.render.format_value(start)
    # Stored from local midnight to the midnight after the last day.
    first = start.date()
    last = max(first, datetime.fromisoformat(item["end"]).date() - timedelta(days=1))
    days = turn.render.date_of(first) + (f" – {turn.render.date_of(last)}" if last > first else "")
    all_day = turn.t(tr("all day"))
    return f"{days}, {all_day}"


COMMANDS = (
    Command("event", N_("/event Dentist tomorrow 14:00"), N_("Add a calendar entry"), event,
            aliases=("termin", "termine", "kalender", "calendar", "events")),
)
