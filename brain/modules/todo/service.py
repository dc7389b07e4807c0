"""Task mutations (each emits its event(s) in the same unit of work), the lists and counts, and
`find_task`, which resolves a short reference (list position, id or title fragment) to one task."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from sqlalchemy import Date, DateTime, Integer, Select, and_, bindparam, case, delete, func, select
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.orm import aliased

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    ReminderDeleted,
    ReminderSet,
    SubtasksUpdated,
    TaskCompleted,
    TaskCreated,
    TaskDeleted,
    TaskRescheduled,
    TaskUncompleted,
    TaskUpdated,
)
from brain.i18n import tr
from brain.modules.todo.models import ShownTaskList, Task
from brain.people.local_time import day_bounds, local_date
from brain.people.models import User
from brain.recurrence import RuleError, first_day, next_day, normalize
from brain.reminders import service as reminders
from brain.reminders.models import CANCELLED, WAITING, Reminder
from brain.store.unit_of_work import UnitOfWork

TaskFilter = Literal["open", "completed", "overdue", "today", "all"]
TASK_FILTERS: tuple[str, ...] = ("open", "completed", "overdue", "today", "all")
TaskStatus = Literal["open", "completed", "any"]

MAX_TITLE = 500
MAX_DESCRIPTION = 5000
MIN_PRIORITY, MAX_PRIORITY = 0, 3
MAX_LIST = 100
REMINDER_TYPES: tuple[str, ...] = ("notification",)
MAX_REMINDER_MINUTES = 28 * 24 * 60

# One order for every list, so a task keeps its position whichever filter shows it: open tasks
# first (NULL completed_at), overdue before due before undated, then higher priority, then older;
# completed tasks after them, most recently done first.
_ORDER = (
    Task.completed_at.desc().nulls_first(), Task.due_date.asc().nulls_last(), Task.priority.desc(),
    Task.created_at.asc(), Task.id.asc(),
)
_POSITION_RE = re.compile(r"#?\s*(\d{1,6})\.?")


@dataclass(frozen=True)
class ListedTask:
    task: Task
    position: int


@dataclass(frozen=True)
class TaskStats:
    open: int
    done_today: int
    overdue: int
    due_today: int


def _title(title: str) -> str:
    text = title.strip()
    if not text:
        raise DomainError(tr("A task needs a title."), code="empty")
    if len(text) > MAX_TITLE:
        raise DomainError(tr("A task title can be at most {max} characters.", max=MAX_TITLE), code="too_long")
    return text


def _description(description: str | None) -> str | None:
    text = (description or "").strip()
    if len(text) > MAX_DESCRIPTION:
        raise DomainError(tr("A task description can be at most {max} characters.", max=MAX_DESCRIPTION),
                          code="too_long")
    return text or None


def _priority(priority: int) -> int:
    if not MIN_PRIORITY <= priority <= MAX_PRIORITY:
        raise DomainError(tr("Priority must be between {min} and {max}.", min=MIN_PRIORITY, max=MAX_PRIORITY),
                          code="out_of_range")
    return priority


async def _get(uow: UnitOfWork, user: User, task_id: uuid.UUID) -> Task:
    # populate_existing: a lookup may have loaded the row before we held its lock.
    task = await uow.session.scalar(
        select(Task).where(Task.user_id == user.id, Task.id == task_id).with_for_update()
        .execution_options(populate_existing=True)
    )
    if task is None:
        raise DomainError(tr("No such task."), code="not_found")
    return task


async def _emit_subtask_counts(uow: UnitOfWork, user: User, actor: ActorT, parent_id: uuid.UUID) -> None:
    await uow.session.flush()
    total, completed = (await uow.session.execute(
        select(func.count(), func.count(Task.completed_at)).where(Task.user_id == user.id, Task.parent_id == parent_id)
    )).one()
    uow.emit(SubtasksUpdated(task_id=parent_id, total=int(total), completed=int(completed)),
             user_id=user.id, record_id=parent_id, actor=actor)


async def create_task(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    title: str,
    *,
    due_date: date | None = None,
    due_time: time | None = None,
    priority: int = 0,
    description: str | None = None,
    parent_id: uuid.UUID | None = None,
    recurrence: str | None = None,
) -> Task:
    """A new open task; with `parent_id` a subtask, which also updates the parent's counts. A due time needs a due
    day. With `recurrence` (an RRULE over due days) it repeats: due on its first day from `due_date` (or today)."""
    clean_title, clean_description, clean_priority = _title(title), _description(description), _priority(priority)
    rule: str | None = None
    if recurrence:
        if parent_id is not None:
            raise DomainError(tr("A subtask cannot repeat on its own."), code="subtask_repeats")
        rule = _rule(recurrence)
        start = due_date or local_date(user, uow.now)
        due_date = first_day(rule, start, start)
        if due_date is None:
            raise DomainError(tr("That repetition has no dates from now on. Check its days or its end."),
                              code="no_occurrences")
    _check_due_time(due_date, due_time)
    if parent_id is not None:
        parent = await _get(uow, user, parent_id)
        if parent.parent_id is not None:
            raise DomainError(tr("A subtask cannot have subtasks of its own."), code="too_deep")
    task = Task(
        id=uuid.uuid4(), user_id=user.id, parent_id=parent_id, title=clean_title, description=clean_description,
        due_date=due_date, due_time=_minute(due_time), priority=clean_priority, completed_at=None, updated_at=uow.now,
        recurrence=rule, series_start=due_date if rule else None,
    )
    task.series_id = task.id if rule else None
    uow.session.add(task)
    uow.emit(TaskCreated(task_id=task.id, title=task.title, due_date=due_date, priority=clean_priority,
                         parent_id=parent_id, recurrence=rule),
             user_id=user.id, record_id=task.id, actor=actor)
    if parent_id is not None:
        await _emit_subtask_counts(uow, user, actor, parent_id)
    return task


def _rule(recurrence: str) -> str:
    try:
        return normalize(recurrence)
    except RuleError as bad:
        raise DomainError(bad.text, code="bad_rule") from None


def _check_due_time(due_date: date | None, due_time: time | None) -> None:
    if due_time is not None and due_date is None:
        raise DomainError(tr("A due time needs a due day: say which day, e.g. tomorrow 15:00."),
                          code="time_without_day")


def _minute(at: time | None) -> time | None:
    return at.replace(second=0, microsecond=0, tzinfo=None) if at is not None else None


def due_instant(user: User, task: Task) -> datetime | None:
    """When the task is due, as an instant: its due day at its due time in the person's zone (None without both)."""
    if task.due_date is None or task.due_time is None:
        return None
    return reminders.wall_time(task.due_date, task.due_time, ZoneInfo(user.timezone))


