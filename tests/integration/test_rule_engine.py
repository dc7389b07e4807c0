"""The rule engine over the real database with an injected clock: every rule through `tick` (or the bus),
quiet hours, a DST week in Europe/Berlin, two time zones, snooze, pause/resume, "only if not done yet",
the idle hold, no duplicate per slot (also across a restart), missed slots and expiry."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select, update

from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.events.store import EventRecord
from brain.feedback.models import NudgeOutcome
from brain.modules.drink.models import DrinkEntry
from brain.modules.food.models import Meal
from brain.outbox.models import OutboxMessage
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.pulse.activity import note_inbound
from brain.pulse.models import Nudge
from brain.pulse.nudges import open_for_press, snooze_nudge
from rules.engine import ALL_RULES, RuleEngine
from rules.morning_summary import MORNING_SUMMARY

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def local(day: date, hour: int, minute: int = 0, zone: ZoneInfo = BERLIN) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=zone).astimezone(UTC)


MONDAY = date(2026, 11, 30)


async def make_user(brain: Brain, zone: str = "Europe/Berlin", quiet: tuple[time, time] | None = None) -> User:
    async with brain.transactions.begin() as uow:
        user = await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="en",
                                      default_timezone=zone)
        await uow.session.flush()
        if quiet is not None:
            user.quiet_start, user.quiet_end = quiet
    return user


async def messages(brain: Brain, user: User, rule: str | None = None) -> list[OutboxMessage]:
    async with brain.transactions.read() as session:
        rows = (await session.scalars(
            select(OutboxMessage).where(OutboxMessage.user_id == user.id, OutboxMessage.kind == "nudge")
            .order_by(OutboxMessage.id)
        )).all()
    return [r for r in rows if rule is None or r.slot.startswith(f"{rule}:")]


async def nudges(brain: Brain, user: User, rule: str | None = None) -> list[Nudge]:
    async with brain.transactions.read() as session:
        rows = (await session.scalars(select(Nudge).where(Nudge.user_id == user.id).order_by(Nudge.created_at))).all()
    return [n for n in rows if rule is None or n.rule == rule]


async def outcomes(brain: Brain, user: User) -> list[tuple[str, str]]:
    async with brain.transactions.read() as session:
        rows = (await session.scalars(select(NudgeOutcome).where(NudgeOutcome.user_id == user.id)
                                      .order_by(NudgeOutcome.id))).all()
    return [(r.rule, r.outcome) for r in rows]


async def event_types(brain: Brain, user: User) -> list[str]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(EventRecord.type).where(EventRecord.user_id == user.id)
                                           .order_by(EventRecord.occurred_at))).all())


async def tick(engine: RuleEngine, clock: FixedClock, at: datetime):  # type: ignore[no-untyped-def]
    clock.set(at)
    return await engine.tick(at)


async def tool(brain: Brain, user: User, name: str, **args: object) -> None:
    result = await brain.tools.execute(user.id, name, args, USER)
    assert result.ok, result.message


# ---- one rule after another -----------------------------------------------------------------------------
async def test_morning_summary_arrives_at_eight_local_with_its_buttons(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 7, 59))
    assert await messages(brain, user) == []
    report = await tick(engine, clock, local(MONDAY, 8, 0))
    (message,) = await messages(brain, user, "morning_summary")
    assert message.slot == "morning_summary:2026-11-30"
    assert "Good morning!" in message.text and "Water goal: 2,000 ml" in message.text
    labels = [b["label"] for row in message.buttons for b in row]
    assert labels == ["Show today", "Snooze 15 min", "1 h", "Tomorrow", "Dismiss"]
    assert report.sent == 1 and user.id in report.sent_to
    assert "NudgeSent" in await event_types(brain, user)


async def test_water_reminder_when_behind_and_not_when_the_goal_is_reached(brain, clock) -> None:
    behind, done = await make_user(brain), await make_user(brain)
    clock.set(local(MONDAY, 9, 0))
    await tool(brain, done, "log_drink", drink_type="water", quantity_ml=2000)
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 9, 30))
    (message,) = await messages(brain, behind, "water")
    assert message.slot == "water:2026-11-30T09:30"
    assert "Still 2,000 ml to your goal today" in message.text
    assert [b["label"] for b in message.buttons[0]] == ["Log 250 ml water"]
    assert await messages(brain, done, "water") == []
    assert await nudges(brain, done, "water") == []


async def test_streak_at_risk_at_six_in_the_evening(brain, clock) -> None:
    user = await make_user(brain)
    clock.set(local(MONDAY - timedelta(days=1), 12))
    await tool(brain, user, "log_drink", drink_type="water", quantity_ml=250)
    engine = RuleEngine(brain, rules=[r for r in ALL_RULES if r.name == "streak_at_risk"])
    await tick(engine, clock, local(MONDAY, 17, 59))
    assert await messages(brain, user) == []
    await tick(engine, clock, local(MONDAY, 18, 0))
    (message,) = await messages(brain, user, "streak_at_risk")
    assert "Your water streak is at risk" in message.text
    assert [b["label"] for b in message.buttons[0]] == ["Log 250 ml water", "Skip today"]


async def test_evening_reflection_at_nine(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 20, 59))
    await tick(engine, clock, local(MONDAY, 21, 0))
    (message,) = await messages(brain, user, "evening_reflection")
    assert "What went well today?" in message.text


async def test_overdue_tasks_at_ten_and_three_only_while_overdue(brain, clock) -> None:
    lazy, tidy = await make_user(brain), await make_user(brain)
    clock.set(local(MONDAY, 9))
    await tool(brain, lazy, "create_task", title="Taxes", due_date=(MONDAY - timedelta(days=2)).isoformat())
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 10, 0))
    await tick(engine, clock, local(MONDAY, 15, 0))
    sent = await messages(brain, lazy, "overdue_tasks")
    assert [m.slot for m in sent] == ["overdue_tasks:2026-11-30T10", "overdue_tasks:2026-11-30T15"]
    assert "1 overdue task" in sent[0].text
    assert await messages(brain, tidy, "overdue_tasks") == []


async def test_meal_reminders_at_noon_and_seven(brain, clock) -> None:
    hungry, fed = await make_user(brain), await make_user(brain)
    clock.set(local(MONDAY, 11))
    await tool(brain, fed, "log_meal", meal_type="breakfast", description="Muesli", kcal=400)
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 12))
    assert [m.slot for m in await messages(brain, hungry, "meals")] == ["meals:2026-11-30T12"]
    assert await messages(brain, fed, "meals") == []
    await tick(engine, clock, local(MONDAY, 19))
    dinner = (await messages(brain, fed, "meals"))[-1]
    assert dinner.slot == "meals:2026-11-30T19" and "Only 1 meal logged today (400 kcal)." in dinner.text


async def test_a_slot_from_before_the_person_first_wrote_is_not_theirs(brain, clock) -> None:
    # Someone who starts at 19:45 is not asked at once whether they logged dinner (the 19:00 slot, within its hour
    # of grace); someone who was there at 19:00 is. The slot after the start comes to both.
    newcomer, regular = await make_user(brain), await make_user(brain)
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(User).where(User.id == newcomer.id).values(created_at=local(MONDAY, 19, 45)))
        await uow.session.execute(update(User).where(User.id == regular.id).values(created_at=local(MONDAY, 8)))
    engine = RuleEngine(brain)
    report = await tick(engine, clock, local(MONDAY, 19, 46))
    assert await messages(brain, newcomer, "meals") == []
    assert [m.slot for m in await messages(brain, regular, "meals")] == ["meals:2026-11-30T19"]
    assert report.before_joined >= 1
    await tick(engine, clock, local(MONDAY + timedelta(days=1), 12))
    assert [m.slot for m in await messages(brain, newcomer, "meals")] == ["meals:2026-12-01T12"]


async def test_goal_reached_event_becomes_a_congratulation(brain, clock) -> None:
    user = await make_user(brain)
    clock.set(local(MONDAY, 11))
    await tool(brain, user, "create_goal_from_template", template="water_8_glasses")
    for _ in range(8):
        await tool(brain, user, "log_drink", drink_type="water", quantity_ml=250)
    (message,) = await messages(brain, user, "goal_reached")
    assert "Goal reached!" in message.text and "8 of 8" in message.text


async def _correlated_history(brain: Brain, user: User, last: date, days: int = 30) -> None:
    """Water and meals rising and falling together, day by day."""
    async with brain.transactions.begin() as uow:
        for i in range(days):
            day = last - timedelta(days=i)
            level = i % 5
            at = local(day, 12)
            uow.session.add(DrinkEntry(user_id=user.id, drink_type="water", name="water", quantity_ml=800 + 300 * level,
                                       logged_at=at, local_date=day))
            for k in range(1 + level):
                uow.session.add(Meal(user_id=user.id, meal_type="snack", input_type="text", description=f"m{k}",
                                     calories=300, logged_at=at, local_date=day))


async def test_weekly_insight_on_sunday_evening_once_and_never_the_same_twice(brain, clock) -> None:
    user = await make_user(brain)
    sunday = date(2026, 11, 29)
    await _correlated_history(brain, user, sunday - timedelta(days=1))
    engine = RuleEngine(brain, rules=[r for r in ALL_RULES if r.name == "weekly_insight"])
    await tick(engine, clock, local(sunday, 17, 59))
    assert await messages(brain, user) == []
    await tick(engine, clock, local(sunday, 18, 30))
    (first,) = await messages(brain, user, "weekly_insight")
    assert first.slot == "weekly_insight:2026-W48" and "A pattern in your days" in first.text
    told = (await nudges(brain, user, "weekly_insight"))[0].data["insight"]
    next_sunday = sunday + timedelta(days=7)
    await tick(RuleEngine(brain, rules=engine.rules), clock, local(next_sunday, 18))
    later = [n.data["insight"] for n in await nudges(brain, user, "weekly_insight")]
    assert later.count(told) == 1


# ---- quiet hours, DST, time zones ----------------------------------------------------------------------
async def test_quiet_hours_keep_the_night_silent_and_the_morning_summary_comes_at_eight(brain, clock) -> None:
    user = await make_user(brain, quiet=(time(22), time(7)))
    engine = RuleEngine(brain)
    at = local(MONDAY, 22, 0)
    while at <= local(MONDAY + timedelta(days=1), 7, 30):
        await tick(engine, clock, at)
        at += timedelta(minutes=30)
    assert await messages(brain, user) == []
    await tick(engine, clock, local(MONDAY + timedelta(days=1), 8, 0))
    assert [m.slot for m in await messages(brain, user)] == ["morning_summary:2026-12-01"]


async def test_a_slot_inside_quiet_hours_is_dropped(brain, clock) -> None:
    user = await make_user(brain, quiet=(time(20, 30), time(7)))
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 20, 50))
    report = await tick(engine, clock, local(MONDAY, 21, 0))
    assert report.dropped_quiet >= 1
    assert await nudges(brain, user, "evening_reflection") == []


async def test_event_nudge_inside_quiet_hours_is_dropped(brain, clock) -> None:
    user = await make_user(brain, quiet=(time(22), time(7)))
    clock.set(local(MONDAY, 22, 30))
    await tool(brain, user, "create_goal_from_template", template="water_8_glasses")
    for _ in range(8):
        await tool(brain, user, "log_drink", drink_type="water", quantity_ml=250)
    assert "GoalReached" in await event_types(brain, user)
    assert await nudges(brain, user, "goal_reached") == []


async def test_morning_summary_waits_for_the_end_of_late_quiet_hours_up_to_two_hours(brain, clock) -> None:
    sleeper = await make_user(brain, quiet=(time(22), time(9)))
    very_late = await make_user(brain, quiet=(time(22), time(10, 30)))
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    await tick(engine, clock, local(MONDAY, 8, 0))
    assert await messages(brain, sleeper) == []
    await tick(engine, clock, local(MONDAY, 8, 59))
    assert await messages(brain, sleeper) == []
    await tick(engine, clock, local(MONDAY, 9, 0))
    assert [m.slot for m in await messages(brain, sleeper)] == ["morning_summary:2026-11-30"]
    await tick(engine, clock, local(MONDAY, 10, 30))
    assert await nudges(brain, very_late) == []


async def test_morning_summary_follows_eight_local_through_the_dst_change(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    for day, utc_hour in ((date(2026, 10, 24), 6), (date(2026, 10, 25), 7), (date(2026, 10, 26), 7)):
        eight = datetime.combine(day, time(utc_hour), tzinfo=UTC)
        before = len(await messages(brain, user))
        await tick(engine, clock, eight - timedelta(minutes=1))
        assert len(await messages(brain, user)) == before, day
        await tick(engine, clock, eight)
        latest = (await messages(brain, user))[-1]
        assert latest.slot == f"morning_summary:{day.isoformat()}"
        assert datetime.combine(day, time(8), tzinfo=BERLIN).astimezone(UTC) == eight
    assert len(await messages(brain, user)) == 3


async def test_two_time_zones_each_get_their_own_eight_oclock(brain, clock) -> None:
    berlin, new_york = await make_user(brain), await make_user(brain, "America/New_York")
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    await tick(engine, clock, datetime(2026, 11, 30, 7, 0, tzinfo=UTC))
    assert len(await messages(brain, berlin)) == 1 and await messages(brain, new_york) == []
    await tick(engine, clock, datetime(2026, 11, 30, 12, 59, tzinfo=UTC))
    assert await messages(brain, new_york) == []
    await tick(engine, clock, datetime(2026, 11, 30, 13, 0, tzinfo=UTC))
    assert [m.slot for m in await messages(brain, new_york)] == ["morning_summary:2026-11-30"]
    assert local(MONDAY, 8, zone=NEW_YORK) == datetime(2026, 11, 30, 13, tzinfo=UTC)


# ---- snooze, pause, only if not done, idle hold ---------------------------------------------------------
async def test_snoozed_nudge_comes_back_once_fifteen_minutes_later(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    await tick(engine, clock, local(MONDAY, 8))
    (nudge,) = await nudges(brain, user)
    clock.set(local(MONDAY, 8, 5))
    async with brain.transactions.begin() as uow:
        found = await open_for_press(uow, user.id, nudge.id, 0)
        assert isinstance(found, Nudge)
        await snooze_nudge(uow, found, local(MONDAY, 8, 20).astimezone(BERLIN), USER, local_hour=8)
    await tick(engine, clock, local(MONDAY, 8, 19))
    assert len(await messages(brain, user)) == 1
    await tick(engine, clock, local(MONDAY, 8, 20))
    await tick(engine, clock, local(MONDAY, 8, 21))
    await tick(engine, clock, local(MONDAY, 8, 40))
    sent = await messages(brain, user)
    assert [m.slot for m in sent] == ["morning_summary:2026-11-30", "morning_summary:2026-11-30:snooze1"]
    assert len(await nudges(brain, user)) == 1
    assert await outcomes(brain, user) == [("morning_summary", "snoozed")]


async def test_paused_person_gets_no_nudges_until_resumed(brain, clock) -> None:
    user = await make_user(brain)
    clock.set(local(MONDAY, 7))
    await tool(brain, user, "pause_pulse")
    engine = RuleEngine(brain)
    for hour in (8, 10, 12, 15):
        report = await tick(engine, clock, local(MONDAY, hour))
    assert await messages(brain, user) == [] and await nudges(brain, user) == []
    assert report.skipped_paused >= 1
    clock.set(local(MONDAY, 17, 30))
    await tool(brain, user, "resume_pulse")
    await tick(engine, clock, local(MONDAY, 18, 30))
    assert [m.slot for m in await messages(brain, user, "water")] == ["water:2026-11-30T18:30"]
    types = await event_types(brain, user)
    assert types.index("PulsePaused") < types.index("PulseResumed")


async def test_pause_for_some_days_ends_by_itself(brain, clock) -> None:
    user = await make_user(brain)
    clock.set(local(MONDAY, 7))
    await tool(brain, user, "pause_pulse", days=1)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    await tick(engine, clock, local(MONDAY, 8))
    assert await messages(brain, user) == []
    await tick(engine, clock, local(MONDAY + timedelta(days=1), 8))
    assert [m.slot for m in await messages(brain, user)] == ["morning_summary:2026-12-01"]


async def test_pending_nudge_already_done_when_due_is_auto_resolved(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain)
    clock.set(local(MONDAY, 9, 28))
    await note_inbound(brain, user.id)  # mid-conversation: the 09:30 water nudge waits
    report = await tick(engine, clock, local(MONDAY, 9, 30))
    assert report.held >= 1
    (water,) = await nudges(brain, user, "water")
    assert water.status == "pending"
    clock.set(local(MONDAY, 9, 31))
    await tool(brain, user, "log_drink", drink_type="water", quantity_ml=2000)
    report = await tick(engine, clock, local(MONDAY, 9, 40))
    (water,) = await nudges(brain, user, "water")
    assert water.status == "auto_resolved" and report.auto_resolved >= 1
    assert await messages(brain, user, "water") == []
    assert ("water", "auto_resolved") in await outcomes(brain, user)


async def test_idle_hold_waits_until_the_person_has_been_quiet_for_five_minutes(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY], idle_hold=timedelta(minutes=5))
    clock.set(local(MONDAY, 7, 58))
    await note_inbound(brain, user.id)
    report = await tick(engine, clock, local(MONDAY, 8, 0))
    assert report.held == 1 and await messages(brain, user) == []
    await tick(engine, clock, local(MONDAY, 8, 2))
    assert await messages(brain, user) == []
    await tick(engine, clock, local(MONDAY, 8, 3))
    assert [m.slot for m in await messages(brain, user)] == ["morning_summary:2026-11-30"]


# ---- slots: duplicates, restarts, missed slots, expiry -------------------------------------------------
async def test_two_ticks_in_the_same_minute_and_a_restart_never_duplicate_a_slot(brain, clock) -> None:
    user = await make_user(brain)
    first = RuleEngine(brain, rules=[MORNING_SUMMARY])
    await tick(first, clock, local(MONDAY, 8, 0))
    await tick(first, clock, local(MONDAY, 8, 0))
    await tick(first, clock, local(MONDAY, 8, 0) + timedelta(seconds=30))
    restarted = RuleEngine(brain, rules=[MORNING_SUMMARY])
    report = await tick(restarted, clock, local(MONDAY, 8, 1))
    assert report.created == 0
    assert [m.slot for m in await messages(brain, user)] == ["morning_summary:2026-11-30"]
    assert len(await nudges(brain, user, "morning_summary")) == 1


async def test_missed_slot_within_the_grace_window_comes_late_once(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    await tick(engine, clock, local(MONDAY, 7, 0))
    await tick(engine, clock, local(MONDAY, 9, 45))  # down from 07:00 to 09:45: 1 h 45 late, within 2 h
    assert [m.slot for m in await messages(brain, user)] == ["morning_summary:2026-11-30"]


async def test_missed_slot_beyond_the_grace_window_is_dropped_not_sent_as_a_backlog(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 7, 0))
    report = await tick(engine, clock, local(MONDAY, 16, 30))  # down most of the day
    assert report.dropped_missed >= 5
    slots = [m.slot for m in await messages(brain, user)]
    assert not any(s.startswith(("morning_summary:", "meals:2026-11-30T12", "overdue_tasks:")) for s in slots)
    # At most the latest water slot (16:00 .. 16:30 is within its hour of grace) — never a burst.
    assert len([s for s in slots if s.startswith("water:")]) <= 1
    fresh = RuleEngine(brain)
    await tick(fresh, clock, local(MONDAY, 16, 31))
    assert not any(m.slot.startswith("morning_summary:") for m in await messages(brain, user))


async def test_unanswered_nudge_expires_and_the_outcome_is_recorded(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain)
    await tick(engine, clock, local(MONDAY, 9, 30))
    (water,) = await nudges(brain, user, "water")
    assert water.status == "sent"
    report = await tick(engine, clock, local(MONDAY, 11, 0))
    water = next(n for n in await nudges(brain, user, "water") if n.slot == "2026-11-30T09:30")
    assert water.status == "expired" and report.expired >= 1
    assert ("water", "expired") in await outcomes(brain, user)
    assert "NudgeOutcomeRecorded" in await event_types(brain, user)


async def test_ticker_ticks_at_once_hands_over_the_report_and_stops_when_told(brain, clock) -> None:
    import asyncio

    from bot.pulse_ticker import run_ticker

    user = await make_user(brain)
    clock.set(local(MONDAY, 8))
    stop = asyncio.Event()
    reports = []

    async def seen(report) -> None:  # type: ignore[no-untyped-def]
        reports.append(report)
        stop.set()

    ticks = await run_ticker(RuleEngine(brain, rules=[MORNING_SUMMARY]), clock, 60, stop, on_tick=seen)
    assert ticks == 1 and reports[0].sent_to == {user.id}
