"""A companion answer in Telegram while the model writes it: the first words are sent, then edited as the text grows,
and the finished answer is the same message, complete, in HTML. A 429 on an edit holds the chat and the finished
text still arrives; a restart after the answer was written finishes the shown message instead of sending it again.
The model is the fake Ollama server, whose pieces a gate lets out one at a time (no sleeps)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from adapters.telegram.adapter import TelegramAdapter
from bot.delivery.stream import Pace
from bot.dialog import Dialog
from bot.models import DeliveryState
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.core import Brain
from brain.outbox.models import PENDING, SENT, OutboxMessage
from tests.fakes.ollama_server import ChunkGate, FakeOllama, Script, call
from tests.telegram.conftest import make_adapter
from tests.telegram.fake_bot_api import Call, FakeBotAPI, Person

ANSWER = "One, two, three, four."  # the fake sends it in pieces of six characters
PIECES = ["One, t", "wo, th", "ree, f", "our."]
AT_ONCE = Pace(first_after=0.0, every=0.0)  # the gate paces the model; the test waits for each request


@pytest.fixture
def companion(brain: Brain, llm: LLM) -> Companion:
    brain.companion = Companion(brain, llm, CompanionConfig())
    return brain.companion


@pytest.fixture
async def streaming(brain: Brain, dialog: Dialog, api: FakeBotAPI,
                    companion: Companion) -> AsyncIterator[TelegramAdapter]:
    adapter = make_adapter(brain, dialog, api, stream=AT_ONCE)
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()


def edits(api: FakeBotAPI, who: Person) -> list[Call]:
    return api.calls_of("editMessageText", who.id)


async def finished(api: FakeBotAPI, who: Person, *, count: int = 1) -> list[Call]:
    """The edits that carry a finished answer (HTML), once `count` of them arrived."""
    return await api.wait_for("editMessageText", chat_id=who.id, count=count,
                              where=lambda c: c.params.get("parse_mode") == "HTML")


async def stream_until_shown(api: FakeBotAPI, gate: ChunkGate, who: Person, text: str) -> Call:
    """Writes `text`, lets the first piece out and returns the message that shows it."""
    api.push(api.text(who, text))
    await gate.allow(1)
    (shown,) = await api.wait_for("sendMessage", chat_id=who.id)
    return shown


async def test_the_answer_is_shown_while_it_is_written_and_finished_in_place(
        streaming: TelegramAdapter, api: FakeBotAPI, fake_ollama: FakeOllama, person, brain: Brain) -> None:
    gate = ChunkGate()
    fake_ollama.script(Script(content=ANSWER, chunks=4, gate=gate))
    alice = person()
    shown = await stream_until_shown(api, gate, alice, "count to four")
    assert shown.text == PIECES[0]
    assert "parse_mode" not in shown.params  # a draft is plain text
    for count in (1, 2):  # each further piece edits the same message to the longer text
        await gate.allow(1)
        await api.wait_for("editMessageText", chat_id=alice.id, count=count)
        assert edits(api, alice)[-1].text == "".join(PIECES[:count + 1])
    await gate.allow(1)
    (final,) = await finished(api, alice)
    assert final.text == ANSWER
    assert all(e.params["message_id"] == shown.params["_message_id"] for e in edits(api, alice))
    texts = [e.text for e in edits(api, alice)]
    assert all(ANSWER.startswith(t) for t in texts) and texts == sorted(texts, key=len)
    assert len(api.calls_of("sendMessage", alice.id)) == 1  # one message for the one answer
    row = await settled_row(brain, alice)  # settled right after Telegram took it
    assert row.status == SENT and row.text == ANSWER
    async with brain.transactions.read() as session:
        assert await session.scalar(select(DeliveryState)) is None  # nothing left to finish


async def settled_row(brain: Brain, who: Person, within: float = 10.0) -> OutboxMessage:
    """The person's outbox row, once it is no longer pending (polled with a deadline)."""
    async with asyncio.timeout(within):
        while True:
            async with brain.transactions.read() as session:
                row = await session.scalar(select(OutboxMessage).where(OutboxMessage.chat_id == str(who.id)))
            if row is not None and row.status != PENDING:
                return row
            await asyncio.sleep(0.01)