async def add_subtask(
    uow: UnitOfWork, user: User, actor: ActorT, parent_id: uuid.UUID, title: str, *,
    due_date: date | None = None, priority: int = 0,
) -> Task:
    return await create_task(uow, user, actor, title, due_date=due_date, priority=priority, parent_id=parent_id)


async def complete_task(uow: UnitOfWork, user: User, actor: ActorT, task_id: uuid.UUID) -> Task:
    """Done; a repeating task's next occurrence is made (`next_occurrence`)."""
    task = await _get(uow, user, task_id)
    if task.completed_at is not None:
        raise DomainError(tr("{title} is already done.", title=task.title), code="already_done")
    today = local_date(user, uow.now)
    task.completed_at = uow.now
    task.updated_at = uow.now
    await reminders.end_task_reminders(uow, task.id, user.id)
    uow.emit(TaskCompleted(task_id=task.id, title=task.title,
                           was_overdue=task.due_date is not None and task.due_date < today),
             user_id=user.id, record_id=task.id, actor=actor)
    if task.parent_id is not None:
        await _emit_subtask_counts(uow, user, actor, task.parent_id)
    await next_occurrence(uow, user, actor, task)
    return task


async def next_occurrence(uow: UnitOfWork, user: User, actor: ActorT, done: Task) -> Task | None:
    """The occurrence after `done` of a repeating task, as a new open task with the same title, notes, priority, due
    time and reminders (minutes before); days already past are skipped, never piled up. None when the series ends."""
    if done.recurrence is None or done.due_date is None:
        return None
    start = done.series_start or done.due_date
    following = next_day(done.recurrence, start, done.due_date)
    today = local_date(user, uow.now)
    if following is not None and following < today:
        following = first_day(done.recurrence, start, today)
    if following is None:
        return None
    task = Task(
        id=uuid.uuid4(), user_id=user.id, parent_id=None, title=done.title, description=done.description,
        due_date=following, due_time=done.due_time, priority=done.priority, completed_at=None, updated_at=uow.now,
        recurrence=done.recurrence, series_id=done.series_id or done.id, series_start=start,
    )
    uow.session.add(task)
    uow.emit(TaskCreated(task_id=task.id, title=task.title, due_date=following, priority=task.priority,
                         recurrence=task.recurrence), user_id=user.id, record_id=task.id, actor=actor)
    due = due_instant(user, task)
    if due is not None:
        before = set((await uow.session.scalars(select(Reminder.minutes_before).where(
            Reminder.user_id == user.id, Reminder.task_id == done.id, Reminder.status != CANCELLED))).all())
        for minutes in sorted(m for m in before if m is not None):
            if due - timedelta(minutes=minutes) > uow.now:
                reminders.store_reminder(uow, user, task.title, due - timedelta(minutes=minutes), task_id=task.id,
                                         minutes_before=minutes)
    return task


