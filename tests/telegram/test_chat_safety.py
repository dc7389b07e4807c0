"""The real python-telegram-bot against the fake Bot API: a button press that cannot act (another account's, a
used, expired or settled one, a stale one after /delete_me) changes nothing and is told only in the callback
answer; the owner's keyboard stays when another account presses it. An edited message is not applied and says how
to fix the entry; a forwarded message is never run as a command or logged as an entry: without a model it gets one
line, with one it is talked about, marked for the model as someone else's words."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from adapters.telegram.adapter import TelegramAdapter
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.core import Brain
from brain.modules.drink.models import DrinkEntry
from tests.fakes.ollama_server import FakeOllama, Script, call
from tests.personal_rows import personal_rows
from tests.telegram.conftest import press, send, toast
from tests.telegram.fake_bot_api import FakeBotAPI


async def test_another_accounts_press_changes_nothing_and_is_told_only_in_its_callback_answer(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain) -> None:
    alice, mallory = person("Alice"), person("Mallory")
    (menu,) = await send(api, alice, "/goal")
    before = await personal_rows(brain)
    assert "not valid" in await toast(api, mallory, "+ 8 glasses of water a day", menu)  # an unknown account
    assert await personal_rows(brain) == before  # not even a person row for the presser
    await send(api, mallory, "/help")
    before = await personal_rows(brain)
    assert "not for you" in await toast(api, mallory, "+ 8 glasses of water a day", menu)
    assert await personal_rows(brain) == before
    assert len(api.calls_of("sendMessage", alice.id)) == 1  # nothing in the owner's chat
    assert api.calls_of("editMessageReplyMarkup") == []  # the keyboard stays for Alice
    (made,) = await press(api, alice, "+ 8 glasses of water a day", menu)
    assert "8 glasses of water a day" in made.text
    (edit,) = await api.wait_for("editMessageReplyMarkup", chat_id=alice.id)
    assert edit.params["message_id"] == menu.params["_message_id"]


async def test_a_stale_button_after_delete_me_creates_no_account(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain) -> None:
    alice = person("Alice")
    await send(api, alice, "/task Buy milk")
    (question,) = await send(api, alice, "/delete_me")
    await press(api, alice, "Delete everything", question)
    erased = await personal_rows(brain)
    assert erased["identities"] == 0 and erased["tasks"] == 0
    assert "not valid" in await toast(api, alice, "Delete everything", question)
    assert "not valid" in await toast(api, alice, "Keep my data", question)
    after = await personal_rows(brain)  # the farewell's delivery may have removed the last row meanwhile
    assert after["identities"] == 0 and all(after[table] <= count for table, count in erased.items())


async def test_an_edit_is_not_applied_and_says_how_to_fix_the_entry(telegram: TelegramAdapter, api: FakeBotAPI,
                                                                     person, brain: Brain) -> None:
    alice = person("Alice", "de")
    update = api.text(alice, "/water 300")
    api.push(update)
    await api.wait_for("sendMessage", chat_id=alice.id)
    api.push(api.edited(update, "/water 500"))
    (_, note) = await api.wait_for("sendMessage", chat_id=alice.id, count=2)
    assert "/undo" in note.text and "Bearbeitungen" in note.text  # one line, in her language
    assert await water_ml(brain) == 300


async def test_a_forwarded_command_is_neither_run_nor_logged(telegram: TelegramAdapter, api: FakeBotAPI, person,
                                                             brain: Brain) -> None:
    alice, bob = person("Alice"), person("Bob")
    await send(api, alice, "/help")
    before = await personal_rows(brain)
    for text in ("/water 50", "250 ml water"):
        api.push(api.forwarded(alice, text, bob))
    replies = await api.wait_for("sendMessage", chat_id=alice.id, count=3)
    assert all("forwarded message" in reply.text for reply in replies[1:])
    assert await water_ml(brain) == 0
    after = await personal_rows(brain)
    assert {table for table, count in after.items() if count != before[table]} == {"outbox", "telegram_updates"}


async def test_with_a_model_a_forwarded_command_is_talked_about_marked_as_someone_elses_words(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain, llm: LLM,  # type: ignore[no-untyped-def]
        fake_ollama: FakeOllama) -> None:
    brain.companion = Companion(brain, llm, CompanionConfig())
    asked: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Script:
        if body.get("model") != "qwen3:4b":
            return Script(content="OK.")
        asked.append(body)
        if len(asked) == 1:  # the model tries to log the drink anyway: the tool is not offered for forwarded text
            return Script(tool_calls=[call("log_drink", drink_type="water", quantity_ml=50)])
        return Script(content="Bob wrote that he drank 50 ml of water. Do you want to log something yourself?")

    fake_ollama.default = respond
    alice, bob = person("Alice"), person("Bob")
    await send(api, alice, "/help")
    before = await personal_rows(brain)
    api.push(api.forwarded(alice, "/water 50", bob))
    (answer,) = await api.wait_for("sendMessage", chat_id=alice.id,
                                   where=lambda c: "Bob wrote" in c.text)
    assert "forwarded message" not in answer.text
    said = [m for m in asked[0]["messages"] if m["role"] == "user"][-1]
    assert "<forwarded_message>\n/water 50\n</forwarded_message>" in said["content"]
    assert "not the person's words" in said["content"]
    offered = {tool["function"]["name"] for tool in asked[0].get("tools") or []}
    assert "log_drink" not in offered and offered  # read tools only
    await telegram.dialog.settle()
    assert await water_ml(brain) == 0
    after = await personal_rows(brain)
    changed = {table for table, count in after.items() if count != before[table]}
    assert "drink_entries" not in changed and not {t for t in changed if t.startswith("memory")}, changed


async def water_ml(brain: Brain) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.coalesce(func.sum(DrinkEntry.quantity_ml), 0))) or 0)
