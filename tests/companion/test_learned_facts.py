"""Facts learned and used, through the scheduler's jobs with an injected clock: a week of coffee every morning and
water reminders left unanswered before 10:00 (acted on later) gives facts in the learning job, confident enough for
the model's next prompt and the morning summary; a week in which the same things hold only half the time gives
none of them; /facts lists and deletes one (not learned again); the weekly model job stores the facts the model
proposes, those below 0.5 kept out of the prompt."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot.scheduler.jobs import ScheduledJobs
from bot.settings import Settings
from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.i18n import tr
from brain.learning.models import ForgottenFact
from brain.memory.models import MemoryFact
from brain.modules.drink import service as drink
from brain.outbox.models import OutboxMessage
from brain.people.models import User
from brain.pulse.models import ACTED, EXPIRED
from brain.pulse.nudges import NewNudge, NudgeDraft, decide_nudge, insert_nudges
from brain.schedules.models import MORNING_SUMMARY
from tests.companion.conftest import system_prompt
from tests.fakes.ollama_server import FakeOllama, Script

BERLIN = ZoneInfo("Europe/Berlin")
FIRST = date(2026, 11, 2)  # a Monday, four weeks before the test clock's day
IGNORED_BEFORE_TEN = "nudge:water:ignored-before:10"
COFFEE_MORNINGS = "window:drink:coffee:morning"
COFFEE_DAILY = "frequency:drink:coffee:1/day"


def at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=BERLIN)


async def answered_nudge(brain: Brain, clock: FixedClock, user: User, when: datetime, acted: bool) -> None:
    """A water nudge sent at `when`, acted on ten minutes later or left to expire."""
    from brain.pulse.delivery import send_nudge
    from brain.pulse.models import Nudge

    clock.set(when)
    draft = NudgeDraft(type="water_reminder", priority=1, title=tr("Water"), body=tr("Water"), slot=when.isoformat())
    async with brain.transactions.begin() as uow:
        [nudge_id] = await insert_nudges(uow.session, [NewNudge(user.id, "water", draft, when, when.hour)], uow.now)
        nudge = await uow.session.get(Nudge, nudge_id)
        assert nudge is not None
        await send_nudge(uow, nudge, user, nudge.content)
    clock.set(when + (timedelta(minutes=10) if acted else timedelta(hours=2)))
    async with brain.transactions.begin() as uow:
        nudge = await uow.session.get(Nudge, nudge_id)
        assert nudge is not None
        await decide_nudge(uow, nudge, ACTED if acted else EXPIRED, USER)


async def live_three_weeks(brain: Brain, clock: FixedClock, user: User, jobs: ScheduledJobs,
                           days: range = range(22)) -> None:
    """Coffee at 7:30 every day, water reminders at 8:00 and 9:30 left unanswered, the one at 14:00 acted on; the
    scheduler's learning job at 3:30 each night."""
    for n in days:
        day = FIRST + timedelta(days=n)
        clock.set(at(day, 7, 30))
        async with brain.transactions.begin() as uow:
            await drink.log_drink(uow, user, USER, "coffee", 150)
        for hour, minute, acted in ((8, 0, False), (9, 30, False), (14, 0, True)):
            await answered_nudge(brain, clock, user, at(day, hour, minute), acted)
        clock.set(at(day + timedelta(days=1), 3, 30))
        await jobs.learning()


async def live_a_mixed_week(brain: Brain, clock: FixedClock, user: User, jobs: ScheduledJobs,
                            days: range = range(7)) -> None:
    """Coffee every day, in the morning on even days and in the evening on odd ones; the water reminders before
    10:00 acted on half the time (8:00 on even days, 9:30 on odd ones), the one at 14:00 always."""
    for n in days:
        day = FIRST + timedelta(days=n)
        clock.set(at(day, 7, 30) if n % 2 == 0 else at(day, 19, 30))
        async with brain.transactions.begin() as uow:
            await drink.log_drink(uow, user, USER, "coffee", 150)
        for hour, minute, acted in ((8, 0, n % 2 == 0), (9, 30, n % 2 == 1), (14, 0, True)):
            await answered_nudge(brain, clock, user, at(day, hour, minute), acted)
        clock.set(at(day + timedelta(days=1), 3, 30))
        await jobs.learning()