async def open_occurrence(uow: UnitOfWork, user: User, task: Task) -> Task | None:
    """The open occurrence of the task's series other than `task` (the next one, once `task` is done or skipped)."""
    if task.series_id is None:
        return None
    return await uow.session.scalar(select(Task).where(
        Task.user_id == user.id, Task.series_id == task.series_id, Task.completed_at.is_(None), Task.id != task.id)
        .order_by(Task.due_date).limit(1))


async def uncomplete_task(uow: UnitOfWork, user: User, actor: ActorT, task_id: uuid.UUID) -> Task:
    task = await _get(uow, user, task_id)
    if task.completed_at is None:
        raise DomainError(tr("{title} is not done yet.", title=task.title), code="not_done")
    task.completed_at = None
    task.updated_at = uow.now
    uow.emit(TaskUncompleted(task_id=task.id, title=task.title), user_id=user.id, record_id=task.id, actor=actor)
    if task.parent_id is not None:
        await _emit_subtask_counts(uow, user, actor, task.parent_id)
    return task


_UNSET: Any = object()


async def update_task(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    task_id: uuid.UUID,
    *,
    title: str | None = None,
    description: str | None = None,
    priority: int | None = None,
    due_date: date | None = _UNSET,
    due_time: time | None = _UNSET,
) -> tuple[Task, list[str]]:
    """Changes the given fields. Title, description and priority changes emit one TaskUpdated naming
    them; a due-date change emits TaskRescheduled instead, as the seed has it. Unchanged values emit
    nothing. Returns the task and the names of the fields that changed. `description=""` clears it."""
    if title is None and description is None and priority is None and due_date is _UNSET and due_time is _UNSET:
        raise DomainError(tr("Tell me what to change about the task."), code="nothing_to_change")
    task = await _get(uow, user, task_id)
    changed: list[str] = []
    before: dict[str, Any] = {}  # the changed fields' old values, carried by the event so an undo can restore them
    if title is not None and (new_title := _title(title)) != task.title:
        before["title"] = task.title
        task.title = new_title
        changed.append("title")
    if description is not None and (new_description := _description(description)) != task.description:
        before["description"] = task.description
        task.description = new_description
        changed.append("description")
    if priority is not None and _priority(priority) != task.priority:
        before["priority"] = task.priority
        task.priority = priority
        changed.append("priority")
    if due_time is not _UNSET and _minute(due_time) != task.due_time:
        _check_due_time(task.due_date if due_date is _UNSET else due_date, due_time)
        before["due_time"] = task.due_time.isoformat(timespec="minutes") if task.due_time else None
        task.due_time = _minute(due_time)
        changed.append("due_time")
    if changed:
        task.updated_at = uow.now
        uow.emit(TaskUpdated(task_id=task.id, fields=changed, before=before), user_id=user.id, record_id=task.id,
                 actor=actor)
    if due_date is not _UNSET and await _reschedule(uow, user, actor, task, due_date):
        changed.append("due_date")
    elif "due_time" in changed:
        await _retime_reminders(uow, user, task)
    return task, changed


async def reschedule_task(
    uow: UnitOfWork, user: User, actor: ActorT, task_id: uuid.UUID, due_date: date | None
) -> Task:
    """Moves the due date (None removes it); the same date again is no change and emits nothing."""
    task = await _get(uow, user, task_id)
    await _reschedule(uow, user, actor, task, due_date)
    return task


