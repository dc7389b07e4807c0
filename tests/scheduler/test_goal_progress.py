"""The goal-progress nudge through the scheduler's pulse job with an injected clock: a daily goal half-way or more at
17:00 local reaches the person once, in their language, with a button to the goals; one not yet half-way says
nothing."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import select

from bot.scheduler.jobs import ScheduledJobs
from bot.settings import Settings
from brain.actions.models import ActionToken
from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.goals import service as goals
from brain.modules.drink import service as drink
from brain.outbox.models import OutboxMessage
from brain.people.models import User
from brain.pulse.models import Nudge
from tests.scheduler.test_pushes import local, make_user

MONDAY = date(2026, 11, 30)


async def water_goal_with(brain: Brain, clock: FixedClock, user: User, glasses: int) -> None:
    """The 8-glasses goal set in the morning and `glasses` of water logged before the afternoon."""
    clock.set(local(MONDAY, 7))
    async with brain.transactions.begin() as uow:
        await goals.create_from_template(uow, user, USER, "water_8_glasses")
    for n in range(glasses):
        clock.set(local(MONDAY, 9 + n))
        async with brain.transactions.begin() as uow:
            await drink.log_drink(uow, user, USER, "water", 250)


async def goal_progress_messages(brain: Brain, user: User) -> list[OutboxMessage]:
    async with brain.transactions.read() as session:
        slots = [f"goal_progress:{slot}" for slot in (await session.scalars(
            select(Nudge.slot).where(Nudge.user_id == user.id, Nudge.rule == "goal_progress"))).all()]
        rows = (await session.scalars(select(OutboxMessage).where(
            OutboxMessage.user_id == user.id, OutboxMessage.kind == "nudge", OutboxMessage.slot.in_(slots)))).all()
    return list(rows)


@pytest.mark.parametrize(("locale", "lines", "button"), [
    ("en", ["Half-way there: 8 glasses of water a day (each water you log counts as one)",
            "5 of 8 so far; 3 to go before the period ends."], "Show goals"),
    ("de", ["Halbzeit geschafft: 8 Gläser Wasser pro Tag (jedes eingetragene Wasser zählt als ein Glas)",
            "5 von 8 bisher; noch 3, bevor der Zeitraum endet."], "Ziele anzeigen"),
])
async def test_a_goal_half_way_late_in_its_day_reaches_the_person_once_through_the_pulse_job(
        brain: Brain, clock: FixedClock, locale: str, lines: list[str], button: str) -> None:
    alice = await make_user(brain, locale=locale)
    bob = await make_user(brain, locale=locale)
    await water_goal_with(brain, clock, alice, 5)
    await water_goal_with(brain, clock, bob, 3)  # not half-way: nothing to say
    handed_over: list[int] = []

    async def deliver() -> None:
        handed_over.append(1)

    jobs = ScheduledJobs(brain, Settings(), deliver=deliver)
    clock.set(local(MONDAY, 16, 55))  # a third of the day is still to come: too early
    await jobs.pulse_tick()
    assert await goal_progress_messages(brain, alice) == []
    for minute in (0, 1, 5, 30):  # the 17:00 slot, and later ticks that must not send it again
        clock.set(local(MONDAY, 17, minute))
        await jobs.pulse_tick()

    [message] = await goal_progress_messages(brain, alice)
    assert message.text.splitlines()[:2] == lines
    assert message.platform is None  # a push: it goes where the person last talked
    assert handed_over  # the job handed the new row to the adapters at once
    labels = [b["label"] for row in message.buttons for b in row]
    assert labels[0] == button
    async with brain.transactions.read() as session:
        token = await session.get(ActionToken, message.buttons[0][0]["token"])
    assert token is not None and token.user_id == alice.id
    assert await goal_progress_messages(brain, bob) == []
