"""ToolSpecs over the reminders: create one (the model may, without asking: it is the person's own reminder), list
them, delete one. A `reminder` argument is its number in the list, its id, or part of its text."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from brain.i18n import Renderer, Text, moment, ntr, tr
from brain.pulse.activity import in_quiet_hours
from brain.recurrence import describe
from brain.reminders import service
from brain.reminders.models import Reminder
from brain.reminders.service import MAX_LIST, MAX_TEXT
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


def reminder_data(reminder: Reminder, position: int | None = None) -> dict[str, Any]:
    # The wall time with its offset in the zone it was meant in: what the person said, still unambiguous.
    at = reminder.due_at or reminder.occurrence_at
    return {"id": str(reminder.id), "position": position, "text": reminder.text,
            "at": at.astimezone(ZoneInfo(reminder.timezone)).isoformat(), "status": reminder.status,
            "task_id": str(reminder.task_id) if reminder.task_id else None, "repeat": reminder.rrule}


async def _create(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    reminder = await service.create_reminder(ctx.uow, ctx.user, ctx.actor, args["text"], args["at"],
                                             rrule=args.get("repeat"))
    return _said(ctx, reminder, moved=False)


def _said(ctx: ToolContext, reminder: Reminder, *, moved: bool) -> ToolResult:
    """The reminder just set or moved: when it comes (of a repeating one, how it repeats and its next time)."""
    at, text = moment(reminder.occurrence_at, ctx.uow.now, ctx.user.timezone), reminder.text
    if reminder.rrule is not None:
        repeats = describe(reminder.rrule, Renderer(ctx.user.locale, ctx.user.timezone))
        said = (tr("Moved: {text}, {repeats}, next: {time}", text=text, repeats=repeats, time=at) if moved
                else tr("Reminder set {repeats}, starting {time}: {text}", text=text, repeats=repeats, time=at))
    else:
        said = (tr("Moved the reminder to {time}: {text}", text=text, time=at) if moved
                else tr("Reminder set for {time}: {text}", text=text, time=at))
    return ToolResult.success(_held_note(ctx, reminder, said), **reminder_data(reminder))


def _held_note(ctx: ToolContext, reminder: Reminder, said: Text) -> Text:
    """What is said, and, for a time inside the person's quiet hours, that it comes when they end (reminders wait
    for them, brain.reminders.sending): a wake-up at 6:00 must not come at 7:00 unannounced."""
    local = reminder.occurrence_at.astimezone(ZoneInfo(ctx.user.timezone))
    start, end = ctx.user.quiet_start, ctx.user.quiet_end
    if not in_quiet_hours(local.time(), start, end):
        return said
    return tr("{said}. That is in your quiet hours ({start} to {end}), so it comes at {end}; \"no reminders between "
              "23 and 6\" sets other quiet hours.", said=said, start=start, end=end)


async def _list(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    rows = await service.waiting_reminders(ctx.uow, ctx.user, limit=args.get("limit", 20))
    message = (ntr("You have {count} reminder coming up.", "You have {count} reminders coming up.", len(rows))
               if rows else tr("You have no reminders coming up."))
    return ToolResult.success(message, reminders=[reminder_data(r.reminder, r.position) for r in rows])


async def _move(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    at = args.get("at")
    if at is None and args.get("time") is None:
        return ToolResult.failure(tr("When should it be? Give a day, a time or both."), "missing_time")
    found = await service.find_reminder(ctx.uow, ctx.user, args["reminder"])
    if at is None:  # "move the stretch reminder to 8pm" keeps its day
        zone = ZoneInfo(found.timezone)
        at = service.wall_time((found.due_at or found.occurrence_at).astimezone(zone).date(), args["time"], zone)
    return _said(ctx, await service.move_reminder(ctx.uow, ctx.user, ctx.actor, found.id, at), moved=True)


async def _delete(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    found = await service.find_reminder(ctx.uow, ctx.user, args["reminder"])
    reminder = await service.cancel_reminder(ctx.uow, ctx.user, ctx.actor, found.id)
    return ToolResult.success(tr("Deleted the reminder {text}.", text=reminder.text), id=str(reminder.id))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("create_reminder", "reminders",
             "Remind the person of something at a time (a message with Done and Snooze buttons arrives then).",
             (ToolParam("text", "string", "What to remind of, in the person's words.", required=True,
                        max_length=MAX_TEXT),
              ToolParam("at", "datetime", "When, local time (YYYY-MM-DDTHH:MM); of a repeating one, the first time.",
                        required=True),
              ToolParam("repeat", "string", "For a repeating reminder: an RFC 5545 RRULE from `at` on, e.g. FREQ=DAILY "
                        "or FREQ=WEEKLY;BYDAY=MO,TH;COUNT=10 (UNTIL as local YYYYMMDD).", max_length=200)),
             "write", _create),
    ToolSpec("list_reminders", "reminders", "The person's reminders still to come; numbers refer to them.",
             (ToolParam("limit", "integer", "At most this many (default 20).", minimum=1, maximum=MAX_LIST),),
             "read", _list),
    ToolSpec("move_reminder", "reminders",
             "Set one of the person's reminders to another time; a repeating one keeps its rule from then on, at "
             "that time of day. A task's reminder moves with its task (move the task instead).",
             (ToolParam("reminder", "string", "Which reminder: its number in the list, its id, or part of its text.",
                        required=True, max_length=MAX_TEXT),
              ToolParam("at", "datetime", "The new time, local (YYYY-MM-DDTHH:MM); of a repeating one, its next time."),
              ToolParam("time", "time", "Instead of `at`: a new time of day (HH:MM) on the reminder's own day.")),
             "write", _move),
    ToolSpec("delete_reminder", "reminders", "Delete one of the person's reminders.",
             (ToolParam("reminder", "string", "Which reminder: its number in the list, its id, or part of its text.",
                        required=True, max_length=MAX_TEXT),),
             "write", _delete),
)