async def _reschedule(uow: UnitOfWork, user: User, actor: ActorT, task: Task, due_date: date | None) -> bool:
    if due_date == task.due_date:
        return False
    old = task.due_date
    task.due_date = due_date
    if due_date is None:
        task.due_time = None  # a time of no day
    task.updated_at = uow.now
    uow.emit(TaskRescheduled(task_id=task.id, title=task.title, old_date=old, new_date=due_date),
             user_id=user.id, record_id=task.id, actor=actor)
    await _retime_reminders(uow, user, task)
    return True


async def _retime_reminders(uow: UnitOfWork, user: User, task: Task) -> None:
    """The task's waiting reminders follow its due time; one whose new time has passed (or that has no due time
    any more) ends."""
    due = due_instant(user, task)
    rows = (await uow.session.scalars(select(Reminder).where(
        Reminder.user_id == user.id, Reminder.task_id == task.id, Reminder.status == WAITING).with_for_update())).all()
    for row in rows:
        at = due - timedelta(minutes=row.minutes_before or 0) if due is not None else None
        if at is None or at <= uow.now:
            row.status, row.due_at = CANCELLED, None
        else:
            row.occurrence_at = row.due_at = at
            row.held, row.deliveries = None, 0
        row.updated_at = uow.now


async def delete_task(uow: UnitOfWork, user: User, actor: ActorT, task_id: uuid.UUID, *,
                      whole_series: bool = False) -> list[Task]:
    """Deletes the task for good, and with a parent its subtasks (one TaskDeleted each, subtasks
    first). Deleting a subtask updates its parent's counts. Returns the deleted tasks. An open occurrence of a
    repeating task is skipped: the next one is made, unless `whole_series` ends the repetition."""
    task = await _get(uow, user, task_id)
    if task.recurrence is not None and task.completed_at is None and not whole_series:
        await next_occurrence(uow, user, actor, task)
    subtasks = list((await uow.session.scalars(
        select(Task).where(Task.user_id == user.id, Task.parent_id == task.id).order_by(*_ORDER).with_for_update()
    )).all())
    deleted = [*subtasks, task]
    await uow.session.execute(
        delete(Task).where(Task.user_id == user.id, Task.id.in_([t.id for t in deleted])),
        execution_options={"synchronize_session": "fetch"},
    )
    for gone in deleted:
        uow.emit(TaskDeleted(task_id=gone.id, title=gone.title), user_id=user.id, record_id=gone.id, actor=actor)
    if task.parent_id is not None:
        await _emit_subtask_counts(uow, user, actor, task.parent_id)
    return deleted


# ---- reminders -------------------------------------------------------------------------------


async def set_reminder(
    uow: UnitOfWork, user: User, actor: ActorT, task_id: uuid.UUID, minutes_before: int,
    reminder_type: str = "notification",
) -> Reminder:
    """A reminder `minutes_before` the task's due time; it follows the task (rescheduled, done, deleted)."""
    if not 0 <= minutes_before <= MAX_REMINDER_MINUTES:
        raise DomainError(tr("A reminder must be between {min} and {max} minutes before.", min=0,
                             max=MAX_REMINDER_MINUTES), code="out_of_range")
    if reminder_type not in REMINDER_TYPES:
        raise DomainError(tr("Unknown reminder type: {name}. Known: {choices}.", name=reminder_type[:32],
                             choices=", ".join(REMINDER_TYPES)), code="bad_enum")
    task = await _get(uow, user, task_id)
    if task.completed_at is not None:
        raise DomainError(tr("{title} is already done.", title=task.title), code="already_done")
    due = due_instant(user, task)
    if due is None:
        raise DomainError(tr("{title} has no due time to remind you before. Give it one, e.g. /task {title} "
                             "tomorrow 15:00.", title=task.title), code="no_due_time")
    reminder = reminders.store_reminder(uow, user, task.title, due - timedelta(minutes=minutes_before),
                                        task_id=task.id, minutes_before=minutes_before)
    uow.emit(ReminderSet(task_id=task.id, reminder_id=reminder.id, minutes_before=minutes_before, type=reminder_type),
             user_id=user.id, record_id=reminder.id, actor=actor)
    return reminder


