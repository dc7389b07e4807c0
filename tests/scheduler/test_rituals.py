"""Rituals below the dialog: the templates are valid and use every step type, drafting from short lines, the
draft_ritual tool for the person and for the companion (a proposal that saves the ritual once approved), the
state machine's timeout and one running run per person, and the day's log."""

from __future__ import annotations

from datetime import date, time, timedelta

import pytest
from sqlalchemy import func, select

from brain.clock import FixedClock
from brain.core import Brain
from brain.errors import DomainError
from brain.events.actor import USER, ai
from brain.modules.drink.models import DrinkEntry
from brain.people.models import User
from brain.rituals.drafting import parse_draft
from brain.rituals.models import ABANDONED, FINISHED, RUNNING, STOPPED, Ritual, RitualLog, RitualRun
from brain.rituals.runner import RitualRunner
from brain.rituals.service import list_rituals, ritual_from_template
from brain.rituals.steps import STEP_TYPES, dump_steps, parse_steps
from brain.rituals.templates import TEMPLATES
from brain.schedules.models import RITUAL, PushSchedule
from brain.schedules.weekdays import WORKDAYS

MONDAY = date(2026, 11, 30)


def test_templates_are_valid_and_together_use_every_step_type() -> None:
    assert len(TEMPLATES) >= 5
    used = set()
    for template in TEMPLATES.values():
        steps = parse_steps(dump_steps(list(template.steps)))  # survive the round trip through JSON
        assert steps == list(template.steps)
        used |= {s.type for s in steps}
    assert used == set(STEP_TYPES)
    assert {"morning", "evening", "drink_check"} <= set(TEMPLATES)


def test_a_draft_is_read_line_by_line_with_optional_labels() -> None:
    steps = parse_draft("water 300 | Start with water\nshow calendar; mood\nask What went well?\n"
                        "task One thing for tomorrow\ncheck Keys, Phone\nbreathe 4-7-8 3\nlog water")
    assert [s.type for s in steps] == ["tool_call", "info_display", "mood_picker", "text_input", "text_input",
                                       "checklist", "breathing", "number_input"]
    assert steps[0].label == "Start with water"
    assert steps[0].model_dump()["args"] == {"drink_type": "water", "quantity_ml": 300}
    assert steps[4].model_dump()["tool"] == "create_task"
    assert [i["label"] for i in steps[5].model_dump()["items"]] == ["Keys", "Phone"]
    with pytest.raises(DomainError) as bad:
        parse_draft("water\nfly to the moon")
    assert bad.value.code == "bad_step" and bad.value.text.params["number"] == 2


async def test_draft_ritual_as_the_person_saves_and_schedules_it(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(user.id, "draft_ritual", {
        "title": "Morgenstart", "steps": "water 250\nshow tasks\nmood", "time": "07:30", "days": "weekdays"}, USER)
    assert result.ok, result.message
    assert result.data["steps"] == 3 and result.data["weekdays"] == WORKDAYS
    async with brain.transactions.read() as session:
        [listed] = await list_rituals(session, user.id)
        schedule = await session.get(PushSchedule, (user.id, RITUAL, str(listed.ritual.id)))
    assert listed.ritual.title == "Morgenstart" and listed.ritual.source == "user"
    assert schedule is not None and schedule.at == time(7, 30) and schedule.weekdays == WORKDAYS


async def test_draft_ritual_refuses_a_step_with_a_destructive_tool_or_bad_days(brain: Brain, user: User) -> None:
    bad_days = await brain.tools.execute(user.id, "draft_ritual", {"title": "X", "steps": "mood",
                                                                   "time": "07:00", "days": "someday"}, USER)
    assert not bad_days.ok and bad_days.error_code == "bad_days"
    async with brain.transactions.begin() as uow:
        from brain.rituals.service import create_ritual
        from brain.rituals.steps import ToolCallStep

        with pytest.raises(DomainError) as refused:
            await create_ritual(uow, user, USER, title="Clean up",
                                steps=[ToolCallStep(label="Delete", tool="delete_task", args={"task": "1"})])
    assert refused.value.code == "bad_tool"
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(Ritual)) == 0


