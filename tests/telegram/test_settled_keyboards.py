"""A keyboard goes whenever its question is settled, not only by a press: a proposal approved or rejected by
command, a proposal that expired (its message then says so), and a setup or ritual step answered by typing. Each
edit is an outbox row (`bot.delivery.keyboards`), sent through the fake Bot API like any reply."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

from sqlalchemy import func, select

from adapters.telegram.adapter import TelegramAdapter
from bot.commands.proposals import expire_with_keyboards
from bot.models import KeyboardMessage
from brain.clock import FixedClock
from brain.core import Brain
from brain.outbox.models import EDIT_KIND, SENT, OutboxMessage
from tests.telegram.conftest import send
from tests.telegram.fake_bot_api import Call, FakeBotAPI
from tests.telegram.test_telegram_nudges_and_proposals import proposals_message


def proposal_ref(message: Call) -> str:
    found = re.search(r"\(proposal (\w+)\)", message.text)
    assert found is not None, message.text
    return found.group(1)


async def recorded(brain: Brain, *messages: Call) -> None:
    """Waits until the delivery has recorded these messages' keyboards: it does so in the transaction that settles
    their rows, a moment after Telegram took them (a ready check, polled)."""
    wanted = {str(m.params["_message_id"]) for m in messages}
    async with asyncio.timeout(10):
        while True:
            async with brain.transactions.read() as session:
                found = set((await session.scalars(select(KeyboardMessage.message_id))).all())
            if wanted <= found:
                return
            await asyncio.sleep(0.02)


def edits_of(api: FakeBotAPI, method: str, message: Call) -> list[Call]:
    return [c for c in api.calls_of(method, message.chat_id)
            if str(c.params.get("message_id")) == str(message.params["_message_id"])]


async def test_approve_and_reject_by_command_take_the_keyboard_off_the_proposal(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain) -> None:  # type: ignore[no-untyped-def]
    alice = person()
    _, *listed = await proposals_message(api, alice, brain)
    milk = next(m for m in listed if "Buy milk" in m.text)
    landlord = next(m for m in listed if "Call the landlord" in m.text)
    (approved,) = await send(api, alice, f"/approve {proposal_ref(milk)}")
    assert "Approved" in approved.text
    (rejected,) = await send(api, alice, f"/reject {proposal_ref(landlord)} not this week")
    assert "not this week" in rejected.text or "reject" in rejected.text.lower()
    await api.wait_for("editMessageReplyMarkup", chat_id=alice.id, count=2)
    assert len(edits_of(api, "editMessageReplyMarkup", milk)) == 1
    assert len(edits_of(api, "editMessageReplyMarkup", landlord)) == 1
    # Each edit is an outbox row, sent once; the records of the settled questions are gone.
    async with brain.transactions.read() as session:
        edits = (await session.scalars(select(OutboxMessage.status).where(OutboxMessage.kind == EDIT_KIND))).all()
        assert list(edits) == [SENT, SENT]
        assert await session.scalar(select(func.count()).select_from(KeyboardMessage)) == 0
    # A second /approve changes nothing and edits nothing again.
    (again,) = await send(api, alice, f"/approve {proposal_ref(milk)}")
    assert "already approved" in again.text
    assert len(edits_of(api, "editMessageReplyMarkup", milk)) == 1


async def test_an_expired_proposal_loses_its_keyboard_and_says_it_expired(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain,  # type: ignore[no-untyped-def]
        clock: FixedClock) -> None:
    alice = person()
    _, *listed = await proposals_message(api, alice, brain)
    milk = next(m for m in listed if "Buy milk" in m.text)
    await recorded(brain, *listed)
    clock.set(clock.now() + timedelta(hours=1))
    assert await expire_with_keyboards(brain) == 2
    telegram.wake_sender()
    edits = await api.wait_for("editMessageText", chat_id=alice.id, count=2)
    (edit,) = [e for e in edits if str(e.params["message_id"]) == str(milk.params["_message_id"])]
    assert "Buy milk" in str(edit.params["text"]) and "That proposal has expired" in str(edit.params["text"])
    assert "reply_markup" not in edit.params  # an edit without a keyboard takes it off
    assert await expire_with_keyboards(brain) == 0  # run again: nothing more to edit
    telegram.wake_sender()
    await send(api, alice, "/help")
    assert len(api.calls_of("editMessageText", alice.id)) == 2


async def test_a_setup_step_answered_by_typing_loses_its_keyboard(
        telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:  # type: ignore[no-untyped-def]
    bea = person("Bea", language_code="de")
    (language,) = await send(api, bea, "/start")
    assert "English" in language.buttons()
    (zone,) = await send(api, bea, "English")  # typed instead of pressed
    assert "Step 2 of 4" in zone.text
    await api.wait_for("editMessageReplyMarkup", chat_id=bea.id)
    assert len(edits_of(api, "editMessageReplyMarkup", language)) == 1
    (quiet,) = await send(api, bea, "Wien")
    assert "Step 3 of 4" in quiet.text
    await api.wait_for("editMessageReplyMarkup", chat_id=bea.id, count=2)
    assert len(edits_of(api, "editMessageReplyMarkup", zone)) == 1


async def test_the_time_zone_step_answered_by_a_shared_location_loses_its_keyboard(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain) -> None:  # type: ignore[no-untyped-def]
    bea = person("Bea", language_code="de")
    await send(api, bea, "/start")
    (zone,) = await send(api, bea, "English")
    assert "Step 2 of 4" in zone.text and zone.buttons()
    await recorded(brain, zone)
    api.push(api.location(bea, 48.21, 16.37))  # Vienna, shared instead of a button pressed
    await api.wait_for("sendMessage", chat_id=bea.id, where=lambda c: "Step 3 of 4" in c.text)
    await api.wait_for("editMessageReplyMarkup", chat_id=bea.id,
                       where=lambda c: str(c.params.get("message_id")) == str(zone.params["_message_id"]))
    assert len(edits_of(api, "editMessageReplyMarkup", zone)) == 1


async def test_a_ritual_step_answered_by_typing_loses_its_keyboard(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain) -> None:  # type: ignore[no-untyped-def]
    alice = person()
    (overview,) = await send(api, alice, "/ritual")
    api.push(api.press(alice, overview.buttons()["+ Drink check"], overview))
    (question,) = await api.wait_for("sendMessage", chat_id=alice.id,
                                     where=lambda c: "How much water do you want to log?" in c.text)
    assert "250 ml" in question.buttons()
    await recorded(brain, question)  # the press's lane delivered it; the typed answer comes in the chat's lane
    await send(api, alice, "300")  # typed instead of pressed
    await api.wait_for("editMessageReplyMarkup", chat_id=alice.id,
                       where=lambda c: str(c.params.get("message_id")) == str(question.params["_message_id"]))
