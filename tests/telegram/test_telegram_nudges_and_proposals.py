"""Pushes through Telegram: a nudge from the pulse reaches the person's private chat with its buttons, and
Snooze and Dismiss are recorded as outcomes (the pressed keyboard goes away); an AI proposal is approved
or rejected by button with its effect in the database."""

from __future__ import annotations

from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

from sqlalchemy import select

from adapters.telegram.adapter import TelegramAdapter
from brain.clock import FixedClock
from brain.companion.models import Proposal
from brain.core import Brain
from brain.events.actor import ai
from brain.feedback.models import NudgeOutcome
from brain.modules.todo.models import Task
from rules.engine import RuleEngine
from tests.telegram.conftest import press, send, toast, user_id_of
from tests.telegram.fake_bot_api import Call, FakeBotAPI

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(hour: int, minute: int = 0) -> datetime:
    return datetime.combine(datetime(2026, 11, 30).date(), time(hour, minute), tzinfo=BERLIN).astimezone(UTC)


async def outcomes(brain: Brain) -> list[tuple[str, str]]:
    async with brain.transactions.read() as session:
        rows = (await session.execute(select(NudgeOutcome.rule, NudgeOutcome.outcome)
                                      .order_by(NudgeOutcome.id))).all()
    return [(rule, outcome) for rule, outcome in rows]


async def test_nudges_arrive_with_buttons_and_snooze_and_dismiss_are_recorded(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain, clock: FixedClock) -> None:
    alice = person()
    clock.set(berlin(8, 0))
    await send(api, alice, "/help")
    user_id = await user_id_of(brain, alice)
    clock.set(berlin(9, 30))
    report = await RuleEngine(brain).tick(berlin(9, 30))
    assert user_id in report.sent_to
    telegram.wake_sender()  # what the pulse ticker does after a tick
    nudges = await api.wait_for("sendMessage", chat_id=alice.id, count=3)
    water = next(c for c in nudges if "Still 2,000 ml to your goal today" in c.text)
    morning = next(c for c in nudges if "Snooze 15 min" in c.buttons() and c is not water)
    assert list(water.buttons()) == ["Log 250 ml water", "Snooze 15 min", "1 h", "Tomorrow", "Dismiss"]

    (snoozed,) = await press(api, alice, "Snooze 15 min", morning)
    assert "Okay, I'll remind you again at" in snoozed.text
    (dismissed,) = await press(api, alice, "Dismiss", water)
    assert "Okay, I'll leave it." in dismissed.text
    assert await outcomes(brain) == [("morning_summary", "snoozed"), ("water", "dismissed")]
    edits = await api.wait_for("editMessageReplyMarkup", chat_id=alice.id, count=2)
    assert {e.params["message_id"] for e in edits} == {morning.params["_message_id"], water.params["_message_id"]}
    assert len(api.calls_of("answerCallbackQuery")) == 2


async def proposals_message(api: FakeBotAPI, alice, brain: Brain) -> list[Call]:  # type: ignore[no-untyped-def]
    await send(api, alice, "/help")
    user_id = await user_id_of(brain, alice)
    for title in ("Buy milk", "Call the landlord"):
        staged = await brain.tools.execute(user_id, "create_task", {"title": title}, ai("you asked me to"))
        assert staged.ok and staged.data.get("status") == "proposed", staged
    return await send(api, alice, "/proposals", replies=3)


async def test_a_proposal_is_approved_and_another_rejected_by_button(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain) -> None:
    alice = person()
    _, *listed = await proposals_message(api, alice, brain)
    milk = next(m for m in listed if "Buy milk" in m.text)
    landlord = next(m for m in listed if "Call the landlord" in m.text)
    assert "Buy milk" in milk.text and list(milk.buttons()) == ["Approve", "Reject"]
    (approved,) = await press(api, alice, "Approve", milk)
    assert "Approved" in approved.text
    rejected, why = await press(api, alice, "Reject", landlord, replies=2)
    assert "reject" in rejected.text.lower() and why.text == "Why? (optional)"
    async with brain.transactions.read() as session:
        assert list((await session.scalars(select(Task.title))).all()) == ["Buy milk"]
        decided = sorted((await session.scalars(select(Proposal.status))).all())
    assert decided == ["approved", "rejected"]
    assert len(await api.wait_for("editMessageReplyMarkup", chat_id=alice.id, count=2)) == 2
    sent = len(api.calls_of("sendMessage", alice.id))
    assert "already used" in await toast(api, alice, "Approve", milk)  # a stale keyboard: nothing runs twice
    assert "already answered" in await toast(api, alice, "Reject", milk)  # the other choice of a settled question
    async with brain.transactions.read() as session:
        assert len((await session.scalars(select(Task.title))).all()) == 1
        assert sorted((await session.scalars(select(Proposal.status))).all()) == ["approved", "rejected"]
    assert len(api.calls_of("sendMessage", alice.id)) == sent  # told in the callback answer, not in the chat
