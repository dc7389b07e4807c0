"""A change of embedder on an installation with memories: the memories are re-embedded in batches, recall keeps
finding them meanwhile (by their words) and afterwards (by meaning too), and nothing is lost. The new embedder is
Ollama's, served by the fake Ollama server (tests/fakes/ollama_server.py) through the real `ollama` client."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import OllamaEmbedder, WordLlamaEmbedder, build_embedder, space_of
from brain.memory.reembed import reembed_all, reembed_batch, reembed_progress
from tests.fakes.ollama_server import FakeOllama
from tests.integration.conftest import new_user

MONDAY = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
LINES = [
    "My sister Anna loves bouldering in the climbing gym.",
    "The washing machine makes a strange noise when spinning.",
    "Bought oat milk and bananas at the market.",
    "Jürgen recommended the Alhambra tour in Granada.",
    "Our landlord raises the rent by forty euros in March.",
]


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    """The fake server on a loop of its own thread: the embedder's client blocks its caller, as it would with a
    real server in another process."""
    fake = FakeOllama()
    fake.embed_dim = 768  # nomic-embed-text's length
    fake.embed_words = True
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result(timeout=10)
    try:
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


async def stored_spaces(brain: Brain, user_id: object) -> dict[str, int]:
    async with brain.transactions.read() as session:
        rows = await session.execute(text(
            "SELECT embedder, count(*) AS n FROM memory_nodes WHERE user_id = :u GROUP BY embedder"), {"u": user_id})
        return {row.embedder: int(row.n) for row in rows}


async def test_switching_the_embedder_re_embeds_the_memories_and_recall_works_during_and_after(
        brain: Brain, ollama: FakeOllama) -> None:
    person = await new_user(brain)
    before = Memory(brain, WordLlamaEmbedder())
    for i, line in enumerate(LINES):
        await before.remember(person, line, MONDAY - timedelta(hours=len(LINES) - i))
    await before.ingest_until_promoted(person)
    assert await stored_spaces(brain, person) == {"wordllama@256": len(LINES)}

    # The installation restarts with EMBEDDER=ollama (nomic-embed-text, 768 dimensions).
    choice = build_embedder("ollama", ollama_host=ollama.url, model="nomic-embed-text")
    assert isinstance(choice.embedder, OllamaEmbedder) and choice.fallback is None
    after = Memory(brain, choice.embedder)
    new_space = space_of(choice.embedder).key
    assert new_space == "ollama/nomic-embed-text@768"

    # Nothing re-embedded yet: the words still find the memory (the vector channel has nothing of this space).
    [found, *_] = await after.recall(person, "Who recommended the Alhambra?", MONDAY)
    assert "Alhambra" in found.text and found.lexical

    # A message said now waits in the new space; one said before the change is re-embedded first.
    await after.remember(person, "Anna's birthday party is on the twelfth.", MONDAY)
    assert (await reembed_progress(brain.transactions, choice.embedder)).remaining == len(LINES)

    # Halfway: two batches of two.
    assert await reembed_batch(brain.transactions, choice.embedder, batch=2) == 2
    assert await reembed_batch(brain.transactions, choice.embedder, batch=2) == 2
    assert await stored_spaces(brain, person) == {"wordllama@256": 1, new_space: 4}
    [found, *_] = await after.recall(person, "strange noise of the washing machine", MONDAY)
    assert "washing machine" in found.text

    seen = []
    done = await reembed_all(brain.transactions, choice.embedder, batch=2, on_progress=seen.append)
    assert done.remaining == 0 and done.done == len(LINES) + 1  # the new entry counts, it is of the new space
    assert seen and seen[-1].remaining == 0
    assert await stored_spaces(brain, person) == {new_space: len(LINES)}
    await after.ingest_until_promoted(person)
    assert await stored_spaces(brain, person) == {new_space: len(LINES) + 1}

    # After: by meaning (the fake's vectors are bags of words) and by words.
    [found, *_] = await after.recall(person, "oat milk and bananas", MONDAY + timedelta(hours=1))
    assert found.text == "Bought oat milk and bananas at the market." and found.vector > 0.5
    [found, *_] = await after.recall(person, "When is Anna's birthday party?", MONDAY + timedelta(hours=1))
    assert "birthday" in found.text
    # The queries went out with nomic-embed-text's prefixes, the memories with the document prefix.
    inputs = [t for request in ollama.embed_requests for t in request["input"]]
    assert "search_query: When is Anna's birthday party?" in inputs
    assert "search_document: Bought oat milk and bananas at the market." in inputs
