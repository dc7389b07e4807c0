"""Every write with an inverse can be undone through the normal path (the executor, its own event linked by
`caused_by`): tasks reopened or rescheduled, events moved, places created, goals created, paused or resumed,
reminders paused. A write without one (a task rescheduled from no due day) says it cannot be undone and changes
nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import select

from brain.core import Brain
from brain.events.actor import USER
from brain.events.store import EventRecord
from brain.goals.models import Goal
from brain.modules.calendar.models import CalendarEvent
from brain.modules.places.models import Place
from brain.modules.todo.models import Task
from brain.pulse.models import PulseState
from brain.undo import undo_event, undo_last


async def run(brain: Brain, user_id: uuid.UUID, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await brain.tools.execute(user_id, tool, arguments, USER)
    assert result.ok, (tool, result)
    return dict(result.data or {})


async def last_event(brain: Brain, user_id: uuid.UUID, event_type: str) -> EventRecord:
    async with brain.transactions.read() as session:
        record = await session.scalar(select(EventRecord).where(EventRecord.user_id == user_id,
                                                                EventRecord.type == event_type)
                                      .order_by(EventRecord.seq.desc()).limit(1))
    assert record is not None, event_type
    return record


async def undo(brain: Brain, user_id: uuid.UUID, event_type: str) -> str:
    """Undoes the newest event of the type; returns the type of the event the undo wrote."""
    record = await last_event(brain, user_id, event_type)
    result = await undo_event(brain.transactions, brain.tools, user_id, record.id, USER)
    assert result.ok, result
    async with brain.transactions.read() as session:
        follower = await session.scalar(select(EventRecord.type).where(EventRecord.caused_by == record.id))
    assert follower is not None
    return str(follower)


async def get(brain: Brain, model: Any, user_id: uuid.UUID) -> Any:
    async with brain.transactions.read() as session:
        return await session.scalar(select(model).where(model.user_id == user_id))


async def test_reopening_a_task_and_rescheduling_it_are_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_task", title="Call the bank", due_date="2026-12-03")
    await run(brain, user.id, "complete_task", task="Call the bank")
    await run(brain, user.id, "uncomplete_task", task="Call the bank")
    assert await undo(brain, user.id, "TaskUncompleted") == "TaskCompleted"
    assert (await get(brain, Task, user.id)).completed_at is not None

    await run(brain, user.id, "create_task", title="Water the plants", due_date="2026-12-01")
    await run(brain, user.id, "reschedule_task", task="Water the plants", due_date="2026-12-05")
    assert await undo(brain, user.id, "TaskRescheduled") == "TaskRescheduled"
    async with brain.transactions.read() as session:
        due = await session.scalar(select(Task.due_date).where(Task.user_id == user.id,
                                                               Task.title == "Water the plants"))
    assert due == date(2026, 12, 1)


async def test_a_task_rescheduled_from_no_day_cannot_be_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_task", title="Someday")
    await run(brain, user.id, "reschedule_task", task="Someday", due_date="2026-12-05")
    record = await last_event(brain, user.id, "TaskRescheduled")
    result = await undo_event(brain.transactions, brain.tools, user.id, record.id, USER)
    assert not result.ok and result.error_code == "not_undoable"
    assert (await get(brain, Task, user.id)).due_date == date(2026, 12, 5)


async def test_moving_an_event_is_undone_to_its_old_start(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_event", title="Dentist", start_time="2026-12-02T09:00")
    await run(brain, user.id, "move_event", event="Dentist", start_time="2026-12-02T15:30")
    assert await undo(brain, user.id, "CalendarEventMoved") == "CalendarEventMoved"
    event = await get(brain, CalendarEvent, user.id)
    assert event.start_time == datetime(2026, 12, 2, 8, 0, tzinfo=UTC)  # 09:00 in Berlin
    assert event.end_time == datetime(2026, 12, 2, 9, 0, tzinfo=UTC)  # its length kept


async def test_a_created_place_is_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_place", name="Climbing gym")
    assert await undo(brain, user.id, "PlaceCreated") == "PlaceDeleted"
    assert await get(brain, Place, user.id) is None


async def test_goal_creation_pause_and_resume_are_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_goal_from_template", template="water_8_glasses")
    await run(brain, user.id, "pause_goal", goal="1")
    assert await undo(brain, user.id, "GoalPaused") == "GoalResumed"
    assert (await get(brain, Goal, user.id)).status == "active"
    await run(brain, user.id, "pause_goal", goal="1")
    await run(brain, user.id, "resume_goal", goal="1")
    assert await undo(brain, user.id, "GoalResumed") == "GoalPaused"
    assert (await get(brain, Goal, user.id)).status == "paused"
    assert await undo(brain, user.id, "GoalCreated") == "GoalAbandoned"
    assert (await get(brain, Goal, user.id)).status == "abandoned"


async def test_pausing_the_reminders_is_undone_also_by_undo_last(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "pause_pulse", days=3)
    assert (await get(brain, PulseState, user.id)).paused
    result = await undo_last(brain.transactions, brain.tools, user.id, USER)
    assert result.ok, result
    assert not (await get(brain, PulseState, user.id)).paused
