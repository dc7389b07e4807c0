"""ToolSpecs over the calendar service. An `event` argument is a short reference (number in
today's/upcoming list, id or title fragment) resolved by `service.find_event`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from brain.i18n import Renderer, Text, moment, ntr, tr
from brain.modules.calendar import series as repeating
from brain.modules.calendar import service
from brain.modules.calendar.models import CalendarEvent
from brain.modules.calendar.service import MAX_DESCRIPTION, MAX_LIST, MAX_LOCATION, MAX_TITLE, ListedEvent
from brain.people.local_time import day_bounds, local_date
from brain.people.models import User
from brain.recurrence import describe
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


def event_data(user: User, event: CalendarEvent, position: int | None = None) -> dict[str, Any]:
    # Local wall-clock times with their offset: what the person means by "at 10", still unambiguous.
    zone = ZoneInfo(user.timezone)
    return {
        "id": str(event.id), "position": position or None, "title": event.title,
        "start": event.start_time.astimezone(zone).isoformat(), "end": event.end_time.astimezone(zone).isoformat(),
        "is_all_day": event.is_all_day, "location": event.location, "calendar_id": event.calendar_id,
        "series_id": str(event.series_id) if event.series_id else None,
    }


def _last_day_end(ctx: ToolContext, end: datetime | None, is_all_day: bool) -> datetime | None:
    """People (and models) name the last day of an all-day event ("24 to 26 December"); the service
    keeps the exclusive end, the midnight after that day."""
    if end is None or not is_all_day:
        return end
    return day_bounds(ctx.user, local_date(ctx.user, end))[1]


async def _create(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    end = _last_day_end(ctx, args.get("end_time"), args.get("is_all_day", False))
    if args.get("repeat"):
        return await _create_series(ctx, args, end)
    event = await service.create_event(
        ctx.uow, ctx.user, ctx.actor, args["title"], args["start_time"], end,
        is_all_day=args.get("is_all_day", False), location=args.get("location"),
        description=args.get("description"), calendar_id=args.get("calendar_id", "default"),
    )
    if event.is_all_day:
        first, last = local_date(ctx.user, event.start_time), local_date(ctx.user, event.end_time) - timedelta(days=1)
        message = (tr("Added {title} from {first} to {last} (all day).", title=event.title, first=first, last=last)
                   if last > first else tr("Added {title} on {date} (all day).", title=event.title, date=first))
    elif event.end_time <= ctx.uow.now:
        # Kept (people log what they did), but said: a time meant for tomorrow would otherwise go unnoticed.
        message = tr("Added {title} at {start}. That time has already passed: it is kept as a past event.",
                     title=event.title, start=event.start_time)
    elif event.end_time - event.start_time != service.DEFAULT_DURATION:  # an end said ("10:00-11:30") is said back
        same_day = local_date(ctx.user, event.start_time) == local_date(ctx.user, event.end_time)
        end_said = event.end_time.astimezone(ZoneInfo(ctx.user.timezone)).time() if same_day else event.end_time
        when = moment(event.start_time, ctx.uow.now, ctx.user.timezone)
        message = (tr("Added {title} {when} until {end}.", title=event.title, when=when, end=end_said)
                   if isinstance(when, Text) else
                   tr("Added {title} at {start} until {end}.", title=event.title, start=event.start_time, end=end_said))
    else:
        when = moment(event.start_time, ctx.uow.now, ctx.user.timezone)  # "Added Dentist tomorrow at 2:00 PM."
        message = (tr("Added {title} {when}.", title=event.title, when=when) if isinstance(when, Text)
                   else tr("Added {title} at {start}.", title=event.title, start=event.start_time))
    return ToolResult.success(message, **event_data(ctx.user, event))


async def _create_series(ctx: ToolContext, args: dict[str, Any], end: datetime | None) -> ToolResult:
    series, made = await repeating.create_series(
        ctx.uow, ctx.user, ctx.actor, args["title"], args["start_time"], end, args["repeat"],
        is_all_day=args.get("is_all_day", False), location=args.get("location"), description=args.get("description"),
        calendar_id=args.get("calendar_id", "default"))
    repeats = describe(series.rrule, Renderer(ctx.user.locale, ctx.user.timezone))
    first = made[0]
    message = (tr("Added {title}, {repeats}, from {date} (all day).", title=series.title, repeats=repeats,
                  date=local_date(ctx.user, first.start_time)) if series.is_all_day
               else tr("Added {title}, {repeats}, from {start}.", title=series.title, repeats=repeats,
                       start=first.start_time))
    return ToolResult.success(message, repeat=series.rrule, occurrences=len(made), **event_data(ctx.user, first))


async def _update(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_event(ctx.uow, ctx.user, args["event"])
    changes = {k: v for k, v in args.items() if k != "event"}
    if "end_time" in changes:
        changes["end_time"] = _last_day_end(ctx, changes["end_time"], args.get("is_all_day", ref.event.is_all_day))
    event, changed = await service.update_event(ctx.uow, ctx.user, ctx.actor, ref.event.id, **changes)
    message = (tr("Updated {title}.", title=event.title) if changed
               else tr("{title} already looks like that; nothing changed.", title=event.title))
    return ToolResult.success(message, changed=changed, **event_data(ctx.user, event))


async def _move(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    start = args.get("start_time")
    if start is None and args.get("date") is None and args.get("time") is None:
        return ToolResult.failure(tr("When should it be? Give a day, a time or both."), "missing_time")
    ref = await service.find_event(ctx.uow, ctx.user, args["event"])
    if start is None:  # "move the dentist to Friday" keeps its time, "... to 11" its day
        zone = ZoneInfo(ctx.user.timezone)
        current = ref.event.start_time.astimezone(zone)
        start = datetime.combine(args.get("date") or current.date(), args.get("time") or current.time().replace(
            tzinfo=None)).replace(tzinfo=zone)
    event = await service.move_event(ctx.uow, ctx.user, ctx.actor, ref.event.id, start)
    return ToolResult.success(tr("Moved {title} to {start}.", title=event.title,
                                 start=moment(event.start_time, ctx.uow.now, ctx.user.timezone)),
                              **event_data(ctx.user, event))


async def _delete(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_event(ctx.uow, ctx.user, args["event"])
    if args.get("scope") == "series":
        if ref.event.series_id is None:
            return ToolResult.failure(tr("{title} does not repeat; /event delete removes it.", title=ref.event.title),
                                      "not_a_series")
        series = await repeating.delete_series(ctx.uow, ctx.user, ctx.actor, ref.event.series_id)
        return ToolResult.success(tr("Deleted the series {title}: it no longer repeats.", title=series.title),
                                  id=str(ref.event.id), series_id=str(series.id))
    event = await service.delete_event(ctx.uow, ctx.user, ctx.actor, ref.event.id)
    if event.series_id is not None:
        return ToolResult.success(tr("Deleted {title} on {date}; the series goes on.", title=event.title,
                                     date=local_date(ctx.user, event.start_time)), id=str(event.id))
    return ToolResult.success(tr("Deleted {title}.", title=event.title), id=str(event.id))


def _listing(user: User, rows: list[ListedEvent]) -> list[dict[str, Any]]:
    return [event_data(user, r.event, r.position) for r in rows]


async def _today(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    rows = await service.todays_events(ctx.uow, ctx.user)
    message = (ntr("You have {count} event today.", "You have {count} events today.", len(rows)) if rows
               else tr("Nothing in your calendar today."))
    return ToolResult.success(message, events=_listing(ctx.user, rows))


async def _upcoming(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    rows = await service.upcoming_events(ctx.uow, ctx.user, limit=args.get("limit", 10))
    message = (ntr("{count} upcoming event.", "{count} upcoming events.", len(rows)) if rows
               else tr("Nothing coming up in your calendar."))
    return ToolResult.success(message, events=_listing(ctx.user, rows))


_EVENT = ToolParam("event", "string", "Which event: its number in today's or the upcoming list, its id, or part of "
                   "its title.", required=True, max_length=MAX_TITLE)
_LOCATION = ToolParam("location", "string", "Where it takes place.", max_length=MAX_LOCATION)
_DESCRIPTION = ToolParam("description", "string", "Notes for the event.", max_length=MAX_DESCRIPTION)
_ALL_DAY = ToolParam("is_all_day", "boolean", "True for an event that takes whole days.")

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("create_event", "calendar", "Add an appointment to the person's calendar (one hour if no end).",
             (ToolParam("title", "string", "What the appointment is.", required=True, max_length=MAX_TITLE),
              ToolParam("start_time", "datetime", "Start, local time (YYYY-MM-DDTHH:MM).", required=True),
              ToolParam("end_time", "datetime", "End, local time, at most 14 days after the start; for an all-day "
                        "event its last day."),
              _ALL_DAY, _LOCATION, _DESCRIPTION,
              ToolParam("calendar_id", "string", "Calendar name (default 'default').", max_length=64),
              ToolParam("repeat", "string", "For a repeating appointment: an RFC 5545 RRULE from the start on, e.g. "
                        "FREQ=WEEKLY;BYDAY=MO or FREQ=MONTHLY;BYMONTHDAY=1;COUNT=12 (UNTIL as local YYYYMMDD).",
                        max_length=200)),
             "write", _create),
    ToolSpec("update_event", "calendar", "Change an event's title, times, location or notes.",
             (_EVENT, ToolParam("title", "string", "New title.", max_length=MAX_TITLE),
              ToolParam("start_time", "datetime", "New start, local time; the length stays unless end_time is given."),
              ToolParam("end_time", "datetime", "New end, local time; for an all-day event its last day."),
              _ALL_DAY,
              ToolParam("location", "string", "New location; empty text removes it.", max_length=MAX_LOCATION),
              ToolParam("description", "string", "New notes; empty text removes them.", max_length=MAX_DESCRIPTION)),
             "write", _update),
    ToolSpec("move_event", "calendar", "Move an event to a new start, keeping its length: a new start_time, or a new "
             "date and/or time of day (the other part stays).",
             (_EVENT, ToolParam("start_time", "datetime", "New start, local time (YYYY-MM-DDTHH:MM)."),
              ToolParam("date", "date", "New day (YYYY-MM-DD), at the same time of day."),
              ToolParam("time", "time", "New time of day (HH:MM), on the same day.")),
             "write", _move),
    ToolSpec("delete_event", "calendar", "Delete an event from the calendar; of a repeating one, this occurrence or "
             "the whole series.",
             (_EVENT, ToolParam("scope", "string", "For a repeating event: 'this' occurrence (default) or the whole "
                                "'series' from now on.", enum=("this", "series"))),
             "destructive", _delete),
    ToolSpec("get_todays_events", "calendar", "The person's events today; numbers in the result refer to them.",
             (), "read", _today),
    ToolSpec("get_upcoming_events", "calendar", "The person's next events from now on, soonest first.",
             (ToolParam("limit", "integer", "At most this many events (default 10).", minimum=1, maximum=MAX_LIST),),
             "read", _upcoming),
)
