"""/event: add a calendar entry from a phrase ("/event Zahnarzt morgen 14:00 45m")."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.commands import Command
from bot.parsing.dates import cut, find_clockish, find_date, find_dateish, find_duration_minutes, find_time
from bot.turn import Turn
from brain.i18n import N_, tr
from brain.tools.coercion import FIRST_YEAR, LAST_YEAR


async def event(turn: Turn, args: str) -> None:
    if not args:
        turn.say(tr("Usage: /event <title> <day> <time> [duration], e.g. /event Dentist tomorrow 14:00 45m"))
        await _upcoming(turn)
        return
    text = args
    # The day first: "3.12. 14:00" is the 3rd of December at two, and read as a time first "3.12" would be 3:12.
    day = find_date(text, turn.today)
    if day is not None:
        text = cut(text, day.start, day.end)
    at_time = find_time(text)
    until = None
    if at_time is not None:
        text = cut(text, at_time.start, at_time.end)
        until = find_time(text)  # a second time is the end: "9:00-9:15", "14:00 bis 15:30"
        if until is not None:
            text = cut(text, until.start, until.end)
            text = re.sub(r"(?:^|\s)(?:bis|to|until|till)$", "", text, flags=re.I).strip(" ,;-–")
    duration = find_duration_minutes(text)
    if duration is not None:
        text = cut(text, duration[1], duration[2])
    bad_day = find_dateish(text, turn.today)
    if bad_day is not None:  # "2026-02-30", "31.02.": asked about, not made an event of today
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
    if day is None and at_time is None:
        turn.say(tr("When is it? Add a day or a time, e.g. /event {title} tomorrow 14:00", title=text[:80]))
        return
    zone = ZoneInfo(turn.user.timezone)
    on = day.value if day is not None else turn.today
    if not FIRST_YEAR <= on.year <= LAST_YEAR:  # "31.12.9999 23:30" plus an hour is past the end of time
        turn.say(tr("I can only keep dates from {first} to {last}.", first=str(FIRST_YEAR), last=str(LAST_YEAR)))
        return
    call: dict[str, Any] = {"title": text}
    if at_time is None:
        start = datetime.combine(on, datetime.min.time(), tzinfo=zone)
        call.update(start_time=start.isoformat(), end_time=(start + timedelta(days=1)).isoformat(), is_all_day=True)
    else:
        start = datetime.combine(on, at_time.value, tzinfo=zone)
        if until is not None:
            end = datetime.combine(on, until.value, tzinfo=zone)
            end += timedelta(days=1) if end <= start else timedelta()  # "22:00-1:00" ends the next day
        else:
            end = start + timedelta(minutes=duration[0] if duration is not None else 60)
        call.update(start_time=start.isoformat(), end_time=end.isoformat())
    result = await turn.tool("create_event", call)
    turn.say_result(result)


async def _upcoming(turn: Turn) -> None:
    result = await turn.tool("get_upcoming_events", {"limit": 5})
    items = result.data.get("events", []) if result.ok else []
    if items:
        lines = [turn.t(tr("Coming up:"))]
        for item in items:
            start = datetime.fromisoformat(item["start"])
            lines.append(f"• {turn.render.format_value(start)} {item['title']}")
        turn.say("\n".join(lines))


COMMANDS = (
    Command("event", N_("/event Dentist tomorrow 14:00"), N_("Add a calendar entry"), event, aliases=("termin",)),
)
