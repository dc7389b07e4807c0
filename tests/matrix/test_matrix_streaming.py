"""A companion answer in Matrix while the model writes it, against a real Synapse: the first words come as a
message, each further piece as an edit (`m.replace`) of it, and the last edit is the complete answer; the person
sees the bot typing while it works and a read receipt on their message once it is handled. The model is the fake
Ollama server, whose pieces a gate lets out one at a time (no sleeps)."""

from __future__ import annotations

import pytest
from nio import ReceiptEvent, RoomMessageText, TypingNoticeEvent

from bot.delivery.stream import Pace
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.core import Brain
from tests.fakes.ollama_server import ChunkGate, FakeOllama, Script
from tests.matrix.people import MatrixPerson, Seen, edited_event
from tests.matrix.test_matrix_bot import greeted

pytestmark = pytest.mark.slow

ANSWER = "One, two, three, four."  # the fake sends it in pieces of six characters
PIECES = ["One, t", "wo, th", "ree, f", "our."]


def edits_of(alice: MatrixPerson, bot: str, event_id: str) -> list[str]:
    """The texts of `bot`'s edits of `event_id`, in order."""
    return [s.event.source["content"]["m.new_content"]["body"] for s in alice.seen
            if isinstance(s.event, RoomMessageText) and s.event.sender == bot and edited_event(s.event) == event_id]


async def test_the_answer_is_shown_while_it_is_written_and_edited_to_the_whole(
        bot_runner, matrix_people, brain: Brain, llm: LLM, fake_ollama: FakeOllama) -> None:
    brain.companion = Companion(brain, llm, CompanionConfig())
    await bot_runner.start(stream=Pace(first_after=0.0, every=0.0), typing_after=0.0)
    bot = bot_runner.user_id
    alice = await matrix_people()
    room = await greeted(alice, bot)
    gate = ChunkGate()
    fake_ollama.script(Script(content=ANSWER, chunks=4, gate=gate))
    mark = alice.mark()
    asked = await alice.send(room, "count to four")

    def typing(on: bool) -> object:
        return lambda s: s.room_id == room and isinstance(s.event, TypingNoticeEvent) \
            and (bot in s.event.users) == on

    await alice.wait_ephemeral(typing(True))
    await gate.held()
    await gate.allow(1)
    shown = await alice.message_from(bot, room, after=mark, contains="One")
    assert shown.body == PIECES[0]
    for count in (1, 2):
        await gate.allow(1)
        await alice.wait_until(lambda _, count=count: len(edits_of(alice, bot, shown.event_id)) >= count)
        assert edits_of(alice, bot, shown.event_id)[-1] == "".join(PIECES[:count + 1])
    await gate.allow(1)
    await alice.wait_until(lambda _: ANSWER in edits_of(alice, bot, shown.event_id))
    texts = edits_of(alice, bot, shown.event_id)
    assert all(ANSWER.startswith(t) for t in texts) and texts[-1] == ANSWER
    assert [m.body for m in alice.messages_from(bot, room, after=mark)] == [PIECES[0]]  # one message, edited

    def read(s: Seen) -> bool:
        return isinstance(s.event, ReceiptEvent) and any(
            r.event_id == asked and r.user_id == bot for r in s.event.receipts)

    await alice.wait_ephemeral(read)
    last = max(s.index for s in alice.ephemeral if typing(True)(s))
    await alice.wait_ephemeral(lambda s: s.index > last and typing(False)(s))  # the typing notice ended
