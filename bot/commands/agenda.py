"""What is on a coming day or days: appointments, reminders and tasks due, in time order. The answer to "Was steht
morgen an?", "What's on Friday?" or "Was steht diese Woche an?" without a language model (bot.parsing.questions)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.turn import Turn
from brain.i18n import tr
from brain.modules.calendar.service import MAX_LIST as EVENTS_MAX
from brain.modules.todo.service import MAX_LIST as TASKS_MAX
from brain.recurrence import occurrences, wall_instant
from brain.reminders.service import MAX_LIST as REMINDERS_MAX


def _on(day: date, item: dict[str, Any]) -> bool:
    """Whether an event (its local start and end) takes place on `day`; an all-day one ends at the midnight after."""
    start, end = datetime.fromisoformat(item["start"]), datetime.fromisoformat(item["end"])
    if item.get("is_all_day"):
        return start.date() <= day < max(end.date(), start.date() + timedelta(days=1))
    return start.date() == day or (start.date() < day and end > datetime.combine(day, time.min, start.tzinfo))


def _reminded_on(day: date, item: dict[str, Any], zone: ZoneInfo) -> list[datetime]:
    """When a reminder comes on `day` (local times): its next time, and of a repeating one every time on that day
    from its next one on."""
    at = datetime.fromisoformat(item["at"])
    if not item.get("repeat"):
        local = at.astimezone(zone)
        return [local] if local.date() == day else []
    midnight = wall_instant(datetime.combine(day, time.min), zone)
    following = wall_instant(datetime.combine(day + timedelta(days=1), time.min), zone)
    tick = timedelta(microseconds=1)
    return [instant.astimezone(zone) for instant in occurrences(item["repeat"], at, zone, midnight - tick,
                                                                 following - tick)]


def _day_lines(turn: Turn, day: date, events: list[dict[str, Any]], reminders: list[dict[str, Any]],
               tasks: list[dict[str, Any]], zone: ZoneInfo) -> list[str]:
    """One day's lines: all-day events, then appointments, reminders (⏰) and tasks due with a time, in time order,
    then the tasks due that day (✓)."""
    timed: list[tuple[time, str]] = []  # (when, line): sorted by the time of day
    all_day: list[str] = []
    for item in events:
        if not _on(day, item):
            continue
        start = datetime.fromisoformat(item["start"]).astimezone(zone)
        if item.get("is_all_day"):
            all_day.append(f"• {turn.t(tr('all day'))}: {item['title']}")
        elif start.date() < day:
            until = turn.render.time_of(datetime.fromisoformat(item["end"]))
            timed.append((time.min, f"• {turn.t(tr('until {end}', end=until))} {item['title']}"))
        else:
            timed.append((start.time(), f"• {turn.render.time_of(start)} {item['title']}"))
    for item in reminders:
        for at in _reminded_on(day, item, zone):
            timed.append((at.time(), f"• {turn.render.time_of(at)} ⏰ {item['text']}"))
    due: list[str] = []
    for item in tasks:
        if item.get("due_date") == day.isoformat():
            if item.get("due_time"):
                at_time = time.fromisoformat(item["due_time"])
                timed.append((at_time, f"• {turn.render.format_value(at_time)} ✓ {item['title']}"))
            else:
                due.append(f"• ✓ {item['title']}")
    return [*all_day, *(line for _, line in sorted(timed, key=lambda pair: pair[0])), *due]


def _heading(turn: Turn, day: date) -> str:
    long_date = turn.render.long_date_of(day)
    if day == turn.today:
        return turn.t(tr("Today, {date}", date=long_date))
    if day == turn.today + timedelta(days=1):
        return turn.t(tr("Tomorrow, {date}", date=long_date))
    return long_date


async def day_agenda(turn: Turn, day: date, last: date | None = None) -> None:
    """What is on a coming day, or on each day from `day` to `last` that has something ("Was steht diese Woche
    an?"): its appointments, reminders and open tasks due, each line with its time; or that nothing is on."""
    last = max(day, last or day)
    events = await turn.tool("get_upcoming_events", {"limit": EVENTS_MAX})
    reminders = await turn.tool("list_reminders", {"limit": REMINDERS_MAX})
    tasks = await turn.tool("list_tasks", {"filter": "open", "limit": TASKS_MAX})
    for result in (events, reminders, tasks):
        if not result.ok:
            turn.say_result(result)
            return
    zone = ZoneInfo(turn.user.timezone)
    event_items: list[dict[str, Any]] = events.data.get("events", [])
    lines: list[str] = []
    for offset in range((last - day).days + 1):
        on = day + timedelta(days=offset)
        said = _day_lines(turn, on, event_items, reminders.data.get("reminders", []), tasks.data.get("tasks", []),
                          zone)
        if said:
            lines += ["", _heading(turn, on) + ":", *said] if lines else [_heading(turn, on) + ":", *said]
    if not lines:
        if last == day:
            turn.say(tr("Nothing is on for {date} yet: no appointments, reminders or tasks due.",
                        date=turn.render.long_date_of(day)))
        else:
            turn.say(tr("Nothing is on from {first} to {last} yet: no appointments, reminders or tasks due.",
                        first=turn.render.long_date_of(day), last=turn.render.long_date_of(last)))
        return
    if len(event_items) >= EVENTS_MAX and datetime.fromisoformat(event_items[-1]["start"]).date() <= last:
        lines.append(turn.t(tr("… and maybe more: /event lists your calendar.")))
    turn.say("\n".join(lines))


async def next_event(turn: Turn) -> None:
    """The next appointment and when it is ("Wann ist mein nächster Termin?"), or that none is coming."""
    result = await turn.tool("get_upcoming_events", {"limit": 1})
    if not result.ok:
        turn.say_result(result)
        return
    items: list[dict[str, Any]] = result.data.get("events", [])
    if not items:
        turn.say(tr("Nothing coming up in your calendar."))
        return
    item = items[0]
    start = datetime.fromisoformat(item["start"]).astimezone(ZoneInfo(turn.user.timezone))
    day = start.date()
    when = (turn.t(tr("today")) if day == turn.today else turn.t(tr("tomorrow")) if day == turn.today + timedelta(
        days=1) else turn.render.long_date_of(day))
    if item.get("is_all_day"):
        turn.say(tr("Your next appointment: {title}, {when}, all day.", title=item["title"], when=when))
    else:
        turn.say(tr("Your next appointment: {title}, {when} at {time}.", title=item["title"], when=when,
                    time=turn.render.time_of(start)))
