"""A change of embedder on an installation with memories: the memories are re-embedded in batches, recall keeps
finding them meanwhile (by their words) and afterwards (by meaning too), and nothing is lost. The new embedder is
Ollama's, served by the fake Ollama server (tests/fakes/ollama_server.py) through the real `ollama` client."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from app.wiring import open_app
from bot.settings import Settings
from brain.clock import FixedClock
from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.background import BACKGROUND
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
        fake.release_embeds()  # nothing left waiting when a test failed while requests were held
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


async def until(check: Callable[[], Awaitable[bool]], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        await asyncio.sleep(0.05)


async def test_an_installation_started_with_another_embedder_re_embeds_in_the_background(
        brain: Brain, database_url: str, clock: FixedClock, ollama: FakeOllama) -> None:
    """The app as `companion run` opens it, with EMBEDDER=ollama on a database whose memories are WordLlama's: the
    re-embedding starts by itself, recall answers while it waits on the model server, and by meaning after it."""
    person = await new_user(brain)
    before = Memory(brain, WordLlamaEmbedder())
    for i, line in enumerate(LINES):
        await before.remember(person, line, MONDAY - timedelta(hours=len(LINES) - i))
    await before.ingest_until_promoted(person)
    assert await stored_spaces(brain, person) == {"wordllama@256": len(LINES)}

    # The memories' texts (nomic-embed-text's document prefix) wait at the server; questions are answered, and so
    # are the everyday sentences recall compares a question with (brain.memory.background).
    ollama.embed_held = lambda first: (first.startswith("search_document: ")
                                       and first.removeprefix("search_document: ") not in BACKGROUND)
    settings = Settings(_env_file=None, database_url=database_url, embedder="ollama",  # type: ignore[call-arg]
                        ollama_host=ollama.url, embedding_model="nomic-embed-text", companion_enabled=False)
    async with open_app(settings, clock=clock) as app:
        memory = app.brain.memory
        assert memory is not None
        new_space = space_of(memory.embedder).key
        assert new_space == "ollama/nomic-embed-text@768"

        async def asked_for_documents() -> bool:
            return any(str(t).startswith("search_document: ") for r in ollama.embed_requests for t in r["input"])

        await until(asked_for_documents)  # the background re-embedding has sent its first batch

        # During: nothing of the new space yet, and the words still find the memory.
        assert (await reembed_progress(app.brain.transactions, memory.embedder)).remaining == len(LINES)
        [found, *_] = await memory.recall(person, "Who recommended the Alhambra?", MONDAY)
        assert "Alhambra" in found.text and found.lexical

        ollama.release_embeds()

        async def all_re_embedded() -> bool:
            return (await reembed_progress(app.brain.transactions, memory.embedder)).remaining == 0

        await until(all_re_embedded)
        assert await stored_spaces(brain, person) == {new_space: len(LINES)}

        # After: by meaning (the fake's vectors are bags of words) as well as by words.
        [found, *_] = await memory.recall(person, "oat milk and bananas", MONDAY + timedelta(hours=1))
        assert found.text == "Bought oat milk and bananas at the market." and found.vector > 0.5
        [found, *_] = await memory.recall(person, "Who recommended the Alhambra?", MONDAY + timedelta(hours=1))
        assert "Alhambra" in found.text and found.vector > 0
