"""Undo a write: the person's last own one (`undo_last`, one step further each time) or a chosen one, e.g.
an AI write from /activity (`undo_event`). Either runs the inverse tool call through the executor, linked
to the undone event by `caused_by`; an event with such a (non-system) follower counts as undone."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, exists, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from brain.events.catalog import ActorT
from brain.events.store import EventRecord
from brain.i18n import tr
from brain.store.unit_of_work import Transactions
from brain.tools.executor import ToolExecutor
from brain.tools.spec import ToolResult

UNDO_WINDOW = timedelta(hours=24)

# ---- pure: the inverse call of an event, from its payload ---------------------------------------


def _restore(ref: str, id_field: str, restorable: tuple[str, ...]) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """Arguments that set the changed fields back to the values the event kept (`before`), the record named by
    `ref` (its id from the payload's `id_field`). None when one of them cannot be restored: an event stored
    before `before` existed, or a field the tool cannot set. Text that was empty is restored as "", which the
    update tools take as "remove it"."""
    def arguments(p: dict[str, Any]) -> dict[str, Any] | None:
        before: dict[str, Any] = p.get("before") or {}
        fields: list[str] = p.get("fields") or []
        if not fields or any(f not in restorable or f not in before for f in fields):
            return None
        values = {f: "" if before[f] is None and f in ("description", "location") else before[f] for f in fields}
        if any(v is None for v in values.values()):
            return None
        return {ref: p[id_field], **values}
    return arguments


def _nutrition_goal_back(p: dict[str, Any]) -> dict[str, Any] | None:
    """The goal it replaced; left-out macros are cleared by the tool, as they were. None if there was none (no tool
    removes a nutrition goal)."""
    previous = p.get("previous")
    if not previous or previous.get("daily_calories") is None:
        return None
    macros = {name: previous.get(f"daily_{name}") for name in ("protein", "carbs", "fat")}
    return {"kcal": previous["daily_calories"], **{k: v for k, v in macros.items() if v is not None}}


# event type -> (inverse tool, arguments from the event payload, or None when this event cannot be reverted:
# a task rescheduled from no due day has no earlier day to go back to; a goal set where there was none, as no
# tool removes a goal; an event change of its times, all-day flag or calendar, which update_event cannot set back
# exactly).
# Writes without an entry here, on purpose:
# - undo_last_drink (DrinkEntryUndone), undo_rule_adaptation (RuleAdaptationUndone): undos themselves;
# - log_location (LocationLogged): a raw position fix, kept as history (a visit it counted is PlaceVisited, which
#   can be undone); start_tracking / stop_tracking (TrackingStarted/Stopped): a session, nothing to take back;
# - draft_ritual: writes no event (a draft only);
# - add_subtask: its TaskCreated is undone (deleting the subtask); SubtasksUpdated only recounts the parent;
# - create_drink_preset: writes no event;
# - skip_streak_day (StreakDaySkipped): no tool removes a skip day;
# - resume_pulse (PulseResumed) of a pause with an end: pause_pulse pauses for whole days from now, so that end
#   cannot be restored (a pause without an end can, and is);
# - deletions (TaskDeleted, CalendarEventDeleted, PlaceDeleted, ...) and abandon_goal: the record is gone.
Inverse = tuple[str, Callable[[dict[str, Any]], dict[str, Any] | None]]
INVERSES: dict[str, Inverse] = {
    "DrinkLogged": ("undo_last_drink",  # the whole log it is part of ("/coffee 3"), as its reply's Undo button
                    lambda p: {"entry_ids": ",".join(map(str, p.get("log_entry_ids") or [p["entry_id"]]))}),
    "MealLogged": ("delete_meal", lambda p: {"meal_id": p["meal_id"]}),
    "MealFromPhotoLogged": ("delete_meal", lambda p: {"meal_id": p["meal_id"]}),
    "TaskCreated": ("delete_task", lambda p: {"task": p["task_id"]}),
    "TaskCompleted": ("uncomplete_task", lambda p: {"task": p["task_id"]}),
    "TaskUncompleted": ("complete_task", lambda p: {"task": p["task_id"]}),
    "TaskRescheduled": ("reschedule_task",
                        lambda p: {"task": p["task_id"], "due_date": p["old_date"]} if p.get("old_date") else None),
    "CalendarEventCreated": ("delete_event", lambda p: {"event": p["event_id"]}),
    "CalendarEventMoved": ("move_event", lambda p: {"event": p["event_id"], "start_time": p["old_start"]}),
    "PlaceCreated": ("delete_place", lambda p: {"place": p["place_id"]}),
    "GoalCreated": ("abandon_goal", lambda p: {"goal": p["goal_id"]}),
    "GoalPaused": ("resume_goal", lambda p: {"goal": p["goal_id"]}),
    "GoalResumed": ("pause_goal", lambda p: {"goal": p["goal_id"]}),
    "PulsePaused": ("resume_pulse", lambda p: {}),
    "TaskUpdated": ("update_task", _restore("task", "task_id", ("title", "description", "priority"))),
    "CalendarEventUpdated": ("update_event", _restore("event", "event_id", ("title", "location", "description"))),
    "DrinkGoalSet": ("set_drink_goal", lambda p: {"daily_ml": p["previous_ml"], "drink_type": p["drink_type"]}
                     if p.get("previous_ml") else None),
    "NutritionGoalSet": ("set_nutrition_goal", _nutrition_goal_back),
    "PlaceVisited": ("delete_visit", lambda p: {"visit": p["visit_id"]}),
    "PulseResumed": ("pause_pulse", lambda p: {} if p.get("open_ended") else None),
    "ReminderCreated": ("delete_reminder", lambda p: {"reminder": p["reminder_id"]}),
    # Back to its old time, if that is still ahead (one that has passed cannot be set again: the tool says so).
    "ReminderMoved": ("move_reminder", lambda p: {"reminder": p["reminder_id"], "at": p["old_at"]}),
    "CalendarSeriesCreated": ("delete_event", lambda p: {"event": p["first_event_id"], "scope": "series"}),
}


# The person's own changes that no tool takes back (the record is gone, or nothing sets it back). /undo stops at the
# newest of them instead of reaching past it to an older, unrelated entry: after deleting a task, "/undo" must not
# quietly remove the glass of water logged before.
FINAL: frozenset[str] = frozenset({
    "TaskDeleted", "ReminderDeleted", "CalendarEventDeleted", "DrinkEntryDeleted", "MealDeleted", "PlaceDeleted",
    "PlaceVisitDeleted", "GoalAbandoned", "StreakDaySkipped", "MemoryForgotten", "ReminderCancelled",
    "CalendarSeriesDeleted", "FactForgotten",
})


def _undone(user_id: uuid.UUID) -> Any:
    """SQL: a later write was caused by the event row (system reactions such as GoalReached don't count)."""
    later = aliased(EventRecord)
    return exists().where(and_(later.user_id == user_id, later.caused_by == EventRecord.id,
                               later.actor["kind"].astext != "system"))


async def undone_ids(session: AsyncSession, user_id: uuid.UUID, event_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these events were undone already."""
    if not event_ids:
        return set()
    rows = await session.scalars(select(EventRecord.caused_by).where(
        EventRecord.user_id == user_id, EventRecord.caused_by.in_(event_ids),
        EventRecord.actor["kind"].astext != "system"))
    return {r for r in rows if r is not None}


def inverse_call(event_type: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The tool call that reverts this event, if there is one."""
    inverse = INVERSES.get(event_type)
    if inverse is None:
        return None
    tool, make_args = inverse
    arguments = make_args(payload)
    return None if arguments is None else (tool, arguments)


def is_undoable(event_type: str, payload: dict[str, Any]) -> bool:
    return inverse_call(event_type, payload) is not None


async def undo_event(
    transactions: Transactions, executor: ToolExecutor, user_id: uuid.UUID, event_id: uuid.UUID, actor: ActorT
) -> ToolResult:
    """Revert one of the person's events (any actor's) by its inverse tool call, run as `actor`."""
    async with transactions.read() as session:
        record = await session.scalar(select(EventRecord).where(EventRecord.user_id == user_id,
                                                                EventRecord.id == event_id))
        if record is None:
            return ToolResult.failure(tr("I can't find that entry."), "not_found")
        call = inverse_call(record.type, record.payload)
        if call is None:
            return ToolResult.failure(tr("That cannot be undone."), "not_undoable")
        if record.id in await undone_ids(session, user_id, [record.id]):
            return ToolResult.failure(tr("That was already undone."), "already_undone")
    tool, arguments = call
    return await executor.execute(user_id, tool, arguments, actor, caused_by=record.id)


def _steps(user_id: uuid.UUID, actor: ActorT, since: datetime, limit: int) -> Any:
    """The person's newest own changes that /undo would take back or stop at, newest first."""
    return (
        select(EventRecord)
        .where(
            EventRecord.user_id == user_id,
            EventRecord.type.in_([*INVERSES, *FINAL]),
            EventRecord.occurred_at >= since,
            EventRecord.actor["kind"].astext == actor.kind,
            # An undo's own event is not a step to take back: /undo again goes one step further back
            # instead of flipping the last one (reopen, complete, reopen, ...).
            EventRecord.caused_by.is_(None),
            ~_undone(user_id),
        )
        .order_by(EventRecord.occurred_at.desc(), EventRecord.seq.desc())
        .limit(limit)
    )


async def last_step_at(transactions: Transactions, user_id: uuid.UUID, actor: ActorT) -> datetime | None:
    """When the change that `undo_last` would take back (or stop at) was made; None when there is none within
    UNDO_WINDOW. Lets a caller with writes of its own that are not events (a memory asked for) see which is newer."""
    async with transactions.read() as session:
        record = (await session.scalars(
            _steps(user_id, actor, transactions.clock.now() - UNDO_WINDOW, 1))).first()
    return None if record is None else record.occurred_at


async def undo_last(
    transactions: Transactions, executor: ToolExecutor, user_id: uuid.UUID, actor: ActorT
) -> ToolResult:
    async with transactions.read() as session:
        candidates = (await session.scalars(
            _steps(user_id, actor, transactions.clock.now() - UNDO_WINDOW, 5))).all()
    for record in candidates:
        call = inverse_call(record.type, record.payload)
        # A change with nothing to set back (a deletion, a first goal) is where /undo stops, as FINAL says: going
        # on would take back an older, unrelated entry in its place.
        if record.type in FINAL or call is None:
            return ToolResult.failure(tr("Your last change cannot be undone, so I left everything as it is."),
                                      "not_undoable")
        if executor.registry.get(call[0]) is None:
            continue
        tool, arguments = call
        result = await executor.execute(user_id, tool, arguments, actor, caused_by=record.id)
        if result.ok:
            return result
        if result.error_code not in ("not_found", "nothing_to_undo", "not_done", "already_open"):
            return result
    return ToolResult.failure(tr("There is nothing of yours from the last 24 hours that I can undo."),
                              "nothing_to_undo")