async def test_a_proposal_after_a_streamed_answer_comes_as_its_own_message_with_buttons(
        streaming: TelegramAdapter, api: FakeBotAPI, fake_ollama: FakeOllama, person) -> None:
    gate = ChunkGate()
    fake_ollama.script(Script(content="Let me note that.", chunks=2, gate=gate,
                              tool_calls=[call("create_task", title="Call mom")]),
                       Script(content="I've proposed it."))
    alice = person()
    shown = await stream_until_shown(api, gate, alice, "remind me to call mom")
    await gate.allow(1)
    (final,) = await finished(api, alice)
    assert final.text == "Let me note that.\n\nI've proposed it."
    assert final.params["message_id"] == shown.params["_message_id"]
    (_, proposal) = await api.wait_for("sendMessage", chat_id=alice.id, count=2)
    assert "Call mom" in proposal.text and list(proposal.buttons()) == ["Approve", "Reject"]


async def test_a_429_on_an_edit_holds_the_chat_and_the_finished_text_still_arrives(
        streaming: TelegramAdapter, api: FakeBotAPI, fake_ollama: FakeOllama, person) -> None:
    gate = ChunkGate()
    fake_ollama.script(Script(content=ANSWER, chunks=4, gate=gate))
    # The next two edits are refused with flood control: the draft after the first piece, then the finished answer.
    api.fail("editMessageText", status=429, description="Too Many Requests: retry after 1", retry_after=1, times=2)
    alice = person()
    shown = await stream_until_shown(api, gate, alice, "count to four")
    await gate.allow(1)
    await api.wait_for("editMessageText", chat_id=alice.id)  # refused: the drafts wait for the chat
    await gate.allow(2)
    held, final = await finished(api, alice, count=2)
    assert held.text == final.text == ANSWER  # the refused finish was tried again, whole
    assert final.params["message_id"] == shown.params["_message_id"]
    assert api.refused == 2
    assert len(api.calls_of("sendMessage", alice.id)) == 1


async def test_a_restart_after_the_answer_was_written_finishes_the_shown_message_without_a_duplicate(
        brain: Brain, dialog: Dialog, api: FakeBotAPI, fake_ollama: FakeOllama, companion: Companion,
        person) -> None:
    gate = ChunkGate()
    fake_ollama.script(Script(content=ANSWER, chunks=4, gate=gate))
    api.fail("editMessageText", status=429, description="Too Many Requests: retry after 1", retry_after=1,
             when=lambda params: params.get("parse_mode") == "HTML")
    alice = person()
    before = make_adapter(brain, dialog, api, stream=AT_ONCE)
    await before.start()
    try:
        shown = await stream_until_shown(api, gate, alice, "count to four")
        await gate.allow(3)
        await finished(api, alice)  # refused: the answer is written, its row waits for the chat
    finally:
        await before.stop()  # the process ends before the row was delivered
    after = make_adapter(brain, dialog, api, stream=AT_ONCE)  # a new process on the same database
    await after.start()
    try:
        _, final = await finished(api, alice, count=2)
    finally:
        await after.stop()
    assert final.text == ANSWER and final.params["message_id"] == shown.params["_message_id"]
    assert [c.text for c in api.calls_of("sendMessage", alice.id)] == [PIECES[0]]  # never sent a second time


async def test_a_shown_message_that_cannot_be_edited_any_more_gets_the_answer_as_a_new_message(
        streaming: TelegramAdapter, api: FakeBotAPI, fake_ollama: FakeOllama, person) -> None:
    gate = ChunkGate()
    fake_ollama.script(Script(content=ANSWER, chunks=4, gate=gate))
    api.fail("editMessageText", status=400, description="Bad Request: message to edit not found",
             when=lambda params: params.get("parse_mode") == "HTML")  # the person deleted the draft
    alice = person()
    shown = await stream_until_shown(api, gate, alice, "count to four")
    await gate.allow(3)
    _, again = await api.wait_for("sendMessage", chat_id=alice.id, count=2)
    assert shown.text == PIECES[0] and again.text == ANSWER  # the words arrive all the same
