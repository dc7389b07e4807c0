"""Scheduled pushes over the real database with an injected clock: the morning summary's content, DST weeks in
Berlin and New York, a restart in the middle of a day, lost bookkeeping, two runs at once, missed slots inside
and outside the grace window, quiet hours, pause, a changed time or zone, scheduled rituals, and the scheduler's
job functions driven one by one."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, update

from bot.scheduler.jobs import SENT_BY_SCHEDULER, ScheduledJobs
from bot.settings import Settings
from brain.actions.models import ActionToken
from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.goals import service as goals
from brain.modules.drink import service as drink
from brain.modules.todo import service as todo
from brain.outbox.models import OutboxMessage
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.pulse.activity import pause_pulse, resume_pulse
from brain.pulse.models import Nudge
from brain.rituals.service import ritual_from_template, schedule_ritual
from brain.schedules.models import EVENING_REFLECTION, MORNING_SUMMARY, RITUAL, PushSchedule
from brain.schedules.pushes import send_due_pushes
from brain.schedules.service import set_push
from brain.schedules.weekdays import WORKDAYS
from brain.store.database import Database
from rules.wiring import build_brain

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 11, 30)
GRACE = timedelta(hours=2)


def local(day: date, hour: int, minute: int = 0, zone: ZoneInfo = BERLIN) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=zone).astimezone(UTC)


async def make_user(brain: Brain, zone: str = "Europe/Berlin", locale: str = "en") -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale=locale,
                                      default_timezone=zone)


async def pushes(brain: Brain, user: User, kind: str | None = None) -> list[OutboxMessage]:
    async with brain.transactions.read() as session:
        rows = (await session.scalars(
            select(OutboxMessage).where(OutboxMessage.user_id == user.id,
                                        OutboxMessage.kind.in_([kind] if kind else [MORNING_SUMMARY,
                                                                                    EVENING_REFLECTION, RITUAL]))
            .order_by(OutboxMessage.id))).all()
    return list(rows)


async def run_at(brain: Brain, clock: FixedClock, at: datetime):  # type: ignore[no-untyped-def]
    clock.set(at)
    return await send_due_pushes(brain, at, grace=GRACE)


async def test_the_morning_summary_brings_the_day_goals_streaks_at_risk_and_a_correlation(
        brain: Brain, clock: FixedClock, user: User) -> None:
    # Three weeks in which more coffee went with more finished tasks, and water every day until yesterday.
    for back in range(21, 0, -1):
        day = MONDAY - timedelta(days=back)
        clock.set(local(day, 9))
        async with brain.transactions.begin() as uow:
            await drink.log_drink(uow, user, USER, "water", 250)
            for _ in range(back % 4):
                await drink.log_drink(uow, user, USER, "coffee", 150)
            for i in range(2 * (back % 4) + back % 2):
                task = await todo.create_task(uow, user, USER, f"task {back}-{i}")
                await todo.complete_task(uow, user, USER, task.id)
    clock.set(local(MONDAY, 6))
    async with brain.transactions.begin() as uow:
        await todo.create_task(uow, user, USER, "Send the invoice", due_date=MONDAY)
        await goals.create_from_template(uow, user, USER, "water_8_glasses")

    assert (await run_at(brain, clock, local(MONDAY, 7, 59))).sent == 0
    report = await run_at(brain, clock, local(MONDAY, 8))
    assert report.sent == 1 and report.sent_to == {user.id}
    [summary] = await pushes(brain, user, MORNING_SUMMARY)
    assert summary.slot == "2026-11-30T08:00" and summary.platform is None
    lines = summary.text.splitlines()
    assert lines[:3] == ["Good morning!", "Here is your day.", "Due today: Send the invoice"]
    assert "Water goal: 2,000 ml" in lines and "Your goals:" in lines
    assert any(line.startswith("• 8 glasses of water a day") and "0 of 8 today" in line for line in lines)
    assert "Keep your streaks today: water 21 days · tasks 3 days" in lines
    assert any(line.startswith("What I noticed: ") and "coffee" in line for line in lines)
    # Its button opens /today, and may be pressed more than once.
    [[button]] = summary.buttons
    assert button["label"] == "Show today"
    async with brain.transactions.read() as session:
        token = await session.get(ActionToken, button["token"])
    assert token is not None and token.kind == "command" and token.payload == {"text": "/today"}
    assert not token.single_use


async def test_the_summary_speaks_the_persons_language(brain: Brain, clock: FixedClock) -> None:
    anna = await make_user(brain, locale="de")
    await run_at(brain, clock, local(MONDAY, 7))
    await run_at(brain, clock, local(MONDAY, 8))
    [summary] = await pushes(brain, anna, MORNING_SUMMARY)
    assert summary.text.startswith("Guten Morgen!")
    assert summary.buttons[0][0]["label"] == "Heute anzeigen"


@pytest.mark.parametrize(("zone", "first_day", "before", "after"), [
    # Berlin springs forward on Sunday, March 29: 08:00 is 07:00 UTC before and 06:00 UTC after.
    ("Europe/Berlin", date(2026, 3, 26), 7, 6),
    # New York falls back on Sunday, November 1: 08:00 is 12:00 UTC before and 13:00 UTC after.
    ("America/New_York", date(2026, 10, 29), 12, 13),
])
async def test_a_dst_week_sends_the_summary_once_a_local_day_at_eight(
        brain: Brain, clock: FixedClock, zone: str, first_day: date, before: int, after: int) -> None:
    clock.set(datetime.combine(first_day, time(0), tzinfo=UTC))
    person = await make_user(brain, zone)
    first_seen: dict[str, datetime] = {}
    at = datetime.combine(first_day, time(0), tzinfo=UTC)
    while at < datetime.combine(first_day + timedelta(days=7), time(0), tzinfo=UTC):
        await run_at(brain, clock, at)
        for row in await pushes(brain, person, MORNING_SUMMARY):
            first_seen.setdefault(row.slot, at)
        at += timedelta(hours=1)
    days = [first_day + timedelta(days=n) for n in range(7)]
    assert list(first_seen) == [f"{d.isoformat()}T08:00" for d in days]
    assert [first_seen[f"{d.isoformat()}T08:00"].hour for d in days] == [before] * 3 + [after] * 4
    assert all(instant.minute == 0 for instant in first_seen.values())  # in the run at its instant, not later


async def test_a_restart_in_the_middle_of_the_day_sends_nothing_twice(
        brain: Brain, clock: FixedClock, user: User, database_url: str) -> None:
    await run_at(brain, clock, local(MONDAY, 7))
    await run_at(brain, clock, local(MONDAY, 8))
    assert len(await pushes(brain, user, MORNING_SUMMARY)) == 1
    # A new process (new brain, new engine, nothing in memory) picks up at 08:00:30 and runs through the day.
    restarted = build_brain(Database(database_url, pool_size=2), clock=clock)
    try:
        at = local(MONDAY, 8) + timedelta(seconds=30)
        while at <= local(MONDAY, 23):
            clock.set(at)
            await send_due_pushes(restarted, at, grace=GRACE)
            at += timedelta(minutes=20)
    finally:
        await restarted.close()
    assert [(r.kind, r.slot) for r in await pushes(brain, user)] == [
        (MORNING_SUMMARY, "2026-11-30T08:00"), (EVENING_REFLECTION, "2026-11-30T21:00")]


async def test_lost_bookkeeping_cannot_send_a_slot_twice(brain: Brain, clock: FixedClock, user: User) -> None:
    await run_at(brain, clock, local(MONDAY, 7))
    await run_at(brain, clock, local(MONDAY, 8))
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(PushSchedule).where(PushSchedule.user_id == user.id)
                                  .values(last_slot_at=local(MONDAY, 6), next_due_at=None))
    report = await run_at(brain, clock, local(MONDAY, 8, 5))
    assert (report.sent, report.already_sent) == (0, 1)
    assert len(await pushes(brain, user, MORNING_SUMMARY)) == 1


async def test_two_runs_at_once_send_each_slot_once(
        brain: Brain, clock: FixedClock, database_url: str) -> None:
    people = [await make_user(brain) for _ in range(30)]
    await run_at(brain, clock, local(MONDAY, 7))
    other = build_brain(Database(database_url, pool_size=2), clock=clock)
    try:
        clock.set(local(MONDAY, 8))
        reports = await asyncio.gather(send_due_pushes(brain, clock.now(), grace=GRACE, batch=7),
                                       send_due_pushes(other, clock.now(), grace=GRACE, batch=7))
    finally:
        await other.close()
    assert sum(r.sent for r in reports) == 30
    for person in people:
        assert len(await pushes(brain, person, MORNING_SUMMARY)) == 1


async def test_a_slot_missed_while_down_comes_once_late_inside_the_grace_window_and_is_dropped_outside(
        brain: Brain, clock: FixedClock, user: User, caplog: pytest.LogCaptureFixture) -> None:
    await run_at(brain, clock, local(MONDAY, 7))
    # Down from 07:00 to 09:30: the 08:00 summary comes once, 90 minutes late, and not again.
    assert (await run_at(brain, clock, local(MONDAY, 9, 30))).sent == 1
    assert (await run_at(brain, clock, local(MONDAY, 9, 31))).sent == 0
    # Down from 09:31 until 10:30 the next day: that 08:00 is beyond the two hours and is dropped, with a log line.
    with caplog.at_level(logging.WARNING, logger="brain.schedules.pushes"):
        report = await run_at(brain, clock, local(MONDAY + timedelta(days=1), 10, 30))
    assert report.sent == 0 and report.missed["late"] == 2  # the evening reflection of Monday, Tuesday's summary
    assert "dropped morning_summary slot 2026-12-01T08:00" in caplog.text
    assert [r.slot for r in await pushes(brain, user, MORNING_SUMMARY)] == ["2026-11-30T08:00"]
    # Down for a week: no burst, only what is due inside the window.
    report = await run_at(brain, clock, local(MONDAY + timedelta(days=8), 8, 30))
    assert report.sent == 1
    assert [r.slot for r in await pushes(brain, user, MORNING_SUMMARY)] == ["2026-11-30T08:00", "2026-12-08T08:00"]


async def test_quiet_hours_hold_an_early_summary_until_they_end(brain: Brain, clock: FixedClock, user: User) -> None:
    async with brain.transactions.begin() as uow:
        await set_push(uow.session, user, MORNING_SUMMARY, local(MONDAY, 5), at=time(6, 30))
    assert (await run_at(brain, clock, local(MONDAY, 6, 30))).sent == 0  # quiet until 07:00
    assert (await run_at(brain, clock, local(MONDAY, 6, 59))).sent == 0
    assert (await run_at(brain, clock, local(MONDAY, 7))).sent == 1
    [row] = await pushes(brain, user, MORNING_SUMMARY)
    assert row.slot == "2026-11-30T06:30"


async def test_while_paused_nothing_is_pushed_and_nothing_comes_after_the_pause(
        brain: Brain, clock: FixedClock, user: User) -> None:
    await run_at(brain, clock, local(MONDAY, 7))
    async with brain.transactions.begin() as uow:
        await pause_pulse(uow, user, USER)
    report = await run_at(brain, clock, local(MONDAY, 8))
    assert report.sent == 0 and report.missed["paused"] == 1
    async with brain.transactions.begin() as uow:
        await resume_pulse(uow, user, USER)
    assert (await run_at(brain, clock, local(MONDAY, 8, 30))).sent == 0
    assert await pushes(brain, user, MORNING_SUMMARY) == []


async def test_a_changed_time_applies_from_the_next_occurrence(brain: Brain, clock: FixedClock, user: User) -> None:
    await run_at(brain, clock, local(MONDAY, 7))
    clock.set(local(MONDAY, 7, 45))
    async with brain.transactions.begin() as uow:
        await set_push(uow.session, user, MORNING_SUMMARY, uow.now, at=time(7, 30))
    assert (await run_at(brain, clock, local(MONDAY, 8))).sent == 0  # 07:30 today had passed when it was set
    assert (await run_at(brain, clock, local(MONDAY + timedelta(days=1), 7, 30))).sent == 1
    async with brain.transactions.begin() as uow:
        await set_push(uow.session, user, MORNING_SUMMARY, uow.now, enabled=False)
    assert (await run_at(brain, clock, local(MONDAY + timedelta(days=2), 7, 30))).sent == 0
    assert [r.slot for r in await pushes(brain, user, MORNING_SUMMARY)] == ["2026-12-01T07:30"]


async def test_a_new_time_zone_moves_the_next_summary(brain: Brain, clock: FixedClock, user: User) -> None:
    await run_at(brain, clock, local(MONDAY, 7))
    await run_at(brain, clock, local(MONDAY, 8))
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(User).where(User.id == user.id).values(timezone="America/New_York"))
    tuesday = MONDAY + timedelta(days=1)
    assert (await run_at(brain, clock, local(tuesday, 8))).sent == 0  # 08:00 in Berlin is 02:00 in New York
    assert (await run_at(brain, clock, local(tuesday, 8, zone=ZoneInfo("America/New_York")))).sent == 1
    assert [r.slot for r in await pushes(brain, user, MORNING_SUMMARY)] == ["2026-11-30T08:00", "2026-12-01T08:00"]


async def test_a_scheduled_ritual_is_pushed_on_its_days_with_start_buttons(
        brain: Brain, clock: FixedClock, user: User) -> None:
    clock.set(local(MONDAY - timedelta(days=3), 12))  # the Friday before
    async with brain.transactions.begin() as uow:
        ritual = await ritual_from_template(uow, user, USER, "morning")
        await schedule_ritual(uow, user, ritual, time(7, 30), WORKDAYS)
    saturday = MONDAY - timedelta(days=2)
    for day in (saturday, saturday + timedelta(days=1), MONDAY):
        await run_at(brain, clock, local(day, 7, 30))
    [push] = await pushes(brain, user, RITUAL)
    assert push.slot == f"{ritual.id}:2026-11-30T07:30"
    assert push.text.splitlines() == ["Time for your ritual: Morning routine", "5 steps"]
    assert [b["label"] for b in push.buttons[0]] == ["Start", "Not today"]
    async with brain.transactions.read() as session:
        token = await session.get(ActionToken, push.buttons[0][0]["token"])
    assert token is not None and token.payload == {"op": "start", "ritual_id": str(ritual.id)}


async def test_the_job_functions_run_with_the_injected_clock(brain: Brain, clock: FixedClock, user: User) -> None:
    delivered: list[int] = []

    async def deliver() -> None:
        delivered.append(1)

    jobs = ScheduledJobs(brain, Settings(), deliver=deliver)
    assert {r.name for r in jobs.engine.rules} & SENT_BY_SCHEDULER == set()
    clock.set(local(MONDAY, 7))
    await jobs.pushes()
    assert delivered == []
    clock.set(local(MONDAY, 8))
    await jobs.pushes()
    assert delivered == [1]  # the summary is handed to the adapters at once
    for minute in range(0, 61, 5):
        clock.set(local(MONDAY, 8, 0) + timedelta(minutes=minute))
        await jobs.pushes()
        await jobs.pulse_tick()
        await jobs.goal_periods()
    await jobs.memory_promotion()  # no memory in this brain: nothing to do
    await jobs.memory_decay()
    await jobs.event_retention()
    await jobs.ritual_timeouts()
    await jobs.missions()
    before = len(delivered)
    await jobs.outbox_retry()
    assert len(delivered) == before + 1
    assert [r.slot for r in await pushes(brain, user, MORNING_SUMMARY)] == ["2026-11-30T08:00"]
    async with brain.transactions.read() as session:
        rules = set((await session.scalars(select(Nudge.rule).where(Nudge.user_id == user.id))).all())
    assert not rules & SENT_BY_SCHEDULER  # the pulse no longer sends its own morning summary
