"""Undo the person's last own write: find their newest undoable event that has not been undone yet
and run its inverse tool call, linked to it by `caused_by` (so the next undo goes one step further)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, exists, select
from sqlalchemy.orm import aliased

from brain.events.catalog import ActorT
from brain.events.store import EventRecord
from brain.i18n import tr
from brain.store.unit_of_work import Transactions
from brain.tools.executor import ToolExecutor
from brain.tools.spec import ToolResult

UNDO_WINDOW = timedelta(hours=24)

# event type -> (inverse tool, arguments from the event payload)
INVERSES: dict[str, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "DrinkLogged": ("delete_drink", lambda p: {"entry_id": p["entry_id"]}),
    "MealLogged": ("delete_meal", lambda p: {"meal_id": p["meal_id"]}),
    "TaskCreated": ("delete_task", lambda p: {"task": p["task_id"]}),
    "TaskCompleted": ("uncomplete_task", lambda p: {"task": p["task_id"]}),
    "CalendarEventCreated": ("delete_event", lambda p: {"event": p["event_id"]}),
}


async def undo_last(
    transactions: Transactions, executor: ToolExecutor, user_id: uuid.UUID, actor: ActorT
) -> ToolResult:
    later = aliased(EventRecord)
    async with transactions.read() as session:
        candidates = (await session.scalars(
            select(EventRecord)
            .where(
                EventRecord.user_id == user_id,
                EventRecord.type.in_(list(INVERSES)),
                EventRecord.occurred_at >= transactions.clock.now() - UNDO_WINDOW,
                EventRecord.actor["kind"].astext == actor.kind,
                # Undone = a later write caused by it; system reactions (e.g. GoalReached) don't count.
                ~exists().where(and_(later.user_id == user_id, later.caused_by == EventRecord.id,
                                     later.actor["kind"].astext != "system")),
            )
            .order_by(EventRecord.occurred_at.desc(), EventRecord.seq.desc())
            .limit(5)
        )).all()
    for record in candidates:
        tool, make_args = INVERSES[record.type]
        if executor.registry.get(tool) is None:
            continue
        result = await executor.execute(user_id, tool, make_args(record.payload), actor, caused_by=record.id)
        if result.ok:
            return result
        if result.error_code not in ("not_found", "nothing_to_undo", "not_done", "already_open"):
            return result
    return ToolResult.failure(tr("There is nothing of yours from the last 24 hours that I can undo."),
                              "nothing_to_undo")
