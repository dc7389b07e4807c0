"""Missions: the cadence phrases and next runs (pure), /mission and /missions with their buttons, a due run
that plans through proposals and is recorded as an iteration, two runners that never overlap, rejection
feedback in the next run, and the step guardrail."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from bot.commands.missions import CadenceError, parse_mission, run_missions
from brain.clock import FixedClock
from brain.companion.missions import (
    MAX_PLAN_STEPS,
    Cadence,
    next_run,
    run_due_missions,
)
from brain.companion.models import Mission, MissionIteration, Proposal
from brain.core import Brain
from brain.outbox.models import OutboxMessage
from brain.tools import proposals
from tests.companion.conftest import system_prompt, tool_messages
from tests.fakes.ollama_server import FakeOllama, Script, call

BERLIN = ZoneInfo("Europe/Berlin")


# ---- cadence phrases and next runs ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, objective, cadence", [
    ("plan my week every sunday 18:00", "plan my week", Cadence("weekly", hour=18, weekday=6)),
    ("Woche planen jeden Sonntag um 18 Uhr", "Woche planen", Cadence("weekly", hour=18, weekday=6)),
    ("check my water daily 07:30", "check my water", Cadence("daily", hour=7, minute=30)),
    ("Wasser prüfen täglich 7.30", "Wasser prüfen", Cadence("daily", hour=7, minute=30)),
    ("look at my tasks every 2 hours", "look at my tasks", Cadence("interval", minutes=120)),
    ("look at my tasks every hour", "look at my tasks", Cadence("interval", minutes=60)),
    ("tidy up alle 30 Minuten", "tidy up", Cadence("interval", minutes=30)),
    ("review goals manual", "review goals", Cadence("manual")),
    ("review goals", "review goals", Cadence("manual")),
    ("call mom fridays at 6pm", "call mom", Cadence("weekly", hour=18, weekday=4)),
])
def test_cadence_phrases(text: str, objective: str, cadence: Cadence) -> None:
    assert parse_mission(text) == (objective, cadence)


@pytest.mark.parametrize("text", ["spam me every 5 minutes", "plan daily 25:00", "wake me daily 13pm"])
def test_impossible_cadences_are_refused(text: str) -> None:
    with pytest.raises(CadenceError):
        parse_mission(text)


@given(st.integers(0, 23), st.integers(0, 59), st.sampled_from(["daily", "täglich", "every day"]))
def test_any_daily_time_reads_back(hour: int, minute: int, word: str) -> None:
    assert parse_mission(f"do it {word} {hour}:{minute:02d}") == ("do it", Cadence("daily", hour=hour, minute=minute))


def test_next_runs_in_the_persons_zone() -> None:
    monday = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)  # 08:30 in Berlin
    sunday = next_run(Cadence("weekly", hour=18, weekday=6), monday, BERLIN)
    assert sunday == datetime(2026, 12, 6, 18, 0, tzinfo=BERLIN)
    assert next_run(Cadence("daily", hour=8, minute=0), monday, BERLIN) == datetime(2026, 12, 1, 8, 0, tzinfo=BERLIN)
    assert next_run(Cadence("daily", hour=9), monday, BERLIN) == datetime(2026, 11, 30, 9, 0, tzinfo=BERLIN)
    assert next_run(Cadence("interval", minutes=120), monday, BERLIN) == monday + timedelta(hours=2)
    assert next_run(Cadence("manual"), monday, BERLIN) is None
    # Across the change to summer time the run stays at 18:00 local.
    before = datetime(2027, 3, 27, 18, 30, tzinfo=BERLIN)
    assert next_run(Cadence("daily", hour=18), before, BERLIN) == datetime(2027, 3, 28, 18, 0, tzinfo=BERLIN)
    assert next_run(Cadence("daily", hour=18), before, BERLIN).utcoffset() == timedelta(hours=2)  # type: ignore[union-attr]


# ---- the commands --------------------------------------------------------------------------------------------
async def test_a_mission_is_created_listed_and_paused_with_buttons(brain: Brain, person) -> None:
    alice = person()
    reply = await alice.send("/mission plan my week every sunday 18:00")
    assert "Mission created: plan my week" in reply and "every Sunday at 6:00" in reply
    async with brain.transactions.read() as session:
        mission = (await session.scalars(select(Mission))).one()
    assert mission.state == "active"
    assert mission.next_run_at == datetime(2026, 12, 6, 18, 0, tzinfo=BERLIN)
    listing = await alice.send("/missions")
    assert "1. plan my week" in listing and "next run" in listing
    assert {"Pause", "Run now", "Delete"} <= set(alice.buttons())
    assert "Paused" in await alice.press("Pause")
    assert "paused" in await alice.send("/missions")
    assert "Resume" in alice.buttons()


async def test_a_foreign_mission_button_changes_nothing(brain: Brain, person) -> None:
    alice, mallory = person(), person()
    await alice.send("/mission plan my week every sunday 18:00")
    await alice.send("/missions")
    token = alice.buttons()["Delete"]
    mallory.last = []
    assert "not valid" in (await mallory.dialog.handle(mallory.inbound(action=token)))[0].text
    async with brain.transactions.read() as session:
        assert len((await session.scalars(select(Mission))).all()) == 1


# ---- running -------------------------------------------------------------------------------------------------
def planner(body: dict[str, Any]) -> Script:
    if not tool_messages(body):
        return Script(tool_calls=[call("get_task_stats"), call("create_task", title="Plan the week")])
    return Script(content="I looked at your tasks and proposed a planning task.")


async def due_mission(brain: Brain, person, clock: FixedClock) -> tuple[Any, Mission]:
    alice = person()
    await alice.send("/mission plan my week every sunday 18:00")
    async with brain.transactions.read() as session:
        mission = (await session.scalars(select(Mission))).one()
    clock.set(datetime(2026, 12, 6, 18, 1, tzinfo=BERLIN))
    return alice, mission


async def test_a_due_mission_runs_proposes_and_is_recorded(brain: Brain, person, clock: FixedClock,
                                                           fake: FakeOllama) -> None:
    alice, mission = await due_mission(brain, person, clock)
    fake.default = planner
    assert await run_missions(brain, clock.now() - timedelta(days=1)) == []  # not due yet
    [run] = await run_missions(brain, clock.now())
    assert run.status == "awaiting-review" and len(run.proposals) == 1
    async with brain.transactions.read() as session:
        iteration = (await session.scalars(select(MissionIteration))).one()
        refreshed = await session.get(Mission, mission.id)
        proposal = (await session.scalars(select(Proposal))).one()
        outbox = (await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == "mission")
                                        .order_by(OutboxMessage.id))).all()
    assert iteration.status == "awaiting-review" and iteration.finished_at is not None
    assert [(s["tool"], s["status"]) for s in iteration.plan] == [("get_task_stats", "approved"),
                                                                 ("create_task", "staged")]
    assert iteration.summary == "I looked at your tasks and proposed a planning task."
    assert proposal.mission_id == mission.id and proposal.actor["iteration_id"] == str(iteration.id)
    assert refreshed is not None and refreshed.running_since is None
    assert refreshed.next_run_at == datetime(2026, 12, 13, 18, 0, tzinfo=BERLIN)
    assert "Mission “plan my week”: I looked at your tasks" in outbox[0].text
    assert [b["label"] for b in outbox[1].buttons[0]] == ["Approve", "Reject"]
    assert "Run the mission now: plan my week" in fake.sent_text(0)
    assert len(fake.requests[0]["tools"]) > 10
    await alice.send("/today")  # the person's chat is unaffected


async def test_two_runners_never_run_one_mission_twice(brain: Brain, person, clock: FixedClock,
                                                        fake: FakeOllama) -> None:
    await due_mission(brain, person, clock)
    fake.default = Script(content="Nothing to do.", delay_s=0.2)
    assert brain.companion is not None
    first, second = await asyncio.gather(run_due_missions(brain, brain.companion.llm, clock.now()),
                                         run_due_missions(brain, brain.companion.llm, clock.now()))
    assert len(first) + len(second) == 1
    assert len(fake.requests) == 1
    async with brain.transactions.read() as session:
        assert len((await session.scalars(select(MissionIteration))).all()) == 1
    # Once finished, it is not due again until next Sunday.
    assert await run_due_missions(brain, brain.companion.llm, clock.now() + timedelta(minutes=5)) == []


async def test_a_claimed_mission_is_skipped_until_its_claim_is_stale(brain: Brain, person, clock: FixedClock,
                                                                     fake: FakeOllama) -> None:
    _, mission = await due_mission(brain, person, clock)
    async with brain.transactions.begin() as uow:
        row = await uow.session.get(Mission, mission.id)
        assert row is not None
        row.running_since = clock.now()  # another runner holds it
    assert brain.companion is not None
    assert await run_due_missions(brain, brain.companion.llm, clock.now()) == []
    assert len(await run_due_missions(brain, brain.companion.llm, clock.now() + timedelta(hours=1))) == 1


async def test_rejection_reasons_reach_the_next_run(brain: Brain, person, clock: FixedClock,
                                                   fake: FakeOllama) -> None:
    alice, _ = await due_mission(brain, person, clock)
    fake.default = planner
    await run_missions(brain, clock.now())
    async with brain.transactions.read() as session:
        proposal = (await session.scalars(select(Proposal))).one()
    await proposals.reject(brain, (await alice.user()).id, proposal.id, "I plan on Mondays")
    clock.set(datetime(2026, 12, 13, 18, 1, tzinfo=BERLIN))
    fake.default = Script(content="Nothing new.")
    await run_missions(brain, clock.now())
    prompt = system_prompt(fake.requests[-1])
    assert "I plan on Mondays" in prompt and "Earlier runs of this mission" in prompt
    async with brain.transactions.read() as session:
        first = (await session.scalars(select(MissionIteration).order_by(MissionIteration.started_at))).first()
    assert first is not None and "I plan on Mondays" in (first.user_feedback or "")


async def test_a_run_stops_at_the_step_limit(brain: Brain, person, clock: FixedClock, fake: FakeOllama) -> None:
    await due_mission(brain, person, clock)
    fake.default = Script(tool_calls=[call("get_task_stats")] * 10)
    [run] = await run_missions(brain, clock.now())
    assert run.status == "approved"
    async with brain.transactions.read() as session:
        iteration = (await session.scalars(select(MissionIteration))).one()
    done = [s for s in iteration.plan if s["status"] == "approved"]
    refused = [s for s in iteration.plan if s["error"] == "step_limit"]
    assert len(done) == MAX_PLAN_STEPS and len(refused) == 5
    assert len(fake.requests) == 4  # three rounds of ten, then the answer without tools


async def test_a_manual_mission_runs_after_run_now(brain: Brain, person, clock: FixedClock,
                                                  fake: FakeOllama) -> None:
    alice = person()
    reply = await alice.send("/mission review my goals")
    assert "only when you start it" in reply
    assert await run_missions(brain, clock.now()) == []
    assert "runs within the next minute" in await alice.press("Run now")
    fake.default = Script(content="Reviewed.")
    [run] = await run_missions(brain, clock.now())
    assert run.status == "approved" and run.summary == "Reviewed."
    async with brain.transactions.read() as session:
        mission = (await session.scalars(select(Mission))).one()
    assert mission.next_run_at is None


async def test_a_mission_without_a_model_fails_its_iteration_and_is_freed(brain: Brain, person, clock: FixedClock,
                                                                         fake: FakeOllama) -> None:
    _, mission = await due_mission(brain, person, clock)
    fake.default = Script(status=500)
    [run] = await run_missions(brain, clock.now())
    assert run.status == "failed"
    # In the person's words, not the client's English for whoever runs the server.
    assert run.summary == ("The mission could not run: the language model could not be reached; it tries again at "
                           "its next time.")
    async with brain.transactions.read() as session:
        row = await session.get(Mission, mission.id)
    assert row is not None and row.running_since is None and row.next_run_at is not None