async def delete_reminder(uow: UnitOfWork, user: User, actor: ActorT, reminder_id: uuid.UUID) -> Reminder:
    reminder = await uow.session.scalar(
        select(Reminder).where(Reminder.user_id == user.id, Reminder.id == reminder_id,
                               Reminder.task_id.is_not(None)))
    if reminder is None or reminder.task_id is None:
        raise DomainError(tr("No such reminder."), code="not_found")
    await reminders.end_reminder(uow, user, reminder.id)
    uow.emit(ReminderDeleted(task_id=reminder.task_id, reminder_id=reminder.id), user_id=user.id,
             record_id=reminder.id, actor=actor)
    return reminder


async def list_reminders(uow: UnitOfWork, user: User, task_id: uuid.UUID) -> list[Reminder]:
    """The task's reminders still to come, soonest first."""
    return list((await uow.session.scalars(
        select(Reminder).where(Reminder.user_id == user.id, Reminder.task_id == task_id, Reminder.status == WAITING)
        .order_by(Reminder.due_at, Reminder.created_at)
    )).all())


# ---- reading ---------------------------------------------------------------------------------


def _ranked() -> tuple[type[Task], Any]:
    """The tasks of the person bound as `owner` with their 1-based position in the one list order (see
    `_ORDER`), except that a task done since `since` (the start of the person's local today) keeps the place it had
    while open: "/done 3" then "/done 4" completes the third and the fourth of the list the person is looking at,
    not the fifth. Numbers close up the next day."""
    earlier_done = and_(Task.completed_at.is_not(None),
                        Task.completed_at < bindparam("since", type_=DateTime(timezone=True)))
    order = (case((earlier_done, 1), else_=0), case((earlier_done, Task.completed_at)).desc().nulls_last(),
             *_ORDER[1:])
    ranked = (
        select(Task, func.row_number().over(order_by=order).label("position"))
        .where(Task.user_id == bindparam("owner", type_=UUID(as_uuid=True)))
        .subquery()
    )
    return aliased(Task, ranked), ranked.c.position


# Built once (building them took more of a listing's CPU than running them); the person, their today and the
# limit are bound.
_ROW, _POSITION = _ranked()
_TODAY = bindparam("today", type_=Date)
_CONDITIONS: dict[str, list[Any]] = {
    "open": [_ROW.completed_at.is_(None)],
    "completed": [_ROW.completed_at.is_not(None)],
    "overdue": [_ROW.completed_at.is_(None), _ROW.due_date < _TODAY],
    "today": [_ROW.completed_at.is_(None), _ROW.due_date == _TODAY],
    "all": [],
}
_LISTS: dict[str, Select[Any]] = {
    name: select(_ROW, _POSITION).where(*conditions).order_by(_POSITION).limit(bindparam("limit", type_=Integer))
    for name, conditions in _CONDITIONS.items()
}


async def _rows(uow: UnitOfWork, user: User, stmt: Select[Any], **params: Any) -> list[ListedTask]:
    since = day_bounds(user, local_date(user, uow.now))[0]
    return [ListedTask(task, int(position))
            for task, position in (await uow.session.execute(stmt, {"owner": user.id, "since": since, **params}))]


async def list_tasks(
    uow: UnitOfWork, user: User, task_filter: TaskFilter = "open", *, limit: int = 20
) -> list[ListedTask]:
    """Open: overdue, then by due date (undated last), priority, age. Completed: latest first.
    All: open then completed. Positions are the same in every filter, so "3" means one task."""
    if task_filter not in TASK_FILTERS:
        raise DomainError(tr("Unknown task filter: {name}. Known: {choices}.", name=str(task_filter)[:32],
                             choices=", ".join(TASK_FILTERS)), code="bad_enum")
    return await _rows(uow, user, _LISTS[task_filter], today=local_date(user, uow.now),
                       limit=max(1, min(limit, MAX_LIST)))


async def due_today(uow: UnitOfWork, user: User, *, limit: int = MAX_LIST) -> list[ListedTask]:
    return await list_tasks(uow, user, "today", limit=limit)


async def overdue(uow: UnitOfWork, user: User, *, limit: int = MAX_LIST) -> list[ListedTask]:
    return await list_tasks(uow, user, "overdue", limit=limit)


async def subtasks(uow: UnitOfWork, user: User, parent_id: uuid.UUID) -> list[Task]:
    return list((await uow.session.scalars(
        select(Task).where(Task.user_id == user.id, Task.parent_id == parent_id).order_by(*_ORDER)
    )).all())


