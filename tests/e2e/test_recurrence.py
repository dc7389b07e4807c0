"""Repeating appointments, tasks and reminders from the message on: a weekly series in Berlin and in New York shown
by /event and /today at 9:00 on its days across both DST changes and kept a year ahead by the scheduler's daily job;
deleting one occurrence or the series; a monthly task done per occurrence; a daily reminder arriving once a day."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from bot.scheduler.jobs import ScheduledJobs
from bot.settings import Settings
from brain.clock import FixedClock
from brain.core import Brain
from brain.modules.calendar.models import CalendarEvent, CalendarSeries
from brain.modules.todo.models import Task
from brain.outbox.models import OutboxMessage
from brain.reminders.sending import REMINDER_KIND

BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")


async def occurrence_starts(brain: Brain, zone: ZoneInfo, title: str) -> list[datetime]:
    async with brain.transactions.read() as session:
        rows = (await session.scalars(select(CalendarEvent.start_time).where(CalendarEvent.title == title)
                                      .order_by(CalendarEvent.start_time))).all()
    return [r.astimezone(zone) for r in rows]


async def test_a_weekly_series_shows_its_occurrences_at_nine_in_two_zones_across_dst(
        person, brain: Brain, clock: FixedClock) -> None:
    # Set up on Monday 30 November 2026; both zones change their clocks in March 2027 (New York on the 14th,
    # Berlin on the 28th) and back in the autumn.
    berliner, new_yorker = person(), person()
    await new_yorker.send("/tz America/New_York")
    assert "Added Team meeting, every Monday, from" in await berliner.send("/event every Monday 9:00 Team meeting")
    assert "every Monday" in await new_yorker.send("/event every Monday 9:00 Standup")
    for title, zone in (("Team meeting", BERLIN), ("Standup", NEW_YORK)):
        starts = await occurrence_starts(brain, zone, title)
        assert {(s.weekday(), s.time()) for s in starts} == {(0, time(9, 0))}
        # A year ahead, every Monday (the one in progress or ahead on the day it was set, on).
        assert len(starts) in (52, 53) and starts[0].date() in (date(2026, 11, 30), date(2026, 12, 7))
    march = {s.date() for s in await occurrence_starts(brain, BERLIN, "Team meeting") if s.month == 3}
    assert {date(2027, 3, 22), date(2027, 3, 29)} <= march

    # The scheduler's daily job keeps them a year ahead: run it 100 days later.
    clock.set(datetime(2027, 3, 10, 3, 30, tzinfo=UTC))
    await ScheduledJobs(brain, Settings()).calendar_series()
    async with brain.transactions.read() as session:
        made_until = (await session.scalars(select(CalendarSeries.made_until))).all()
    assert all(m > clock.now() + timedelta(days=360) for m in made_until)

    # /today on the Monday after each clock change says 9:00 in each person's own zone.
    for day, zone, who, title in ((date(2027, 3, 15), NEW_YORK, new_yorker, "Standup"),
                                  (date(2027, 3, 29), BERLIN, berliner, "Team meeting"),
                                  (date(2026, 12, 7), BERLIN, berliner, "Team meeting")):
        clock.set(datetime.combine(day, time(7, 0), tzinfo=zone))
        assert f"9:00\u202fAM {title}" in await who.send("/today"), (day, title)
        assert f"9:00\u202fAM {title} 🔁" in await who.send("/event")


async def test_deleting_asks_this_one_or_the_series(person, brain: Brain) -> None:
    bert = person(language="de")
    await bert.send("/termin jeden zweiten Dienstag 18:00 Yoga")
    starts = await occurrence_starts(brain, BERLIN, "Yoga")
    assert [s.date() for s in starts[:3]] == [date(2026, 12, 1), date(2026, 12, 15), date(2026, 12, 29)]
    assert "Yoga wiederholt sich" in await bert.send("/termin löschen Yoga")
    assert "die Serie geht weiter" in await bert.press(bert.buttons()["Nur diesen"])
    assert [s.date() for s in (await occurrence_starts(brain, BERLIN, "Yoga"))[:2]] == [date(2026, 12, 15),
                                                                                        date(2026, 12, 29)]
    await bert.send("/termin löschen Yoga")
    assert "Serie Yoga gelöscht" in await bert.press(bert.buttons()["Die ganze Serie"])
    assert await occurrence_starts(brain, BERLIN, "Yoga") == []
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(CalendarSeries)) == 0


async def test_a_monthly_task_is_done_per_occurrence(person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    assert "Added the task rent, monthly on day 1, first due Tue, Dec 1." in await alice.send(
        "/task rent monthly on the 1st")
    assert "1. rent 🔁 (tomorrow)" in await alice.send("/tasks")
    assert "Done: rent. Next time: Fri, Jan 1, 2027." in await alice.send("/done rent")
    clock.set(datetime(2027, 2, 3, 9, tzinfo=BERLIN))  # January's was missed: the next is March's, not a backlog
    assert "Next time: Mon, Mar 1" in await alice.send("/done rent")
    assert "Skip only this one" in await alice.send("/task delete rent")
    assert "next time: Thu, Apr 1" in await alice.press(alice.buttons()["Only this one"])
    await alice.send("/task delete rent")
    assert "it no longer repeats" in await alice.press(alice.buttons()["The whole series"])
    async with brain.transactions.read() as session:
        tasks = (await session.scalars(select(Task).order_by(Task.due_date))).all()
    assert [(t.due_date.isoformat(), t.completed_at is not None) for t in tasks if t.due_date] == [
        ("2026-12-01", True), ("2027-01-01", True)]


async def test_a_daily_reminder_arrives_once_a_day_at_its_time(person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    assert "Reminder set every day, starting tomorrow at 8:00\u202fAM: Take pills" in await alice.send(
        "remind me every day at 8 to take pills")
    jobs = ScheduledJobs(brain, Settings())
    for day in (1, 2, 3):
        for minute in (-1, 0, 1):
            clock.set(datetime(2026, 12, day, 8, 0, tzinfo=BERLIN) + timedelta(minutes=minute))
            await jobs.reminders()
    async with brain.transactions.read() as session:
        sent = (await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == REMINDER_KIND)
                                      .order_by(OutboxMessage.id))).all()
    assert [m.text for m in sent] == ["⏰ Take pills"] * 3
    today = {b["label"]: b["token"] for row in sent[-1].buttons for b in row}
    assert "Done: Take pills." in await alice.press(today["✓ Done"])
    assert "already answered" in await alice.press(today["1 h"])
    assert "every day" in await alice.send("/remind")
