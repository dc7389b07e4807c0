"""The feedback loop end to end over the database: outcomes recorded with latency and local hour, the
grouped statistics, a rule moving later after repeated dismissals and backing off after a low action
rate (each a RuleAdapted event), the one-time notice, and undo restoring the previous behaviour."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select

from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.events.store import EventRecord
from brain.feedback.models import NudgeOutcome, RuleAdaptation
from brain.feedback.outcomes import outcome_stats
from brain.outbox.models import OutboxMessage
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.pulse.models import ACTED, DISMISSED, Nudge
from brain.pulse.nudges import decide_nudge, open_for_press, snooze_nudge
from rules.engine import RuleEngine
from rules.morning_summary import MORNING_SUMMARY

BERLIN = ZoneInfo("Europe/Berlin")
START = date(2026, 11, 2)  # a Monday


async def make_user(brain: Brain) -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")


def local(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=BERLIN).astimezone(UTC)


async def morning_nudge(brain: Brain, user: User, day: date) -> Nudge | None:
    async with brain.transactions.read() as session:
        return await session.scalar(select(Nudge).where(Nudge.user_id == user.id, Nudge.rule == "morning_summary",
                                                        Nudge.slot == day.isoformat()))


async def answer(brain: Brain, user: User, nudge: Nudge, outcome: str) -> None:
    async with brain.transactions.begin() as uow:
        found = await open_for_press(uow, user.id, nudge.id, nudge.snoozes)
        assert isinstance(found, Nudge), found
        await decide_nudge(uow, found, outcome, USER)


async def events(brain: Brain, user: User, event_type: str) -> list[dict]:
    async with brain.transactions.read() as session:
        rows = (await session.scalars(select(EventRecord).where(EventRecord.user_id == user.id,
                                                                EventRecord.type == event_type)
                                      .order_by(EventRecord.occurred_at))).all()
    return [r.payload for r in rows]


async def run_day(engine: RuleEngine, clock: FixedClock, day: date, hours: tuple[int, ...] = (7, 8, 9, 10)) -> None:
    for hour in hours:
        clock.set(local(day, hour))
        await engine.tick(local(day, hour))


async def test_outcomes_carry_latency_and_local_hour_and_stats_count_each_nudge_once(brain, clock) -> None:
    user, other = await make_user(brain), await make_user(brain)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    await run_day(engine, clock, START, hours=(8,))
    nudge = await morning_nudge(brain, user, START)
    assert nudge is not None
    clock.set(local(START, 8, 10))
    async with brain.transactions.begin() as uow:
        found = await open_for_press(uow, user.id, nudge.id, 0)
        assert isinstance(found, Nudge)
        await snooze_nudge(uow, found, local(START, 8, 25).astimezone(BERLIN), USER, local_hour=8)
    await run_day(engine, clock, START, hours=(8,))
    clock.set(local(START, 8, 25))
    await engine.tick(local(START, 8, 25))
    clock.set(local(START, 8, 27))
    again = await morning_nudge(brain, user, START)
    assert again is not None and again.snoozes == 1 and again.status == "sent"
    await answer(brain, user, again, ACTED)
    async with brain.transactions.read() as session:
        rows = (await session.scalars(select(NudgeOutcome).where(NudgeOutcome.user_id == user.id)
                                      .order_by(NudgeOutcome.id))).all()
        stats = await outcome_stats(session, [user.id, other.id], local(START, 9))
    assert [(r.outcome, r.latency_s, r.local_hour) for r in rows] == [("snoozed", 600, 8), ("acted", 120, 8)]
    recorded = await events(brain, user, "NudgeOutcomeRecorded")
    assert [(e["outcome"], e["latency_s"], e["local_hour"]) for e in recorded] == [("snoozed", 600, 8),
                                                                                  ("acted", 120, 8)]
    morning = stats[user.id]["morning_summary"]
    assert (morning.nudges, morning.acted, morning.action_rate) == (1, 1, 1.0)
    assert morning.by_hour[8].nudges == 1
    assert other.id not in stats  # nothing of theirs, nothing of anyone else's


async def test_repeated_dismissals_move_the_rule_later_and_undo_restores_it(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    for offset in range(3):
        day = START + timedelta(days=offset)
        await run_day(engine, clock, day, hours=(8,))
        nudge = await morning_nudge(brain, user, day)
        assert nudge is not None and nudge.sent_at == local(day, 8)
        clock.set(local(day, 8, 5))
        await answer(brain, user, nudge, DISMISSED)
    moved_day = START + timedelta(days=3)
    clock.set(local(moved_day, 0, 5))
    report = await engine.tick(local(moved_day, 0, 5))
    (decision,) = report.adaptations
    assert decision.change == "moved_later" and decision.local_hour == 8
    (adapted,) = await events(brain, user, "RuleAdapted")
    assert adapted["rule"] == "morning_summary" and adapted["change"] == "moved_later"
    assert adapted["before"]["offset_minutes"] == 0 and adapted["after"]["offset_minutes"] == 60
    clock.set(local(moved_day, 8))
    await engine.tick(local(moved_day, 8))
    assert await morning_nudge(brain, user, moved_day) is None
    clock.set(local(moved_day, 9))
    await engine.tick(local(moved_day, 9))
    later = await morning_nudge(brain, user, moved_day)
    assert later is not None and later.sent_at == local(moved_day, 9)

    # Undo (what /pulse's button does): the next morning is at 08:00 again, and it is an event.
    async with brain.transactions.read() as session:
        (row,) = (await session.scalars(select(RuleAdaptation).where(RuleAdaptation.user_id == user.id))).all()
    clock.set(local(moved_day, 12))
    result = await brain.tools.execute(user.id, "undo_rule_adaptation", {"adaptation_id": str(row.id)}, USER)
    assert result.ok
    (undone,) = await events(brain, user, "RuleAdaptationUndone")
    assert undone["adaptation_id"] == str(row.id)
    next_day = moved_day + timedelta(days=1)
    clock.set(local(next_day, 8))
    report = await engine.tick(local(next_day, 8))
    assert report.adaptations == []  # an undone rule is not moved again from the same dismissals
    back = await morning_nudge(brain, user, next_day)
    assert back is not None and back.sent_at == local(next_day, 8)
    again = await brain.tools.execute(user.id, "undo_rule_adaptation", {"adaptation_id": str(row.id)}, USER)
    assert not again.ok and "already undone" in again.message.msgid  # type: ignore[union-attr]


async def test_low_action_rate_backs_off_tells_once_and_undo_restores_every_slot(brain, clock) -> None:
    user = await make_user(brain)
    engine = RuleEngine(brain, rules=[MORNING_SUMMARY])
    for offset in range(6):  # six mornings nobody reacts to: they expire
        await run_day(engine, clock, START + timedelta(days=offset), hours=(8, 13))
    async with brain.transactions.read() as session:
        expired = (await session.scalars(select(NudgeOutcome.outcome).where(NudgeOutcome.user_id == user.id))).all()
    assert list(expired) == ["expired"] * 6
    first_day = START + timedelta(days=6)
    clock.set(local(first_day, 0, 1))
    report = await engine.tick(local(first_day, 0, 1))
    (decision,) = report.adaptations
    assert decision.change == "backed_off" and decision.after.backoff_factor == 2
    assert user.id in report.notified
    (adapted,) = await events(brain, user, "RuleAdapted")
    assert adapted["change"] == "backed_off" and adapted["after"]["backoff_factor"] == 2
    async with brain.transactions.read() as session:
        notices = (await session.scalars(select(OutboxMessage.text).where(OutboxMessage.user_id == user.id,
                                                                           OutboxMessage.kind == "pulse_notice"))).all()
    assert list(notices) == ["I'll remind you less about Morning summary. Say /pulse to get it back."]

    sent_days = []
    for offset in range(6, 10):
        day = START + timedelta(days=offset)
        await run_day(engine, clock, day, hours=(8, 13))
        if await morning_nudge(brain, user, day) is not None:
            sent_days.append(day)
    assert len(sent_days) == 2 and (sent_days[1] - sent_days[0]).days == 2
    async with brain.transactions.read() as session:
        notices = (await session.scalars(select(OutboxMessage.id).where(OutboxMessage.user_id == user.id,
                                                                         OutboxMessage.kind == "pulse_notice"))).all()
    assert len(notices) == 1  # told once

    async with brain.transactions.read() as session:
        (row,) = (await session.scalars(select(RuleAdaptation).where(RuleAdaptation.user_id == user.id))).all()
    assert (await brain.tools.execute(user.id, "undo_rule_adaptation", {"adaptation_id": str(row.id)}, USER)).ok
    for offset in range(10, 12):
        day = START + timedelta(days=offset)
        await run_day(engine, clock, day, hours=(8, 13))
        assert await morning_nudge(brain, user, day) is not None, day


async def test_another_persons_adaptation_cannot_be_undone(brain, clock) -> None:
    owner, other = await make_user(brain), await make_user(brain)
    async with brain.transactions.begin() as uow:
        row = RuleAdaptation(user_id=owner.id, rule="water", change="backed_off", offset_minutes=0, backoff_factor=2,
                             active=True, created_at=uow.now)
        uow.session.add(row)
    result = await brain.tools.execute(other.id, "undo_rule_adaptation", {"adaptation_id": str(row.id)}, USER)
    assert not result.ok
    async with brain.transactions.read() as session:
        assert (await session.get(RuleAdaptation, row.id)).active  # type: ignore[union-attr]