async def test_the_companion_drafting_a_ritual_makes_a_proposal_that_saves_it_when_approved(
        brain: Brain, user: User) -> None:
    proposals = pytest.importorskip("brain.tools.proposals")
    result = await brain.tools.execute(user.id, "draft_ritual", {
        "title": "Morning routine", "steps": "water 250\nshow calendar\nshow tasks\nmood", "time": "07:00"},
        ai("The person asked for a morning routine"))
    assert result.ok and result.data.get("status") == "proposed", result
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(Ritual)) == 0  # nothing saved yet
    decision = await proposals.approve(brain, user.id, result.data["proposal_id"])
    assert decision.ok, decision.message
    async with brain.transactions.read() as session:
        [listed] = await list_rituals(session, user.id)
    assert listed.ritual.source == "ai" and len(listed.ritual.steps) == 4
    assert listed.schedule is not None and listed.schedule.at == time(7, 0)


async def test_one_running_run_per_person_and_another_start_stops_the_first(brain: Brain, user: User) -> None:
    runner = RitualRunner(brain)
    morning = await runner.start_template(user, "morning")
    assert morning.progress is not None and morning.progress.index == 0
    again = await runner.start_template(user, "morning")
    assert again.progress is not None and again.progress.run.id == morning.progress.run.id  # resumed, not new
    check = await runner.start_template(user, "drink_check")
    assert check.progress is not None and check.progress.passed == [0] and check.progress.index == 1
    async with brain.transactions.read() as session:
        statuses = dict((await session.execute(select(RitualRun.id, RitualRun.status))).all())
    assert statuses == {morning.progress.run.id: STOPPED, check.progress.run.id: RUNNING}


async def test_a_run_left_alone_is_abandoned_after_the_timeout_with_its_partial_log(
        brain: Brain, clock: FixedClock, user: User) -> None:
    runner = RitualRunner(brain, timeout=timedelta(hours=2))
    started = await runner.start_template(user, "morning")
    assert started.progress is not None
    run_id = started.progress.run.id
    done = await runner.answer(user, run_id, 0)  # the glass of water; the info steps pass by themselves
    assert done.progress is not None and done.progress.index == 4 and done.progress.passed == [1, 2, 3]
    clock.advance(timedelta(hours=2, minutes=1))
    assert await runner.current(user) is None
    assert await runner.abandon_stale(clock.now()) == 1
    late = await runner.answer(user, run_id, 4, value=4)
    assert late.refused is not None and "over" in late.refused.msgid
    async with brain.transactions.read() as session:
        run = await session.get(RitualRun, run_id)
        [entry] = (await session.scalars(select(RitualLog))).all()
        water = await session.scalar(select(func.sum(DrinkEntry.quantity_ml)))
    assert run is not None and run.status == ABANDONED
    assert (entry.day, entry.completed_steps, entry.total_steps, entry.completed_at) == (MONDAY, 4, 5, None)
    assert water == 250


async def test_the_days_log_keeps_the_best_run_and_marks_completion(
        brain: Brain, clock: FixedClock, user: User) -> None:
    runner = RitualRunner(brain)
    first = await runner.start_template(user, "drink_check")
    assert first.progress is not None
    await runner.answer(user, first.progress.run.id, 1, skip=True)
    second = await runner.start_template(user, "drink_check")
    assert second.progress is not None and second.progress.run.id != first.progress.run.id
    out_of_range = await runner.answer(user, second.progress.run.id, 1, value=5000)
    assert out_of_range.refused is not None and out_of_range.progress is not None
    finished = await runner.answer(user, second.progress.run.id, 1, value=330)
    assert finished.progress is not None and finished.progress.run.status == FINISHED
    assert finished.said and finished.refused is None  # the drink tool's own reply
    async with brain.transactions.read() as session:
        [entry] = (await session.scalars(select(RitualLog))).all()
    assert (entry.completed_steps, entry.total_steps) == (2, 2)
    assert entry.completed_at == clock.now()


async def test_a_ritual_from_a_template_is_made_once(brain: Brain, user: User) -> None:
    async with brain.transactions.begin() as uow:
        first = await ritual_from_template(uow, user, USER, "evening")
        second = await ritual_from_template(uow, user, USER, "evening")
    assert first.id == second.id and first.title == "Evening routine"