async def facts_of(brain: Brain, user: User) -> dict[str, float]:
    async with brain.transactions.read() as session:
        rows = (await session.execute(select(MemoryFact.key, MemoryFact.confidence)
                                      .where(MemoryFact.user_id == user.id))).all()
    return {key: round(confidence, 2) for key, confidence in rows}


async def first_week_done(clock: FixedClock, jobs: ScheduledJobs) -> None:
    """A week after their first coffee: the learning job's first run for them, whatever the hour."""
    clock.set(at(FIRST + timedelta(days=7), 7, 45))
    await jobs.learning()


async def test_a_week_of_habits_and_answers_becomes_facts_in_the_prompt_and_the_morning_summary(
        brain: Brain, clock: FixedClock, person, fake: FakeOllama) -> None:
    alice = person()
    clock.set(at(FIRST, 7, 0))
    await alice.send("/help")
    user = await alice.user()
    jobs = ScheduledJobs(brain, Settings())
    await live_three_weeks(brain, clock, user, jobs, range(7))
    assert await facts_of(brain, user) == {}  # the nights of the first week: not a week of data yet
    await first_week_done(clock, jobs)

    facts = await facts_of(brain, user)
    # Seven mornings of seven, one coffee on each of seven days, fourteen reminders before 10:00 left unanswered:
    # each pattern holds more often than not beyond reasonable doubt, with no number set for it.
    assert facts == {COFFEE_MORNINGS: 0.72, COFFEE_DAILY: 0.72, IGNORED_BEFORE_TEN: 0.84}
    fake.script(Script(content="Good morning!"))
    await alice.send("how am I doing?")
    prompt = system_prompt(fake.requests[-1])
    assert "Known patterns" in prompt
    assert "Mostly drinks coffee in the morning" in prompt
    assert "Drinks coffee about once a day" in prompt
    assert "Mostly ignores the water reminder before 10:00" in prompt

    clock.set(at(FIRST + timedelta(days=8), 8, 0))  # the morning summary, through the scheduler's job
    await jobs.pushes()
    async with brain.transactions.read() as session:
        summary = (await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == MORNING_SUMMARY))).one()
    assert "Water reminder: you usually leave it unanswered before 10:00\u202fAM." in summary.text


async def test_a_week_in_which_a_pattern_holds_only_half_the_time_keeps_it_out_of_the_prompt(
        brain: Brain, clock: FixedClock, person, fake: FakeOllama) -> None:
    alice = person()
    clock.set(at(FIRST, 7, 0))
    await alice.send("/help")
    user = await alice.user()
    jobs = ScheduledJobs(brain, Settings())
    await live_a_mixed_week(brain, clock, user, jobs)
    await first_week_done(clock, jobs)

    # Only the daily coffee held every day. Mornings (4 of 7) and reminders left before 10:00 (7 of 14) are no
    # pattern at all; acting on two reminders of three is one, but a week is too little to be sure of it.
    assert await facts_of(brain, user) == {COFFEE_DAILY: 0.72, "nudge:water:acts:weekdays": 0.46,
                                           "nudge:water:acts:weekends": 0.35}
    fake.script(Script(content="Hi!"))
    await alice.send("how am I doing?")
    prompt = system_prompt(fake.requests[-1])
    assert "Drinks coffee about once a day" in prompt
    assert "in the morning" not in prompt and "in the evening" not in prompt
    assert "ignores the water reminder" not in prompt and "Acts on the water reminder" not in prompt


async def test_a_habit_that_then_holds_only_half_the_time_leaves_the_prompt(
        brain: Brain, clock: FixedClock, person, fake: FakeOllama) -> None:
    alice = person()
    clock.set(at(FIRST, 7, 0))
    await alice.send("/help")
    user = await alice.user()
    jobs = ScheduledJobs(brain, Settings())
    await live_three_weeks(brain, clock, user, jobs, range(7))
    await first_week_done(clock, jobs)
    assert (await facts_of(brain, user))[COFFEE_MORNINGS] == 0.72
    await live_a_mixed_week(brain, clock, user, jobs, range(7, 14))

    # Ten mornings of fourteen is still "mostly", but no longer beyond doubt.
    assert (await facts_of(brain, user))[COFFEE_MORNINGS] < 0.5
    fake.script(Script(content="Hi!"))
    await alice.send("how am I doing?")
    prompt = system_prompt(fake.requests[-1])
    assert "Drinks coffee about once a day" in prompt
    assert "in the morning" not in prompt
    # Fourteen of twenty-one is no longer "mostly" (70 %): evidence against the fact, which goes on falling.
    await live_a_mixed_week(brain, clock, user, jobs, range(14, 21))
    assert (await facts_of(brain, user))[COFFEE_MORNINGS] < 0.4


