"""Group chats through the real python-telegram-bot and the fake Bot API. By default the bot says once that it talks
with one person at a time and leaves any group, supergroup or channel. With TELEGRAM_ALLOW_GROUPS it reads only
commands addressed to it and replies to its messages, answers in the person's private chat with a one-line pointer
in the group, ignores commands for other bots, and sends pushes to private chats only. Nothing of what it does not
read reaches the database (row counts of every personal table)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select

from adapters.telegram.adapter import TelegramAdapter
from bot.dialog import Dialog
from brain.core import Brain
from brain.modules.drink.models import DrinkEntry
from brain.outbox.models import Outbound
from brain.outbox.service import enqueue
from tests.personal_rows import personal_rows
from tests.telegram.conftest import make_adapter, send, user_id_of
from tests.telegram.fake_bot_api import BOT_USER, FakeBotAPI

GROUP = {"id": -100777, "type": "group", "title": "Flat"}
SUPERGROUP = {"id": -1001234, "type": "supergroup", "title": "Club"}
CHANNEL = {"id": -1009999, "type": "channel", "title": "News"}
ME = BOT_USER["username"]


@pytest.fixture
async def groups_allowed(brain: Brain, dialog: Dialog, api: FakeBotAPI) -> AsyncIterator[TelegramAdapter]:
    adapter = make_adapter(brain, dialog, api, allow_groups=True)
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()


async def drinks(brain: Brain) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.count()).select_from(DrinkEntry)) or 0)


async def test_added_to_a_group_it_says_once_why_and_leaves(telegram: TelegramAdapter, api: FakeBotAPI, person,
                                                             brain: Brain) -> None:
    alice = person("Alice", "de")
    before = await personal_rows(brain)
    api.push(api.added_to(alice, GROUP))
    api.push(api.group_text(alice, "/today", GROUP))  # already on its way when the bot left
    (leave,) = await api.wait_for("leaveChat", chat_id=GROUP["id"])
    await send(api, person("Bob"), "/help")  # handled after the group's updates
    (notice,) = api.calls_of("sendMessage", GROUP["id"])
    assert "einer Person" in notice.text  # in the language of the person who added it
    assert notice.at < leave.at and len(api.calls_of("leaveChat")) == 1
    after = await personal_rows(brain)
    assert after["identities"] == before["identities"] + 1  # Bob only: nobody in the group became a person
    assert after["telegram_updates"] == before["telegram_updates"] + 1


async def test_a_message_in_a_supergroup_or_a_channel_post_makes_it_leave(telegram: TelegramAdapter, api: FakeBotAPI,
                                                                         person, brain: Brain) -> None:
    alice = person()
    api.push(api.group_text(alice, "/water 250", SUPERGROUP))
    api.push(api.channel_post(CHANNEL, "news"))
    await api.wait_for("leaveChat", chat_id=SUPERGROUP["id"])
    await api.wait_for("leaveChat", chat_id=CHANNEL["id"])
    assert "one person at a time" in api.calls_of("sendMessage", SUPERGROUP["id"])[0].text
    assert await drinks(brain) == 0 and (await personal_rows(brain))["users"] == 0


async def test_with_groups_allowed_only_what_is_addressed_to_it_is_read_and_answered_privately(
        groups_allowed: TelegramAdapter, api: FakeBotAPI, person, brain: Brain) -> None:
    alice, bob = person("Alice"), person("Bob")
    await send(api, alice, "/start")
    await send(api, bob, "/start")
    await send(api, alice, "/task Call the landlord")
    before = await personal_rows(brain)
    for text in ("/water@other_bot 250", "/water 250", "250 ml water", "what's on my list?"):
        api.push(api.group_text(alice, text, GROUP))
    api.push(api.added_to(bob, GROUP))  # allowed: it stays, silently
    sent_to_alice = len(api.calls_of("sendMessage", alice.id))
    api.push(api.group_text(alice, f"/today@{ME}", GROUP))
    (pointer,) = await api.wait_for("sendMessage", chat_id=GROUP["id"])
    assert "private chat" in pointer.text and f"t.me/{ME}" in pointer.text
    (today,) = api.calls_of("sendMessage", alice.id)[sent_to_alice:]
    assert "Tasks: 1 open" in today.text  # the day went to Alice alone
    assert all("Tasks" not in call.text for call in api.calls_of("sendMessage", GROUP["id"]))
    assert await drinks(brain) == 0 and api.calls_of("leaveChat") == []
    after = await personal_rows(brain)
    # Only the one update addressed to it left a trace: its id, and its answer with the answer's buttons (and the
    # message that carries them, whose keyboard goes once its question is settled).
    assert {table for table, count in after.items() if count != before[table]} == {
        "telegram_updates", "outbox", "action_tokens", "keyboard_messages"}
    assert after["telegram_updates"] == before["telegram_updates"] + 1 and after["outbox"] == before["outbox"] + 1

    api.push(api.group_text(alice, "250 ml water", GROUP, reply_to=pointer))  # a reply to its message is read
    await api.wait_for("sendMessage", chat_id=alice.id, count=sent_to_alice + 2)
    assert "Logged 250 ml water" in api.calls_of("sendMessage", alice.id)[-1].text
    assert await drinks(brain) == 1
    assert len(await api.wait_for("sendMessage", chat_id=GROUP["id"], count=2)) == 2  # a pointer per answer
    assert all("Logged" not in call.text for call in api.calls_of("sendMessage", GROUP["id"]))


async def test_with_groups_allowed_pushes_go_to_the_private_chat(groups_allowed: TelegramAdapter, api: FakeBotAPI,
                                                                 person, brain: Brain) -> None:
    alice = person()
    api.push(api.group_text(alice, f"/help@{ME}", GROUP))
    await api.wait_for("sendMessage", chat_id=GROUP["id"])
    await api.wait_for("sendMessage", chat_id=alice.id)
    user_id = await user_id_of(brain, alice)
    async with brain.transactions.begin() as uow:
        await enqueue(uow.session, user_id, Outbound(text="Time for a glass of water?"), kind="nudge", slot="n1")
    groups_allowed.wake_sender()
    (nudge,) = await api.wait_for("sendMessage", where=lambda call: call.text == "Time for a glass of water?")
    assert nudge.chat_id == str(alice.id)
