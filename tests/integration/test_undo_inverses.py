"""Every write with an inverse can be undone through the normal path (the executor, its own event linked by
`caused_by`): tasks reopened, rescheduled or updated, events moved or updated, places created or visited, drink
and nutrition goals set, goals created, paused or resumed, reminders paused or resumed. A write without one (a
task rescheduled from no due day, a first goal, an event's new end) says it cannot be undone and changes
nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import select

from brain.core import Brain
from brain.events.actor import USER
from brain.events.store import EventRecord
from brain.goals.models import Goal
from brain.modules.calendar.models import CalendarEvent
from brain.modules.drink.models import DrinkGoal
from brain.modules.food.models import NutritionGoal
from brain.modules.places.models import Place, PlaceVisit
from brain.modules.todo.models import Task
from brain.pulse.models import PulseState
from brain.undo import is_undoable, undo_event, undo_last, undone_ids


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


async def test_a_task_update_is_undone_to_the_old_title_notes_and_priority(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_task", title="Call the bank", priority=1)
    await run(brain, user.id, "update_task", task="Call the bank", title="Call the bank today",
              description="Ask about the fees", priority=3)
    assert await undo(brain, user.id, "TaskUpdated") == "TaskUpdated"
    task = await get(brain, Task, user.id)
    assert (task.title, task.description, task.priority) == ("Call the bank", None, 1)  # notes removed again

    await run(brain, user.id, "update_task", task="Call the bank", description="Account 42")
    await run(brain, user.id, "update_task", task="Call the bank", description="")  # removes the notes
    assert await undo(brain, user.id, "TaskUpdated") == "TaskUpdated"
    assert (await get(brain, Task, user.id)).description == "Account 42"


async def test_an_event_update_of_title_location_and_notes_is_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_event", title="Dentist", start_time="2026-12-02T09:00", location="Room 1")
    await run(brain, user.id, "update_event", event="Dentist", title="Dentist (check-up)", location="",
              description="Bring the card")
    assert await undo(brain, user.id, "CalendarEventUpdated") == "CalendarEventUpdated"
    event = await get(brain, CalendarEvent, user.id)
    assert (event.title, event.location, event.description) == ("Dentist", "Room 1", None)


async def test_an_event_update_of_its_end_cannot_be_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_event", title="Dentist", start_time="2026-12-02T09:00")
    await run(brain, user.id, "update_event", event="Dentist", end_time="2026-12-02T11:00")
    record = await last_event(brain, user.id, "CalendarEventUpdated")
    result = await undo_event(brain.transactions, brain.tools, user.id, record.id, USER)
    assert not result.ok and result.error_code == "not_undoable"
    assert (await get(brain, CalendarEvent, user.id)).end_time == datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def test_updates_stored_before_their_old_values_were_kept_cannot_be_undone() -> None:
    task_id = str(uuid.uuid4())
    assert not is_undoable("TaskUpdated", {"task_id": task_id, "fields": ["title"]})
    assert is_undoable("TaskUpdated", {"task_id": task_id, "fields": ["title"], "before": {"title": "Old"}})
    assert not is_undoable("DrinkGoalSet", {"drink_type": "water", "daily_ml": 2500})
    assert not is_undoable("NutritionGoalSet", {"goal_id": task_id, "daily_calories": 2000})


async def test_a_drink_goal_is_set_back_and_a_first_one_cannot_be_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "set_drink_goal", daily_ml=2500)
    first = await last_event(brain, user.id, "DrinkGoalSet")
    result = await undo_event(brain.transactions, brain.tools, user.id, first.id, USER)
    assert not result.ok and result.error_code == "not_undoable"  # no tool removes a goal
    await run(brain, user.id, "set_drink_goal", daily_ml=3000)
    assert await undo(brain, user.id, "DrinkGoalSet") == "DrinkGoalSet"
    assert (await get(brain, DrinkGoal, user.id)).daily_ml == 2500


async def test_a_nutrition_goal_is_set_back_with_its_macros(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "set_nutrition_goal", kcal=2000, protein=100)
    assert not is_undoable("NutritionGoalSet", (await last_event(brain, user.id, "NutritionGoalSet")).payload)
    await run(brain, user.id, "set_nutrition_goal", kcal=1800, fat=60)
    assert await undo(brain, user.id, "NutritionGoalSet") == "NutritionGoalSet"
    goal = await get(brain, NutritionGoal, user.id)
    assert (goal.daily_calories, goal.daily_protein, goal.daily_carbs, goal.daily_fat) == (2000, 100, None, None)


async def test_a_visit_is_undone_and_the_place_counts_follow(brain: Brain, user, clock) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_place", name="Climbing gym")
    await run(brain, user.id, "visit_place", place="Climbing gym")
    first_at = clock.now()
    clock.advance(timedelta(hours=3))
    await run(brain, user.id, "visit_place", place="Climbing gym")
    assert await undo(brain, user.id, "PlaceVisited") == "PlaceVisitDeleted"
    place = await get(brain, Place, user.id)
    assert place.visit_count == 1 and place.last_visited_at == first_at
    async with brain.transactions.read() as session:
        assert len((await session.scalars(select(PlaceVisit).where(PlaceVisit.user_id == user.id))).all()) == 1
    async with brain.transactions.read() as session:
        first = await session.scalar(select(EventRecord).where(EventRecord.user_id == user.id,
                                                               EventRecord.type == "PlaceVisited")
                                     .order_by(EventRecord.seq).limit(1))
    assert first is not None
    assert (await undo_event(brain.transactions, brain.tools, user.id, first.id, USER)).ok
    place = await get(brain, Place, user.id)
    assert place.visit_count == 0 and place.last_visited_at is None


async def test_resuming_an_open_ended_pause_is_undone_a_timed_one_is_not(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "pause_pulse")
    await run(brain, user.id, "resume_pulse")
    assert await undo(brain, user.id, "PulseResumed") == "PulsePaused"
    state = await get(brain, PulseState, user.id)
    assert state.paused and state.paused_until is None

    await run(brain, user.id, "resume_pulse")
    await run(brain, user.id, "pause_pulse", days=3)
    await run(brain, user.id, "resume_pulse")
    record = await last_event(brain, user.id, "PulseResumed")
    result = await undo_event(brain.transactions, brain.tools, user.id, record.id, USER)
    assert not result.ok and result.error_code == "not_undoable"  # pause_pulse cannot restore that exact end
    assert not (await get(brain, PulseState, user.id)).paused


async def test_undo_again_goes_one_step_further_back_instead_of_undoing_the_undo(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_task", title="Pay rent")
    await run(brain, user.id, "complete_task", task="Pay rent")
    first = await undo_last(brain.transactions, brain.tools, user.id, USER)
    assert first.ok, first
    assert (await get(brain, Task, user.id)).completed_at is None  # the completion is undone: open again
    second = await undo_last(brain.transactions, brain.tools, user.id, USER)
    assert second.ok, second
    assert await get(brain, Task, user.id) is None  # the creation is undone next, not the reopening


async def test_undo_last_stops_at_a_deletion_instead_of_reaching_past_it(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "log_drink", drink_type="water", quantity_ml=300)
    await run(brain, user.id, "create_task", title="Old plan")
    await run(brain, user.id, "delete_task", task="Old plan")
    for _ in range(2):  # asked again, still nothing older is touched
        result = await undo_last(brain.transactions, brain.tools, user.id, USER)
        assert not result.ok and result.error_code == "not_undoable"
    async with brain.transactions.read() as session:
        logged = await session.scalar(select(EventRecord.type).where(EventRecord.user_id == user.id)
                                      .order_by(EventRecord.seq.desc()).limit(1))
    assert logged == "TaskDeleted"  # no undo was written
    assert (await run(brain, user.id, "get_drink_progress"))["water_ml"] == 300


async def test_undo_last_goes_on_past_what_the_undo_button_took_back(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "create_task", title="Call Anna")
    await run(brain, user.id, "log_drink", drink_type="tea")
    await run(brain, user.id, "undo_last_drink")
    result = await undo_last(brain.transactions, brain.tools, user.id, USER)
    assert result.ok and await get(brain, Task, user.id) is None


async def test_undo_last_stops_at_a_change_it_cannot_revert_instead_of_reaching_past_it(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "log_drink", drink_type="water", quantity_ml=300)
    await run(brain, user.id, "set_drink_goal", daily_ml=2500)  # a first goal: nothing to set it back to
    result = await undo_last(brain.transactions, brain.tools, user.id, USER)
    assert not result.ok and result.error_code == "not_undoable"
    assert (await run(brain, user.id, "get_drink_progress"))["water_ml"] == 300


async def test_undoing_one_drink_of_several_logged_at_once_undoes_them_all_each_as_undone(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    await run(brain, user.id, "log_drink", drink_type="coffee", count=3)
    async with brain.transactions.read() as session:
        logged = list((await session.scalars(select(EventRecord.id).where(
            EventRecord.user_id == user.id, EventRecord.type == "DrinkLogged").order_by(EventRecord.seq))).all())
    assert len(logged) == 3
    assert (await undo_event(brain.transactions, brain.tools, user.id, logged[0], USER)).ok
    assert (await run(brain, user.id, "get_drink_progress"))["coffee_count"] == 0
    async with brain.transactions.read() as session:
        assert await undone_ids(session, user.id, logged) == set(logged)
