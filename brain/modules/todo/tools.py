"""ToolSpecs over the todo service. A `task` argument is a short reference (list position, id or
title fragment) resolved by `service.find_task`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from brain.i18n import Renderer, Text, moment, ntr, tr
from brain.modules.todo import service
from brain.modules.todo.models import Task
from brain.modules.todo.service import MAX_LIST, MAX_PRIORITY, MAX_TITLE, MIN_PRIORITY, TASK_FILTERS, ListedTask
from brain.people.local_time import local_date
from brain.recurrence import describe
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


def task_data(task: Task, position: int | None = None) -> dict[str, Any]:
    return {
        "id": str(task.id), "position": position, "title": task.title,
        "due_date": task.due_date.isoformat() if task.due_date else None,
        "due_time": task.due_time.isoformat(timespec="minutes") if task.due_time else None, "priority": task.priority,
        "done": task.completed_at is not None,
        "parent_id": str(task.parent_id) if task.parent_id else None, "repeat": task.recurrence,
    }


def _today_or_tomorrow(ctx: ToolContext, task: Task) -> Text | None:
    """A due day of today or tomorrow as a person says it ("tomorrow", "today at 3:00 PM"), or None."""
    today = local_date(ctx.user, ctx.uow.now)
    if task.due_date not in (today, today + timedelta(days=1)):
        return None
    if task.due_time is None:
        return tr("today") if task.due_date == today else tr("tomorrow")
    zone = ZoneInfo(ctx.user.timezone)
    said = moment(datetime.combine(task.due_date, task.due_time, tzinfo=zone), today, zone)
    return said if isinstance(said, Text) else None


async def _create(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    task = await service.create_task(ctx.uow, ctx.user, ctx.actor, args["title"], due_date=args.get("due_date"),
                                     due_time=args.get("due_time"), priority=args.get("priority", 0),
                                     description=args.get("description"), recurrence=args.get("repeat"))
    if task.recurrence is not None:
        message = tr("Added the task {title}, {repeats}, first due {date}.", title=task.title, date=task.due_date,
                     repeats=describe(task.recurrence, Renderer(ctx.user.locale, ctx.user.timezone)))
    elif (soon := _today_or_tomorrow(ctx, task)) is not None:
        message = tr("Added the task {title}, due {when}.", title=task.title, when=soon)  # "due tomorrow at 3:00 PM"
    elif task.due_date is not None and task.due_time is not None:
        message = tr("Added the task {title}, due {date} at {time}.", title=task.title, date=task.due_date,
                     time=task.due_time)
    elif task.due_date is not None:
        message = tr("Added the task {title}, due {date}.", title=task.title, date=task.due_date)
    else:
        message = tr("Added the task {title}.", title=task.title)
    return ToolResult.success(message, **task_data(task))


async def _complete(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_task(ctx.uow, ctx.user, args["task"], status="open")
    task = await service.complete_task(ctx.uow, ctx.user, ctx.actor, ref.task.id)
    following = await service.open_occurrence(ctx.uow, ctx.user, task)
    if following is not None and following.due_date is not None:
        return ToolResult.success(tr("Done: {title}. Next time: {date}.", title=task.title, date=following.due_date),
                                  next_id=str(following.id), **task_data(task))
    return ToolResult.success(tr("Done: {title}.", title=task.title), **task_data(task))


async def _uncomplete(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_task(ctx.uow, ctx.user, args["task"], status="completed")
    task = await service.uncomplete_task(ctx.uow, ctx.user, ctx.actor, ref.task.id)
    return ToolResult.success(tr("{title} is open again.", title=task.title), **task_data(task))


async def _update(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_task(ctx.uow, ctx.user, args["task"], status="any")
    changes: dict[str, Any] = {k: args[k] for k in ("title", "description", "priority", "due_date", "due_time")
                               if k in args}
    task, changed = await service.update_task(ctx.uow, ctx.user, ctx.actor, ref.task.id, **changes)
    message = (tr("Updated the task {title}.", title=task.title) if changed
               else tr("{title} already looks like that; nothing changed.", title=task.title))
    return ToolResult.success(message, changed=changed, **task_data(task))


async def _reschedule(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_task(ctx.uow, ctx.user, args["task"], status="open")
    task = await service.reschedule_task(ctx.uow, ctx.user, ctx.actor, ref.task.id, args["due_date"])
    return ToolResult.success(tr("{title} is now due {date}.", title=task.title, date=args["due_date"]),
                              **task_data(task))


async def _remind(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_task(ctx.uow, ctx.user, args["task"], status="open")
    minutes = args.get("minutes_before", 0)
    reminder = await service.set_reminder(ctx.uow, ctx.user, ctx.actor, ref.task.id, minutes)
    return ToolResult.success(tr("Reminder set for {time}: {text}", text=ref.task.title,
                                 time=reminder.occurrence_at), reminder_id=str(reminder.id), **task_data(ref.task))


async def _delete(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    ref = await service.find_task(ctx.uow, ctx.user, args["task"], status="any")
    whole = args.get("scope") == "series"
    deleted = await service.delete_task(ctx.uow, ctx.user, ctx.actor, ref.task.id, whole_series=whole)
    if ref.task.recurrence is not None and ref.task.completed_at is None:
        following = None if whole else await service.open_occurrence(ctx.uow, ctx.user, ref.task)
        message = (tr("Skipped {title} this time; next time: {date}.", title=ref.task.title, date=following.due_date)
                   if following is not None and following.due_date is not None
                   else tr("Deleted {title}: it no longer repeats.", title=ref.task.title))
        return ToolResult.success(message, id=str(ref.task.id), deleted_ids=[str(t.id) for t in deleted])
    subtask_count = len(deleted) - 1
    if subtask_count:
        message = ntr("Deleted {title} and its subtask.", "Deleted {title} and its {count} subtasks.",
                      subtask_count, title=ref.task.title)
    else:
        message = tr("Deleted {title}.", title=ref.task.title)
    return ToolResult.success(message, id=str(ref.task.id), deleted_ids=[str(t.id) for t in deleted])


async def _add_subtask(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    parent = await service.find_task(ctx.uow, ctx.user, args["task"], status="open")
    task = await service.add_subtask(ctx.uow, ctx.user, ctx.actor, parent.task.id, args["title"],
                                     due_date=args.get("due_date"), priority=args.get("priority", 0))
    return ToolResult.success(tr("Added {title} under {parent}.", title=task.title, parent=parent.task.title),
                              **task_data(task))


_LIST_MESSAGES = {
    "open": ("You have {count} open task.", "You have {count} open tasks."),
    "completed": ("{count} task is done.", "{count} tasks are done."),
    "overdue": ("{count} task is overdue.", "{count} tasks are overdue."),
    "today": ("{count} task is due today.", "{count} tasks are due today."),
    "all": ("{count} task in all.", "{count} tasks in all."),
}


async def _list(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    task_filter = args.get("filter", "open")
    rows: list[ListedTask] = await service.list_tasks(ctx.uow, ctx.user, task_filter, limit=args.get("limit", 20))
    singular, plural = _LIST_MESSAGES[task_filter]
    return ToolResult.success(
        ntr(singular, plural, len(rows)), filter=task_filter,
        tasks=[task_data(r.task, r.position) for r in rows],
    )


async def _stats(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    stats = await service.task_stats(ctx.uow, ctx.user)
    return ToolResult.success(
        tr("Open: {open}, done today: {done}, overdue: {overdue}, due today: {due}.", open=stats.open,
           done=stats.done_today, overdue=stats.overdue, due=stats.due_today),
        open=stats.open, done_today=stats.done_today, overdue=stats.overdue, due_today=stats.due_today,
    )


_TASK = ToolParam("task", "string", "Which task: its number in the task list, its id, or part of its title.",
                  required=True, max_length=MAX_TITLE)
_TITLE = ToolParam("title", "string", "What is to be done.", required=True, max_length=MAX_TITLE)
_DUE = ToolParam("due_date", "date", "Day the task is due (YYYY-MM-DD, or today/tomorrow).")
_DUE_TIME = ToolParam("due_time", "time", "Local time of day on the due day it is due at (HH:MM), if one was said.")
_PRIORITY = ToolParam("priority", "integer", "Priority from 0 (none) to 3 (highest).", minimum=MIN_PRIORITY,
                      maximum=MAX_PRIORITY)
_DESCRIPTION = ToolParam("description", "string", "Longer notes for the task.", max_length=service.MAX_DESCRIPTION)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("create_task", "todo", "Add a task to the person's to-do list.",
             (_TITLE, _DUE, _DUE_TIME, _PRIORITY, _DESCRIPTION,
              ToolParam("repeat", "string", "For a repeating task: an RFC 5545 RRULE over its due days, e.g. "
                        "FREQ=MONTHLY;BYMONTHDAY=1 or FREQ=WEEKLY;BYDAY=MO;COUNT=10; each occurrence is done on its "
                        "own.",
                        max_length=200)),
             "write", _create),
    ToolSpec("complete_task", "todo", "Mark an open task as done.", (_TASK,), "write", _complete),
    ToolSpec("uncomplete_task", "todo", "Mark a done task as open again.", (_TASK,), "write", _uncomplete),
    ToolSpec("update_task", "todo", "Change a task's title, notes, priority or due date.",
             (_TASK, ToolParam("title", "string", "New title.", max_length=MAX_TITLE),
              ToolParam("description", "string", "New notes; empty text removes them.",
                        max_length=service.MAX_DESCRIPTION),
              _PRIORITY, ToolParam("due_date", "date", "New due day (YYYY-MM-DD)."), _DUE_TIME),
             "write", _update),
    ToolSpec("set_task_reminder", "todo", "Remind the person of a task with a due time, some minutes before it.",
             (_TASK, ToolParam("minutes_before", "integer", "How many minutes before the due time (default 0).",
                               minimum=0, maximum=service.MAX_REMINDER_MINUTES)),
             "write", _remind),
    ToolSpec("reschedule_task", "todo", "Move an open task to another due day.",
             (_TASK, ToolParam("due_date", "date", "New due day (YYYY-MM-DD, or today/tomorrow).", required=True)),
             "write", _reschedule),
    ToolSpec("delete_task", "todo", "Delete a task for good, together with its subtasks; of a repeating task, this "
             "occurrence (the next one follows) or the whole series.",
             (_TASK, ToolParam("scope", "string", "For a repeating task: 'this' occurrence (default) or the whole "
                               "'series'.", enum=("this", "series"))),
             "destructive", _delete),
    ToolSpec("add_subtask", "todo", "Add a subtask under an open task.",
             (ToolParam("task", "string", "The parent task: its number in the task list, its id, or part of its "
                        "title.", required=True, max_length=MAX_TITLE), _TITLE, _DUE, _PRIORITY),
             "write", _add_subtask),
    ToolSpec("list_tasks", "todo", "List the person's tasks; numbers in the result can be used to refer to them.",
             (ToolParam("filter", "string", "Which tasks (default open).", enum=TASK_FILTERS),
              ToolParam("limit", "integer", "At most this many tasks (default 20).", minimum=1, maximum=MAX_LIST)),
             "read", _list),
    ToolSpec("get_task_stats", "todo", "Counts of open tasks, tasks done today, overdue and due today.", (),
             "read", _stats),
)
