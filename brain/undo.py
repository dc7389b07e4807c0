"""Undo a write: the person's last own one (`undo_last`, one step further each time) or a chosen one, e.g.
an AI write from /activity (`undo_event`). Either runs the inverse tool call through the executor, linked
to the undone event by `caused_by`; an event with such a (non-system) follower counts as undone."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
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

# event type -> (inverse tool, arguments from the event payload, or None when this event cannot be reverted:
# a task rescheduled from no due day has no earlier day to go back to)
Inverse = tuple[str, Callable[[dict[str, Any]], dict[str, Any] | None]]
INVERSES: dict[str, Inverse] = {
    "DrinkLogged": ("delete_drink", lambda p: {"entry_id": p["entry_id"]}),
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
}


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


async def undo_last(
    transactions: Transactions, executor: ToolExecutor, user_id: uuid.UUID, actor: ActorT
) -> ToolResult:
    async with transactions.read() as session:
        candidates = (await session.scalars(
            select(EventRecord)
            .where(
                EventRecord.user_id == user_id,
                EventRecord.type.in_(list(INVERSES)),
                EventRecord.occurred_at >= transactions.clock.now() - UNDO_WINDOW,
                EventRecord.actor["kind"].astext == actor.kind,
                ~_undone(user_id),
            )
            .order_by(EventRecord.occurred_at.desc(), EventRecord.seq.desc())
            .limit(5)
        )).all()
    for record in candidates:
        call = inverse_call(record.type, record.payload)
        if call is None or executor.registry.get(call[0]) is None:
            continue
        tool, arguments = call
        result = await executor.execute(user_id, tool, arguments, actor, caused_by=record.id)
        if result.ok:
            return result
        if result.error_code not in ("not_found", "nothing_to_undo", "not_done", "already_open"):
            return result
    return ToolResult.failure(tr("There is nothing of yours from the last 24 hours that I can undo."),
                              "nothing_to_undo")
