"""Todo module: each mutation writes its record and exactly its event(s), with the actor; a failing
transaction leaves neither; lists, "today" and "overdue" follow the person's local (Berlin) day;
tools resolve task references and refuse bad input without touching the database."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time
from typing import Any

import pytest
from sqlalchemy import func, select

from brain.clock import FixedClock
from brain.core import Brain
from brain.errors import DomainError
from brain.events.actor import USER, ai, system
from brain.events.catalog import DomainEvent
from brain.events.store import EventRecord, query_events
from brain.modules.todo import service
from brain.modules.todo.models import Task
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.reminders.models import CANCELLED, Reminder

# The clock fixture stands at Monday 2026-11-30, 08:30 in Berlin.
TODAY = date(2026, 11, 30)


async def _count(brain: Brain, model: type) -> int:
    async with brain.transactions.read() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


async def _events(brain: Brain, user: User, **filters: Any) -> list[DomainEvent]:
    async with brain.transactions.read() as s:
        return list(reversed(await query_events(s, user.id, module="todo", **filters)))


async def _task(brain: Brain, task_id: uuid.UUID) -> Task | None:
    async with brain.transactions.read() as s:
        return await s.get(Task, task_id)


async def _create(brain: Brain, user: User, title: str, **kwargs: Any) -> Task:
    async with brain.transactions.begin() as uow:
        return await service.create_task(uow, user, USER, title, **kwargs)


async def _other_user(brain: Brain) -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"other-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")


async def _titles(brain: Brain, user: User, task_filter: service.TaskFilter = "open") -> list[str]:
    async with brain.transactions.begin() as uow:
        return [r.task.title for r in await service.list_tasks(uow, user, task_filter)]


# ---- mutations and their events ---------------------------------------------------------------


async def test_create_task_writes_the_task_and_one_task_created_event_by_the_user(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe("TaskCreated", seen.append)
    task = await _create(brain, user, "  Einkaufen  ", due_date=date(2026, 12, 4), priority=2, description="Milch")
    stored = await _task(brain, task.id)
    assert stored is not None and stored.user_id == user.id
    assert (stored.title, stored.due_date, stored.priority, stored.description) == (
        "Einkaufen", date(2026, 12, 4), 2, "Milch")
    assert stored.completed_at is None
    events = await _events(brain, user)
    assert [e.type for e in events] == ["TaskCreated"]
    assert events[0].meta.actor.kind == "user" and events[0].meta.record_id == str(task.id)
    assert events[0].payload.model_dump(include={"title", "due_date", "priority", "parent_id"}) == {
        "title": "Einkaufen", "due_date": date(2026, 12, 4), "priority": 2, "parent_id": None}
    assert len(seen) == 1


@pytest.mark.parametrize(("title", "priority", "code"), [("   ", 0, "empty"), ("x" * 501, 0, "too_long"),
                                                          ("Valid", 4, "out_of_range"), ("Valid", -1, "out_of_range")])
async def test_create_task_refuses_bad_title_or_priority_and_writes_nothing(
    brain: Brain, user: User, title: str, priority: int, code: str
) -> None:
    with pytest.raises(DomainError) as refused:
        await _create(brain, user, title, priority=priority)
    assert refused.value.code == code
    assert await _count(brain, Task) == 0 and await _count(brain, EventRecord) == 0


async def test_adding_a_subtask_emits_task_created_and_subtasks_updated_on_the_parent(
    brain: Brain, user: User
) -> None:
    parent = await _create(brain, user, "Umzug")
    async with brain.transactions.begin() as uow:
        child = await service.add_subtask(uow, user, ai(rationale="split the move"), parent.id, "Kartons kaufen")
    events = await _events(brain, user)
    assert [e.type for e in events] == ["TaskCreated", "TaskCreated", "SubtasksUpdated"]
    created, counts = events[1], events[2]
    assert created.payload.parent_id == parent.id  # type: ignore[attr-defined]
    assert created.meta.actor.kind == "ai" and created.meta.actor.rationale == "split the move"
    assert counts.meta.record_id == str(parent.id)
    assert counts.payload.model_dump() == {"task_id": parent.id, "total": 1, "completed": 0}
    stored = await _task(brain, child.id)
    assert stored is not None and stored.parent_id == parent.id


async def test_a_subtask_cannot_get_subtasks_of_its_own(brain: Brain, user: User) -> None:
    parent = await _create(brain, user, "Umzug")
    async with brain.transactions.begin() as uow:
        child = await service.add_subtask(uow, user, USER, parent.id, "Kartons")
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.add_subtask(uow, user, USER, child.id, "Klebeband")
    assert refused.value.code == "too_deep"
    assert await _count(brain, Task) == 2


async def test_completing_an_overdue_task_emits_task_completed_with_was_overdue(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Steuer", due_date=date(2026, 11, 29))
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, ai(rationale="user said done"), task.id)
    stored = await _task(brain, task.id)
    assert stored is not None and stored.completed_at == datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
    latest = (await _events(brain, user))[-1]
    assert latest.type == "TaskCompleted"
    assert latest.payload.was_overdue is True  # type: ignore[attr-defined]
    assert latest.meta.actor.kind == "ai"


async def test_completing_a_task_due_today_or_undated_is_not_overdue(brain: Brain, user: User) -> None:
    due_today = await _create(brain, user, "Heute", due_date=TODAY)
    undated = await _create(brain, user, "Irgendwann")
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, due_today.id)
        await service.complete_task(uow, user, USER, undated.id)
    completed = await _events(brain, user, types="TaskCompleted")
    assert [e.payload.was_overdue for e in completed] == [False, False]  # type: ignore[attr-defined]


async def test_completing_a_done_task_is_refused_as_already_done(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Einmal")
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, task.id)
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.complete_task(uow, user, USER, task.id)
    assert refused.value.code == "already_done"
    assert len(await _events(brain, user, types="TaskCompleted")) == 1


async def test_completing_and_reopening_a_subtask_updates_the_parent_counts(brain: Brain, user: User) -> None:
    parent = await _create(brain, user, "Umzug")
    async with brain.transactions.begin() as uow:
        first = await service.add_subtask(uow, user, USER, parent.id, "Kartons")
        await service.add_subtask(uow, user, USER, parent.id, "Transporter")
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, first.id)
    async with brain.transactions.begin() as uow:
        await service.uncomplete_task(uow, user, USER, first.id)
    counts = [e.payload.model_dump(include={"total", "completed"})
              for e in await _events(brain, user, types="SubtasksUpdated")]
    assert counts == [{"total": 1, "completed": 0}, {"total": 2, "completed": 0},
                      {"total": 2, "completed": 1}, {"total": 2, "completed": 0}]


async def test_uncomplete_reopens_the_task_and_emits_task_uncompleted(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Wieder offen")
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, task.id)
    async with brain.transactions.begin() as uow:
        await service.uncomplete_task(uow, user, system("rule"), task.id)
    stored = await _task(brain, task.id)
    assert stored is not None and stored.completed_at is None
    latest = (await _events(brain, user))[-1]
    assert latest.type == "TaskUncompleted" and latest.meta.actor.kind == "system"
    assert latest.meta.actor.source == "rule"


async def test_uncompleting_an_open_task_is_refused(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Offen")
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.uncomplete_task(uow, user, USER, task.id)
    assert refused.value.code == "not_done"


async def test_update_emits_task_updated_naming_only_the_changed_fields(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Alt", priority=1)
    async with brain.transactions.begin() as uow:
        _, changed = await service.update_task(uow, user, ai(), task.id, title="Neu", priority=1,
                                               description="Details")
    assert changed == ["title", "description"]
    latest = (await _events(brain, user))[-1]
    assert latest.type == "TaskUpdated"
    assert latest.payload.fields == ["title", "description"]  # type: ignore[attr-defined]
    stored = await _task(brain, task.id)
    assert stored is not None and (stored.title, stored.description, stored.priority) == ("Neu", "Details", 1)


async def test_update_with_a_new_due_date_emits_task_rescheduled_as_well(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Arzt", due_date=date(2026, 12, 1))
    async with brain.transactions.begin() as uow:
        await service.update_task(uow, user, USER, task.id, priority=3, due_date=date(2026, 12, 3))
    events = await _events(brain, user)
    assert [e.type for e in events] == ["TaskCreated", "TaskUpdated", "TaskRescheduled"]
    assert events[1].payload.fields == ["priority"]  # type: ignore[attr-defined]
    assert events[2].payload.model_dump(include={"old_date", "new_date"}) == {
        "old_date": date(2026, 12, 1), "new_date": date(2026, 12, 3)}


async def test_update_that_only_changes_the_due_date_emits_only_task_rescheduled(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Arzt")
    async with brain.transactions.begin() as uow:
        _, changed = await service.update_task(uow, user, USER, task.id, due_date=date(2026, 12, 3))
    assert changed == ["due_date"]
    assert [e.type for e in await _events(brain, user)] == ["TaskCreated", "TaskRescheduled"]


async def test_update_to_the_same_values_emits_nothing(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Gleich", priority=2)
    async with brain.transactions.begin() as uow:
        _, changed = await service.update_task(uow, user, USER, task.id, title="Gleich", priority=2)
    assert changed == []
    assert [e.type for e in await _events(brain, user)] == ["TaskCreated"]


async def test_reschedule_emits_task_rescheduled_with_old_and_new_date(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Friseur", due_date=date(2026, 12, 1))
    async with brain.transactions.begin() as uow:
        await service.reschedule_task(uow, user, system("scheduler"), task.id, date(2026, 12, 8))
    async with brain.transactions.begin() as uow:
        await service.reschedule_task(uow, user, USER, task.id, None)
    moves = await _events(brain, user, types="TaskRescheduled")
    assert [(e.payload.old_date, e.payload.new_date) for e in moves] == [  # type: ignore[attr-defined]
        (date(2026, 12, 1), date(2026, 12, 8)), (date(2026, 12, 8), None)]
    assert moves[0].meta.actor.kind == "system"
    stored = await _task(brain, task.id)
    assert stored is not None and stored.due_date is None


async def test_deleting_a_parent_deletes_its_subtasks_with_one_task_deleted_each(brain: Brain, user: User) -> None:
    parent = await _create(brain, user, "Umzug")
    async with brain.transactions.begin() as uow:
        a = await service.add_subtask(uow, user, USER, parent.id, "Kartons")
        b = await service.add_subtask(uow, user, USER, parent.id, "Transporter")
    keep = await _create(brain, user, "Bleibt")
    async with brain.transactions.begin() as uow:
        deleted = await service.delete_task(uow, user, USER, parent.id)
    assert {t.id for t in deleted} == {parent.id, a.id, b.id}
    assert await _count(brain, Task) == 1 and await _task(brain, keep.id) is not None
    gone = await _events(brain, user, types="TaskDeleted")
    assert [e.meta.record_id for e in gone] == [str(a.id), str(b.id), str(parent.id)]
    assert (await _events(brain, user))[-1].type == "TaskDeleted"


async def test_deleting_a_subtask_updates_the_parent_counts(brain: Brain, user: User) -> None:
    parent = await _create(brain, user, "Umzug")
    async with brain.transactions.begin() as uow:
        child = await service.add_subtask(uow, user, USER, parent.id, "Kartons")
    async with brain.transactions.begin() as uow:
        await service.delete_task(uow, user, USER, child.id)
    events = await _events(brain, user)
    assert [e.type for e in events[-2:]] == ["TaskDeleted", "SubtasksUpdated"]
    assert events[-1].payload.model_dump(include={"total", "completed"}) == {"total": 0, "completed": 0}
    assert await _task(brain, parent.id) is not None


async def test_set_and_delete_reminder_emit_reminder_set_and_reminder_deleted(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Zahnarzt", due_date=date(2026, 12, 2), due_time=time(15, 0))
    async with brain.transactions.begin() as uow:
        reminder = await service.set_reminder(uow, user, USER, task.id, 60)
    assert reminder.occurrence_at == datetime(2026, 12, 2, 13, 0, tzinfo=UTC)  # 14:00 in Berlin
    async with brain.transactions.begin() as uow:
        assert [r.id for r in await service.list_reminders(uow, user, task.id)] == [reminder.id]
    async with brain.transactions.begin() as uow:
        await service.delete_reminder(uow, user, ai(), reminder.id)
    events = await _events(brain, user)
    assert [e.type for e in events] == ["TaskCreated", "ReminderSet", "ReminderDeleted"]
    assert events[1].payload.model_dump() == {"task_id": task.id, "reminder_id": reminder.id, "minutes_before": 60,
                                              "type": "notification"}
    assert events[2].meta.record_id == str(reminder.id) and events[2].meta.actor.kind == "ai"
    async with brain.transactions.read() as session:
        assert (await session.get(Reminder, reminder.id)).status == CANCELLED  # type: ignore[union-attr]


async def test_failed_transaction_leaves_neither_task_nor_event(brain: Brain, user: User) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe_all(seen.append)
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await service.create_task(uow, user, USER, "Verloren", due_date=TODAY)
            raise RuntimeError("boom after the write")
    assert await _count(brain, Task) == 0
    assert await _count(brain, EventRecord) == 0
    assert seen == []


async def test_failed_transaction_keeps_a_completed_task_open(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Noch offen")
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await service.complete_task(uow, user, USER, task.id)
            raise RuntimeError("boom after the write")
    stored = await _task(brain, task.id)
    assert stored is not None and stored.completed_at is None
    assert [e.type for e in await _events(brain, user)] == ["TaskCreated"]


# ---- lists and local days ----------------------------------------------------------------------


async def test_open_list_puts_overdue_first_then_due_date_then_priority_then_age(brain: Brain, user: User) -> None:
    async with brain.transactions.begin() as uow:
        for title, due, priority in [("undated old", None, 0), ("next week", date(2026, 12, 7), 0),
                                     ("today low", TODAY, 0), ("overdue", date(2026, 11, 20), 0),
                                     ("today high", TODAY, 3), ("undated new", None, 0)]:
            await service.create_task(uow, user, USER, title, due_date=due, priority=priority)
    async with brain.transactions.begin() as uow:
        rows = await service.list_tasks(uow, user, "open")
    assert [(r.position, r.task.title) for r in rows] == [
        (1, "overdue"), (2, "today high"), (3, "today low"), (4, "next week"), (5, "undated old"),
        (6, "undated new")]


async def test_filters_show_completed_overdue_today_and_all_with_stable_positions(brain: Brain, user: User) -> None:
    overdue = await _create(brain, user, "overdue", due_date=date(2026, 11, 29))
    today = await _create(brain, user, "today", due_date=TODAY)
    done = await _create(brain, user, "done", due_date=TODAY)
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, done.id)
    async with brain.transactions.begin() as uow:
        assert [r.task.id for r in await service.overdue(uow, user)] == [overdue.id]
        due = await service.due_today(uow, user)
        assert [(r.task.id, r.position) for r in due] == [(today.id, 2)]
        completed = await service.list_tasks(uow, user, "completed")
        assert [(r.task.id, r.position) for r in completed] == [(done.id, 3)]
        every = await service.list_tasks(uow, user, "all", limit=2)
        assert [r.task.title for r in every] == ["overdue", "today"]


async def test_today_and_overdue_follow_the_berlin_day_not_utc(brain: Brain, user: User, clock: FixedClock) -> None:
    await _create(brain, user, "due monday", due_date=date(2026, 11, 30))
    await _create(brain, user, "due tuesday", due_date=date(2026, 12, 1))
    clock.set(datetime(2026, 11, 30, 22, 59, tzinfo=UTC))  # 23:59 Monday in Berlin
    assert await _titles(brain, user, "today") == ["due monday"]
    assert await _titles(brain, user, "overdue") == []
    clock.set(datetime(2026, 11, 30, 23, 0, tzinfo=UTC))  # 00:00 Tuesday in Berlin, still Monday in UTC
    assert await _titles(brain, user, "today") == ["due tuesday"]
    assert await _titles(brain, user, "overdue") == ["due monday"]


async def test_task_stats_count_done_today_by_the_berlin_day(brain: Brain, user: User, clock: FixedClock) -> None:
    late_sunday = await _create(brain, user, "sunday night")
    early_monday = await _create(brain, user, "monday night owl")
    await _create(brain, user, "overdue", due_date=date(2026, 11, 1))
    await _create(brain, user, "today", due_date=TODAY)
    clock.set(datetime(2026, 11, 29, 22, 59, tzinfo=UTC))  # 23:59 Sunday in Berlin
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, late_sunday.id)
    clock.set(datetime(2026, 11, 29, 23, 0, tzinfo=UTC))  # 00:00 Monday in Berlin
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, early_monday.id)
    clock.set(datetime(2026, 11, 30, 7, 30, tzinfo=UTC))
    async with brain.transactions.begin() as uow:
        stats = await service.task_stats(uow, user)
    assert stats == service.TaskStats(open=2, done_today=1, overdue=1, due_today=1)


# ---- references ---------------------------------------------------------------------------------


async def test_find_task_resolves_position_id_and_title_fragment(brain: Brain, user: User) -> None:
    first = await _create(brain, user, "Milch kaufen", due_date=TODAY)
    second = await _create(brain, user, "Steuererklärung abgeben")
    async with brain.transactions.begin() as uow:
        assert (await service.find_task(uow, user, "2")).task.id == second.id
        assert (await service.find_task(uow, user, "#1")).task.id == first.id
        assert (await service.find_task(uow, user, str(second.id))).task.id == second.id
        found = await service.find_task(uow, user, "STEUER")
    assert found.task.id == second.id and found.position == 2


async def test_find_task_refuses_an_ambiguous_fragment_and_unknown_references(brain: Brain, user: User) -> None:
    await _create(brain, user, "Milch kaufen")
    await _create(brain, user, "Brot kaufen")
    async with brain.transactions.begin() as uow:
        with pytest.raises(DomainError) as ambiguous:
            await service.find_task(uow, user, "kaufen")
        assert ambiguous.value.code == "ambiguous"
        assert "1. Milch kaufen" in ambiguous.value.text.params["choices"]
        for reference in ("7", str(uuid.uuid4()), "Zahnarzt"):
            with pytest.raises(DomainError) as missing:
                await service.find_task(uow, user, reference)
            assert missing.value.code == "not_found"


async def test_an_exact_title_wins_over_other_fragment_matches(brain: Brain, user: User) -> None:
    await _create(brain, user, "Hafermilch")
    exact = await _create(brain, user, "Milch")
    async with brain.transactions.begin() as uow:
        assert (await service.find_task(uow, user, "milch")).task.id == exact.id


async def test_title_fragments_match_wildcard_characters_literally(brain: Brain, user: User) -> None:
    await _create(brain, user, "Rabatt 100% nutzen")
    await _create(brain, user, "Rabatt 1000 Punkte")
    async with brain.transactions.begin() as uow:
        assert (await service.find_task(uow, user, "100%")).task.title == "Rabatt 100% nutzen"


async def test_a_fragment_for_uncomplete_searches_done_tasks(brain: Brain, user: User) -> None:
    done = await _create(brain, user, "Fenster putzen")
    await _create(brain, user, "Fenster streichen")
    async with brain.transactions.begin() as uow:
        await service.complete_task(uow, user, USER, done.id)
    async with brain.transactions.begin() as uow:
        assert (await service.find_task(uow, user, "fenster", status="completed")).task.id == done.id


async def test_one_persons_tasks_are_invisible_to_another(brain: Brain, user: User) -> None:
    mine = await _create(brain, user, "Meine Aufgabe", due_date=TODAY)
    other = await _other_user(brain)
    await _create(brain, other, "Fremde Aufgabe", due_date=TODAY)
    for task_filter in ("open", "today", "all"):
        assert await _titles(brain, user, task_filter) == ["Meine Aufgabe"]
        assert await _titles(brain, other, task_filter) == ["Fremde Aufgabe"]
    async with brain.transactions.begin() as uow:
        assert (await service.task_stats(uow, other)).open == 1
        with pytest.raises(DomainError):
            await service.find_task(uow, other, str(mine.id))
        with pytest.raises(DomainError):
            await service.find_task(uow, other, "Meine")
    with pytest.raises(DomainError) as refused:
        async with brain.transactions.begin() as uow:
            await service.complete_task(uow, other, USER, mine.id)
    assert refused.value.code == "not_found"
    result = await brain.tools.execute(other.id, "delete_task", {"task": str(mine.id)}, USER)
    assert not result.ok and result.error_code == "not_found"
    assert await _task(brain, mine.id) is not None


# ---- through the tool executor --------------------------------------------------------------------


async def _snapshot(brain: Brain) -> tuple[int, int]:
    return await _count(brain, Task), await _count(brain, EventRecord)


async def test_create_task_tool_stores_the_task_and_returns_json_safe_data(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(user.id, "create_task", {"title": "Einkaufen", "due_date": "2026-12-04"}, USER)
    assert result.ok, result.message
    assert result.data["title"] == "Einkaufen" and result.data["due_date"] == "2026-12-04"
    assert result.data["done"] is False and result.data["priority"] == 0
    stored = await _task(brain, uuid.UUID(result.data["id"]))
    assert stored is not None and stored.due_date == date(2026, 12, 4)
    assert [e.type for e in await _events(brain, user)] == ["TaskCreated"]


async def test_task_tools_resolve_references_and_list_with_positions(brain: Brain, user: User) -> None:
    for title, due in [("Einkaufen", "tomorrow"), ("Steuer", "2026-11-01"), ("Lesen", None)]:
        assert (await brain.tools.execute(user.id, "create_task", {"title": title, "due_date": due}, USER)).ok
    listed = await brain.tools.execute(user.id, "list_tasks", {}, USER)
    assert [(t["position"], t["title"], t["due_date"]) for t in listed.data["tasks"]] == [
        (1, "Steuer", "2026-11-01"), (2, "Einkaufen", "2026-12-01"), (3, "Lesen", None)]
    assert (await brain.tools.execute(user.id, "complete_task", {"task": "2"}, USER)).data["title"] == "Einkaufen"
    assert (await brain.tools.execute(user.id, "reschedule_task", {"task": "steuer", "due_date": "today"}, USER)).ok
    updated = await brain.tools.execute(user.id, "update_task", {"task": "Lesen", "priority": "3"}, USER)
    assert updated.ok and updated.data["changed"] == ["priority"]
    sub = await brain.tools.execute(user.id, "add_subtask", {"task": "Lesen", "title": "Buch holen"}, USER)
    assert sub.ok and sub.data["parent_id"] is not None
    stats = await brain.tools.execute(user.id, "get_task_stats", {}, USER)
    assert {k: stats.data[k] for k in ("open", "done_today", "overdue", "due_today")} == {
        "open": 3, "done_today": 1, "overdue": 0, "due_today": 1}
    reopened = await brain.tools.execute(user.id, "uncomplete_task", {"task": "einkaufen"}, USER)
    assert reopened.ok and reopened.data["done"] is False
    deleted = await brain.tools.execute(user.id, "delete_task", {"task": "Lesen"}, USER)
    assert deleted.ok and len(deleted.data["deleted_ids"]) == 2
    done = await brain.tools.execute(user.id, "list_tasks", {"filter": "COMPLETED", "limit": 5}, USER)
    assert done.ok and done.data["tasks"] == []


@pytest.mark.parametrize(("tool", "arguments", "code"), [
    ("create_task", {"title": "Einkaufen", "priority": "high"}, "bad_type"),
    ("create_task", {"title": "Einkaufen", "due_date": "next-ish"}, "bad_date"),
    ("create_task", {"due_date": "2026-12-04"}, "missing_parameter"),
    ("create_task", {"title": "Einkaufen", "priority": 7}, "out_of_range"),
    ("create_task", {"title": "x" * 501}, "too_long"),
    ("create_task", {"title": "Einkaufen", "colour": "red"}, "unknown_parameter"),
    ("complete_task", {"task": "Zahnarzt"}, "not_found"),
    ("complete_task", {"task": "9"}, "not_found"),
    ("complete_task", {}, "missing_parameter"),
    ("list_tasks", {"filter": "someday"}, "bad_enum"),
    ("list_tasks", {"limit": 0}, "out_of_range"),
    ("update_task", {"task": "1"}, "nothing_to_change"),
    ("uncomplete_task", {"task": "1"}, "not_done"),
])
async def test_task_tools_refuse_bad_arguments_and_leave_the_database_unchanged(
    brain: Brain, user: User, tool: str, arguments: dict[str, Any], code: str
) -> None:
    assert (await brain.tools.execute(user.id, "create_task", {"title": "Vorhanden"}, USER)).ok
    before = await _snapshot(brain)
    result = await brain.tools.execute(user.id, tool, arguments, USER)
    assert not result.ok and result.error_code == code
    assert result.message is not None
    assert await _snapshot(brain) == before


async def test_an_ai_may_list_tasks_but_not_delete_them_on_its_own(brain: Brain, user: User) -> None:
    assert (await brain.tools.execute(user.id, "create_task", {"title": "Wichtig"}, USER)).ok
    before = await _snapshot(brain)
    assert (await brain.tools.execute(user.id, "list_tasks", {}, ai())).ok
    refused = await brain.tools.execute(user.id, "delete_task", {"task": "1"}, ai(rationale="tidy up"))
    assert not refused.ok and refused.error_code == "policy_denied"
    assert await _snapshot(brain) == before


async def test_a_tasks_reminder_follows_its_due_day_and_time_and_ends_when_the_day_goes(
        brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Bericht", due_date=date(2026, 12, 2), due_time=time(15, 0))
    async with brain.transactions.begin() as uow:
        reminder = await service.set_reminder(uow, user, USER, task.id, 30)
    async with brain.transactions.begin() as uow:
        await service.reschedule_task(uow, user, USER, task.id, date(2026, 12, 3))
    async with brain.transactions.begin() as uow:
        [moved] = await service.list_reminders(uow, user, task.id)
    assert moved.id == reminder.id and moved.due_at == datetime(2026, 12, 3, 13, 30, tzinfo=UTC)  # 14:30 Berlin
    async with brain.transactions.begin() as uow:
        await service.update_task(uow, user, USER, task.id, due_time=time(9, 0))
    async with brain.transactions.begin() as uow:
        [moved] = await service.list_reminders(uow, user, task.id)
    assert moved.due_at == datetime(2026, 12, 3, 7, 30, tzinfo=UTC)
    async with brain.transactions.begin() as uow:
        await service.reschedule_task(uow, user, USER, task.id, None)
        assert await service.list_reminders(uow, user, task.id) == []


async def test_a_reminder_needs_a_due_time_and_a_due_time_needs_a_day(brain: Brain, user: User) -> None:
    task = await _create(brain, user, "Ohne Zeit", due_date=date(2026, 12, 2))
    with pytest.raises(DomainError) as missing:
        async with brain.transactions.begin() as uow:
            await service.set_reminder(uow, user, USER, task.id, 10)
    assert missing.value.code == "no_due_time"
    with pytest.raises(DomainError) as dayless:
        await _create(brain, user, "Nur Zeit", due_time=time(9, 0))
    assert dayless.value.code == "time_without_day"
