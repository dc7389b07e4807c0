"""An embedder that takes its time (e5 needs tens to hundreds of milliseconds a text on a small machine, Ollama a
request) never holds up the event loop: capture, recall, goals and reinforcement embed in a worker thread, so the
bot answers other people meanwhile."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.capture import Message
from brain.memory.embedder import WordLlamaEmbedder, embedded
from brain.memory.models import ShortTermEntry

MONDAY = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)


class HeldEmbedder:
    """WordLlama's vectors, given only once the event loop has let it go (`release`, set from the loop): an embedder
    called on the loop's own thread would wait for itself and fail."""

    name = "wordllama"
    dim = 256
    unrelated_cosine = 0.0

    def __init__(self) -> None:
        self.inner = WordLlamaEmbedder()
        self.release = threading.Event()
        self.loop = asyncio.get_running_loop()
        self.called = asyncio.Event()  # set through the loop, from whichever thread the embedder runs on
        self.threads: list[bool] = []  # per call: on the event loop's thread?

    def _held(self, texts: Sequence[str], query: bool) -> list[list[float]]:
        self.threads.append(threading.current_thread() is threading.main_thread())
        self.loop.call_soon_threadsafe(self.called.set)
        assert self.release.wait(10), "the event loop never let the embedder go: it was held up by it"
        self.release.clear()
        return self.inner.embed_queries(texts) if query else self.inner.embed(texts)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._held(texts, False)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._held(texts, True)


async def let_go(embedder: HeldEmbedder) -> None:
    """Runs on the event loop: waits (without blocking it) for the embedder to be called, then releases it."""
    while True:
        await embedder.called.wait()
        embedder.called.clear()
        embedder.release.set()


async def test_a_slow_embedder_runs_in_a_worker_thread() -> None:
    held = HeldEmbedder()
    releaser = asyncio.create_task(let_go(held))
    try:
        [vector] = await embedded(held, ["Anna loves bouldering."])
        [asked] = await embedded(held, ["Who loves bouldering?"], query=True)
    finally:
        releaser.cancel()
    assert held.threads == [False, False]
    assert len(vector) == len(asked) == 256


async def test_capture_recall_and_reinforcement_leave_the_event_loop_free(brain: Brain, user) -> None:
    held = HeldEmbedder()
    memory = Memory(brain, held)
    releaser = asyncio.create_task(let_go(held))
    try:
        await memory.remember(user.id, "My sister Anna loves bouldering in the climbing gym.", MONDAY)
        await memory.ingest_until_promoted(user.id)
        found = await memory.recall(user.id, "Who loves bouldering?", MONDAY)
        await memory.reinforce_from_answer(user.id, "Your sister Anna loves bouldering.", found)
    finally:
        releaser.cancel()
    assert found and "bouldering" in found[0].text
    assert len(held.threads) >= 3 and not any(held.threads)  # capture, the question, the answer: none on the loop


class CountingEmbedder(WordLlamaEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.passages.extend(texts)
        return super().embed(texts)


async def test_an_answer_embedded_for_reinforcement_is_not_embedded_again_when_the_turn_is_captured(
        brain: Brain, user) -> None:
    counting = CountingEmbedder()
    memory = Memory(brain, counting)
    await memory.remember(user.id, "My sister Anna loves bouldering in the climbing gym.", MONDAY)
    await memory.ingest_until_promoted(user.id)
    found = await memory.recall(user.id, "Who loves bouldering?", MONDAY)
    answer = "Your sister Anna loves bouldering."
    await memory.reinforce_from_answer(user.id, answer + "\n", found)
    await memory.remember_many(user.id, [Message("Who loves bouldering?", "user"), Message(answer, "assistant")],
                               MONDAY)
    assert counting.passages.count(answer) == 1
    async with brain.transactions.read() as session:
        stored = (await session.execute(select(ShortTermEntry.text, ShortTermEntry.embedding)
                                        .where(ShortTermEntry.user_id == user.id, ShortTermEntry.text == answer))).one()
    assert list(stored.embedding) == pytest.approx(counting.embed([answer])[0], abs=1e-3)