async def task_stats(uow: UnitOfWork, user: User) -> TaskStats:
    """Open, done during the local today, overdue and due today, in one query."""
    today = local_date(user, uow.now)
    start, end = day_bounds(user, today)
    is_open = Task.completed_at.is_(None)
    row = (await uow.session.execute(
        select(
            func.count().filter(is_open),
            func.count().filter(Task.completed_at >= start, Task.completed_at < end),
            func.count().filter(is_open, Task.due_date < today),
            func.count().filter(is_open, Task.due_date == today),
        ).where(Task.user_id == user.id)
    )).one()
    return TaskStats(open=int(row[0]), done_today=int(row[1]), overdue=int(row[2]), due_today=int(row[3]))


async def find_task(uow: UnitOfWork, user: User, reference: str, *, status: TaskStatus = "open") -> ListedTask:
    """One of the person's tasks by a short reference: its position in the task list ("2", "#2"; in the list last
    shown to the person when it showed that number, see `remember_shown`), its id, or a case-insensitive fragment of
    its title. A fragment searches tasks of `status`; a
    fragment matching several of them (and none exactly) is refused as ambiguous."""
    text = reference.strip()
    if not text:
        raise DomainError(tr("Which task do you mean?"), code="missing_reference")
    row, position = _ROW, _POSITION
    if match := _POSITION_RE.fullmatch(text):
        number = int(match.group(1))
        shown = await shown_task(uow, user, number)
        condition = position == number if shown is None else row.id == shown
        found = await _rows(uow, user, select(row, position).where(condition))
        if not found:
            raise DomainError(tr("There is no task number {number}.", number=number), code="not_found")
        return found[0]
    try:
        task_id = uuid.UUID(text)
    except ValueError:
        task_id = None
    if task_id is not None:
        found = await _rows(uow, user, select(row, position).where(row.id == task_id))
        if not found:
            raise DomainError(tr("No such task."), code="not_found")
        return found[0]
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    # An exact title first, so "Milk" still finds "Milk" when "Oat milk" exists too.
    candidates = await _rows(uow, user, select(row, position).where(
        row.title.ilike(pattern, escape="\\"), *_CONDITIONS["all" if status == "any" else status]
    ).order_by((func.lower(row.title) == text.lower()).desc(), position).limit(6))
    return _one(text, candidates)


async def remember_shown(uow: UnitOfWork, user: User, shown: Sequence[tuple[int, uuid.UUID]]) -> None:
    """Keeps the numbers of a task list just shown (position, task id), in place of the list shown before."""
    values = {"positions": [number for number, _ in shown], "task_ids": [task_id for _, task_id in shown],
              "shown_at": uow.now}
    await uow.session.execute(insert(ShownTaskList).values(user_id=user.id, **values).on_conflict_do_update(
        index_elements=[ShownTaskList.user_id], set_=values))


async def shown_task(uow: UnitOfWork, user: User, number: int) -> uuid.UUID | None:
    """The task that was `number` in the list last shown to the person; None when no list showed that number."""
    shown = (await uow.session.execute(select(ShownTaskList.positions, ShownTaskList.task_ids)
                                       .where(ShownTaskList.user_id == user.id))).first()
    if shown is None or number not in shown.positions:
        return None
    return shown.task_ids[shown.positions.index(number)]


def _one(reference: str, candidates: Sequence[ListedTask]) -> ListedTask:
    if not candidates:
        raise DomainError(tr("I found no task matching {reference}.", reference=reference[:100]), code="not_found")
    if len(candidates) == 1:
        return candidates[0]
    exact = [c for c in candidates if c.task.title.lower() == reference.lower()]
    if len(exact) == 1:
        return exact[0]
    if len({c.task.series_id for c in candidates}) == 1 and candidates[0].task.series_id is not None:
        # Occurrences of one repeating task (the done ones and the open one): the open one.
        return next((c for c in candidates if c.task.completed_at is None), candidates[0])
    choices = ", ".join(f"{c.position}. {c.task.title[:60]}" for c in candidates[:5])
    raise DomainError(tr("{reference} matches several tasks: {choices}. Which one do you mean?",
                         reference=reference[:100], choices=choices), code="ambiguous")
