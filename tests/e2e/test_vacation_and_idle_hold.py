"""Vacation mode and the idle hold, through the scheduler's jobs with an injected clock: a streak survives a vacation
and a goal period inside it counts as paused, the morning summary in it says when it ends; a morning summary due
while the person is writing waits until they have been quiet, then comes once."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot.scheduler.jobs import ScheduledJobs
from bot.settings import Settings
from brain.clock import FixedClock
from brain.core import Brain
from brain.goals.models import GoalPeriod
from brain.outbox.models import OutboxMessage
from brain.projections.models import StreakState
from brain.schedules.models import MORNING_SUMMARY

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 11, 30)


def at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=BERLIN)


async def summaries(brain: Brain) -> list[OutboxMessage]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == MORNING_SUMMARY)
                                           .order_by(OutboxMessage.id))).all())


async def run_day(jobs: ScheduledJobs, clock: FixedClock, day: date) -> None:
    """The scheduler's minute jobs at a few moments of a day: the morning, noon, the night."""
    for hour in (0, 8, 12, 23):
        clock.set(at(day, hour, 30 if hour == 23 else 0))
        await jobs.pushes()
        await jobs.goal_periods()


async def test_a_streak_survives_a_vacation_and_its_goal_periods_count_as_paused(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    jobs = ScheduledJobs(brain, Settings(idle_hold_minutes=0))
    clock.set(at(MONDAY, 7))
    assert "8" in await alice.send("/goal 8 glasses of water a day")
    for n in range(3):  # Monday to Wednesday: water every day
        day = MONDAY + timedelta(days=n)
        await run_day(jobs, clock, day)
        clock.set(at(day, 9))
        await alice.send("/water 250")
    clock.set(at(MONDAY + timedelta(days=2), 10))
    reply = await alice.send("/vacation 3.12.-6.12.")
    assert "Vacation from" in reply and "streaks and goals are kept" in reply
    for n in range(3, 7):  # Thursday to Sunday away: no water, no reminders
        await run_day(jobs, clock, MONDAY + timedelta(days=n))
    vacation_summary = (await summaries(brain))[-1]
    assert "You're on vacation until" in vacation_summary.text
    assert vacation_summary.slot.startswith("2026-12-06")

    back = MONDAY + timedelta(days=7)
    await run_day(jobs, clock, back)
    clock.set(at(back, 9))
    await alice.send("/water 250")
    async with brain.transactions.read() as session:  # she is the only person here
        water = (await session.scalars(select(StreakState).where(StreakState.streak == "water"))).one()
        periods = {p.period_start: p for p in (await session.scalars(select(GoalPeriod))).all()}
    assert water.current == 4 and water.last_active == back  # bridged, not broken
    assert "Water: 4 days" in await alice.send("/streaks")
    away = [periods[MONDAY + timedelta(days=n)] for n in range(3, 7)]
    assert all(p.paused and p.closed_at is not None for p in away)
    assert not periods[MONDAY].paused  # a day before it failed as it was


async def test_a_morning_summary_due_during_a_conversation_waits_then_comes_once(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    jobs = ScheduledJobs(brain, Settings(idle_hold_minutes=10))
    clock.set(at(MONDAY, 7))
    await alice.send("/help")
    await jobs.pushes()  # gives her the daily pushes
    for minute, writes in ((55, True), (59, True)):
        clock.set(at(MONDAY, 7, minute))
        if writes:
            await alice.send("/today")
    for moment, writes in (((8, 0), False), ((8, 5), False), ((8, 6), True), ((8, 10), False), ((8, 15), False)):
        clock.set(at(MONDAY, *moment))
        if writes:
            await alice.send("/water 250")
        await jobs.pushes()
        assert await summaries(brain) == [], moment  # she is writing: it waits
    came: list[tuple[int, int]] = []
    for moment in ((8, 16), (8, 17), (8, 30), (9, 0), (12, 0)):
        clock.set(at(MONDAY, *moment))
        await jobs.pushes()
        came += [moment] * (len(await summaries(brain)) - len(came))
    assert came == [(8, 16)]  # once, as soon as she had been quiet for ten minutes
    [summary] = await summaries(brain)
    assert summary.slot == "2026-11-30T08:00"


async def test_a_conversation_that_goes_on_past_the_grace_window_gets_the_summary_anyway(
        person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    grace = Settings().scheduler_grace_minutes
    jobs = ScheduledJobs(brain, Settings(idle_hold_minutes=10))
    clock.set(at(MONDAY, 7))
    await alice.send("/help")
    await jobs.pushes()
    end = at(MONDAY, 8) + timedelta(minutes=grace)  # the end of the summary's grace window
    moment, came = at(MONDAY, 7, 58), []
    while moment < end + timedelta(minutes=5):
        clock.set(moment)
        await alice.send("/today")  # she never stops writing
        await jobs.pushes()
        came += [moment] * (len(await summaries(brain)) - len(came))
        # Every ten minutes, and every minute (as the scheduler runs) near the end of the window.
        moment += timedelta(minutes=1 if moment >= end - timedelta(minutes=5) else 10)
    assert came == [end - timedelta(minutes=1)]  # it went once, in the last run before it would have been late


async def test_a_vacation_given_only_its_end_runs_from_today(person) -> None:
    alice = person()
    # Monday, November 30: until Friday is five days from today, as the pause itself is stored.
    assert (await alice.send("/vacation until Friday")).startswith("Vacation from Mon, Nov 30 to Fri, Dec 4:")
