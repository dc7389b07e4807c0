"""Nudges from the engine to the person and back: the outbox row with its buttons, act now (a tool or a
command), snooze, dismiss, another person's button, an expired nudge, /pulse with undo, /pause and /resume."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select

from brain.core import Brain
from brain.feedback.models import NudgeOutcome, RuleAdaptation
from brain.outbox.models import OutboxMessage
from brain.people.models import Identity
from brain.pulse.models import Nudge
from rules.engine import RuleEngine

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(hour: int, minute: int = 0) -> datetime:
    return datetime.combine(datetime(2026, 11, 30).date(), time(hour, minute), tzinfo=BERLIN).astimezone(UTC)


async def user_id_of(brain: Brain, handle: str) -> uuid.UUID:
    async with brain.transactions.read() as session:
        found = await session.scalar(select(Identity.user_id).where(Identity.platform == "test",
                                                                    Identity.platform_id == handle))
    assert found is not None
    return found


async def nudge_buttons(brain: Brain, user_id: uuid.UUID, slot: str) -> tuple[str, dict[str, str]]:
    async with brain.transactions.read() as session:
        row = await session.scalar(select(OutboxMessage).where(OutboxMessage.user_id == user_id,
                                                               OutboxMessage.kind == "nudge",
                                                               OutboxMessage.slot == slot))
    assert row is not None, slot
    message = row.outbound()
    return message.text, {b.label: b.token for b in message.flat_buttons()}


async def nudge(brain: Brain, user_id: uuid.UUID, rule: str) -> Nudge:
    async with brain.transactions.read() as session:
        found = await session.scalar(select(Nudge).where(Nudge.user_id == user_id, Nudge.rule == rule))
    assert found is not None
    return found


async def outcomes(brain: Brain, user_id: uuid.UUID) -> list[tuple[str, str]]:
    async with brain.transactions.read() as session:
        rows = (await session.execute(select(NudgeOutcome.rule, NudgeOutcome.outcome)
                                      .where(NudgeOutcome.user_id == user_id).order_by(NudgeOutcome.id))).all()
    return [(r, o) for r, o in rows]


async def started(person, brain, clock):  # type: ignore[no-untyped-def]
    """A person who said hello at 08:00 and a tick at 09:30 (idle long enough): water and morning summary."""
    alice = person()
    clock.set(berlin(8, 0))
    await alice.send("/start")
    user_id = await user_id_of(brain, alice.handle)
    clock.set(berlin(9, 30))
    report = await RuleEngine(brain).tick(berlin(9, 30))
    assert user_id in report.sent_to
    return alice, user_id


async def test_water_nudge_arrives_with_buttons_and_acting_logs_250_ml(person, brain, clock) -> None:
    alice, user_id = await started(person, brain, clock)
    text, buttons = await nudge_buttons(brain, user_id, "water:2026-11-30T09:30")
    assert "Still 2,000 ml to your goal today" in text
    assert list(buttons) == ["Log 250 ml water", "Snooze 15 min", "1 h", "Tomorrow", "Dismiss"]
    clock.advance(timedelta(minutes=3))
    assert "Logged 250 ml water" in await alice.press(buttons["Log 250 ml water"])
    assert "Water: 250 ml of 2,000 ml" in await alice.send("/today")
    assert (await nudge(brain, user_id, "water")).status == "acted"
    assert await outcomes(brain, user_id) == [("water", "acted")]
    assert "already used" in await alice.press(buttons["Log 250 ml water"])
    assert "already answered" in await alice.press(buttons["Dismiss"])


async def test_command_action_runs_the_command(person, brain, clock) -> None:
    alice, user_id = await started(person, brain, clock)
    _, buttons = await nudge_buttons(brain, user_id, "morning_summary:2026-11-30")
    assert "Today," in await alice.press(buttons["Show today"])
    assert (await nudge(brain, user_id, "morning_summary")).status == "acted"


async def test_snooze_brings_the_nudge_back_once_and_old_buttons_are_answered(person, brain, clock) -> None:
    alice, user_id = await started(person, brain, clock)
    _, first = await nudge_buttons(brain, user_id, "morning_summary:2026-11-30")
    reply = await alice.press(first["Snooze 15 min"])
    assert "Okay, I'll remind you again at" in reply and "9:45" in reply
    assert await outcomes(brain, user_id) == [("morning_summary", "snoozed")]
    engine = RuleEngine(brain)
    clock.set(berlin(9, 46))
    await engine.tick(berlin(9, 46))  # idle since the press at 09:30
    _, second = await nudge_buttons(brain, user_id, "morning_summary:2026-11-30:snooze1")
    assert "already answered" in await alice.press(first["Dismiss"])
    clock.set(berlin(9, 50))
    assert "Okay, I'll leave it." in await alice.press(second["Dismiss"])
    assert await outcomes(brain, user_id) == [("morning_summary", "snoozed"), ("morning_summary", "dismissed")]
    clock.set(berlin(10, 30))
    await engine.tick(berlin(10, 30))
    async with brain.transactions.read() as session:
        slots = (await session.scalars(select(OutboxMessage.slot).where(
            OutboxMessage.user_id == user_id, OutboxMessage.slot.like("morning_summary:%")))).all()
    assert sorted(slots) == ["morning_summary:2026-11-30", "morning_summary:2026-11-30:snooze1"]


async def test_tomorrow_snooze_and_dismiss_are_recorded(person, brain, clock) -> None:
    alice, user_id = await started(person, brain, clock)
    _, water = await nudge_buttons(brain, user_id, "water:2026-11-30T09:30")
    _, morning = await nudge_buttons(brain, user_id, "morning_summary:2026-11-30")
    assert "Okay, I'll leave it." in await alice.press(water["Dismiss"])
    reply = await alice.press(morning["Tomorrow"])
    assert "Dec 1" in reply and "9:30" in reply
    assert await outcomes(brain, user_id) == [("water", "dismissed"), ("morning_summary", "snoozed")]


async def test_another_persons_nudge_button_is_refused_and_changes_nothing(person, brain, clock, db_state) -> None:
    _, user_id = await started(person, brain, clock)
    mallory = person()
    await mallory.send("/start")
    _, buttons = await nudge_buttons(brain, user_id, "water:2026-11-30T09:30")
    before = await db_state()
    assert "not valid" in await mallory.press(buttons["Log 250 ml water"])
    assert await db_state() == before
    assert (await nudge(brain, user_id, "water")).status == "sent"


async def test_expired_nudges_button_says_so_and_does_nothing(person, brain, clock) -> None:
    alice, user_id = await started(person, brain, clock)
    _, buttons = await nudge_buttons(brain, user_id, "water:2026-11-30T09:30")
    clock.set(berlin(11, 1))  # the water nudge lived 90 minutes
    assert "This reminder has expired." in await alice.press(buttons["Log 250 ml water"])
    assert "Water: 0 ml" in await alice.send("/today")
    assert (await nudge(brain, user_id, "water")).status == "expired"
    assert await outcomes(brain, user_id) == [("water", "expired")]


async def test_pulse_lists_rules_and_undo_restores_an_adaptation(person, brain, clock) -> None:
    alice = person()
    await alice.send("/start")
    user_id = await user_id_of(brain, alice.handle)
    async with brain.transactions.begin() as uow:
        row = RuleAdaptation(user_id=user_id, rule="streak_at_risk", change="moved_later", offset_minutes=60,
                             backoff_factor=1, local_hour=18, active=True, created_at=uow.now)
        uow.session.add(row)
    listing = await alice.send("/pulse")
    assert "Water reminder: every 90 min from 8:00\u202fAM to 9:00\u202fPM" in listing
    assert "Streak at risk: daily at 7:00\u202fPM (moved 60 min later)" in listing
    assert "Quiet hours: 10:00\u202fPM to 7:00\u202fAM." in listing
    (undo,) = [token for label, token in alice.buttons().items() if label.startswith("Undo")]
    assert "works as before" in await alice.press(undo)
    assert "Streak at risk: daily at 6:00\u202fPM" in await alice.send("/pulse")
    assert alice.buttons() == {}
    assert "already used" in await alice.press(undo)


async def test_pause_and_resume_commands(person, brain, clock) -> None:
    alice = person()
    assert "paused until" in await alice.send("/pause 3")
    assert "Paused until" in await alice.send("/pulse")
    assert "Reminders are back on." in await alice.send("/resume")
    assert "were not paused" in await alice.send("/resume")
    assert "Usage: /pause" in await alice.send("/pause soon")