async def test_facts_are_listed_and_a_deleted_one_is_not_learned_again(
        brain: Brain, clock: FixedClock, person, fake: FakeOllama) -> None:
    alice = person()
    clock.set(at(FIRST, 7, 0))
    await alice.send("/help")
    user = await alice.user()
    jobs = ScheduledJobs(brain, Settings())
    await live_three_weeks(brain, clock, user, jobs)
    listing = await alice.send("/facts")
    assert "You usually drink coffee in the morning. (89%, from your logs)" in listing
    assert "Water reminder: you usually leave it unanswered before 10:00\u202fAM. (94%, from your answers" in listing
    assert "You drink coffee about once a day. (89%, from your logs)" in listing
    number = next(line.split(".")[0] for line in listing.splitlines() if "coffee in the morning" in line)
    assert "won't learn that again for 90 days" in await alice.send(f"/facts delete {number}")
    clock.set(at(FIRST + timedelta(days=23), 3, 30))
    await jobs.learning()
    assert COFFEE_MORNINGS not in await facts_of(brain, user)
    async with brain.transactions.read() as session:
        forgotten = (await session.scalars(select(ForgottenFact))).one()
    assert forgotten.key == COFFEE_MORNINGS and forgotten.until > clock.now() + timedelta(days=88)


async def test_the_weekly_model_job_keeps_proposed_facts_and_only_confident_ones_reach_the_prompt(
        brain: Brain, clock: FixedClock, person, fake: FakeOllama, llm) -> None:
    alice = person()
    for day in (0, 6):
        clock.set(at(FIRST + timedelta(days=day), 9, 0))
        await alice.send("/water")
    user = await alice.user()
    proposals = {"facts": [
        {"kind": "relationship", "statement": "Calls her sister Lena every Sunday", "confidence": 0.8},
        {"kind": "preference", "statement": "Might prefer tea in the evening", "confidence": 0.3},
    ]}
    fake.script(Script(content=json.dumps(proposals)))
    clock.set(at(FIRST + timedelta(days=8), 12, 0))
    await ScheduledJobs(brain, Settings(), llm=llm).model_facts()
    request = fake.requests[-1]
    assert request["model"] == "qwen3:1.7b" and "drank water" in request["messages"][1]["content"]
    stored = {f.statement: (f.confidence, f.source, f.kind) for f in (await _facts(brain, user))}
    assert stored == {"Calls her sister Lena every Sunday": (0.8, "model", "relationship"),
                      "Might prefer tea in the evening": (0.3, "model", "preference")}
    await ScheduledJobs(brain, Settings(), llm=llm).model_facts()  # a week has not passed: nothing asked
    assert len([r for r in fake.requests if r["model"] == "qwen3:1.7b"]) == 1
    fake.script(Script(content="Hi!"))
    await alice.send("hello")
    prompt = system_prompt(fake.requests[-1])
    assert "Calls her sister Lena every Sunday" in prompt and "Might prefer tea" not in prompt


async def _facts(brain: Brain, user: User) -> list[MemoryFact]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(MemoryFact).where(MemoryFact.user_id == user.id))).all())


async def test_a_fact_number_that_is_not_in_the_list_is_refused_with_a_reason(
        brain: Brain, clock: FixedClock, person) -> None:
    alice = person()
    clock.set(at(FIRST, 7, 0))
    for reference in ("7", "99999999999999999999", "²", "x"):  # "²" is a digit to str.isdigit, not to int()
        reply = await alice.send(f"/facts delete {reference}")
        assert "There is no fact number" in reply or "Which fact?" in reply, (reference, reply)
