"""What a conversation leaves in the short-term memory: the person's message and the model's answer, never a
canned reply of the app."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.memory.models import ShortTermEntry
from brain.pipeline_log import PipelineLog
from tests.companion.conftest import system_prompt
from tests.fakes.ollama_server import FakeOllama, Script


async def captured(brain: Brain) -> list[tuple[str, str]]:
    async with brain.transactions.read() as session:
        rows = (await session.execute(select(ShortTermEntry.speaker, ShortTermEntry.text)
                                      .order_by(ShortTermEntry.speaker))).all()
    return [(row.speaker, row.text) for row in rows]


async def test_the_models_answer_is_remembered_with_the_message(brain: Brain, person, dialog,
                                                                fake: FakeOllama) -> None:
    brain.memory = Memory(brain, WordLlamaEmbedder(), log=PipelineLog(brain.db.sessions, brain.clock))
    try:
        fake.script(Script(content="Hamburg is lovely in spring. Will you visit her?"))
        await person().send("My sister Lena moves to Hamburg next month")
        await dialog.settle()
        assert await captured(brain) == [("assistant", "Hamburg is lovely in spring. Will you visit her?"),
                                         ("user", "My sister Lena moves to Hamburg next month")]
    finally:
        await brain.memory.log.close()


async def test_the_model_reads_each_memory_with_its_day_and_who_said_it(brain: Brain, person, dialog, clock,
                                                                         fake: FakeOllama) -> None:
    brain.memory = Memory(brain, WordLlamaEmbedder())
    alice = person()
    await alice.send("/help")  # known from here on
    user = await alice.user()
    # Said at 23:30 UTC on Wednesday 25 November: already Thursday in Berlin, the person's zone.
    said = datetime(2026, 11, 25, 23, 30, tzinfo=UTC)
    await brain.memory.remember(user.id, "My tortoise Oskar hibernates in the cellar from November.", said)
    await brain.memory.remember(user.id, "Oskar should hibernate at about 5 °C, a fridge works well.", said,
                                speaker="assistant")
    await brain.memory.ingest_until_promoted(user.id)
    fake.script(Script(content="In the cellar, since November."))
    await alice.send("Where does my tortoise Oskar hibernate?")
    lines = [line.split(" (", 1)[0] for line in system_prompt(fake.requests[-1]).splitlines()
             if line.startswith("- ") and "Oskar" in line]
    assert sorted(lines) == [  # each with the reason it came after it, in brackets
        "- Thu 2026-11-26, the person said: My tortoise Oskar hibernates in the cellar from November.",
        "- Thu 2026-11-26, you said: Oskar should hibernate at about 5 °C, a fridge works well.",
    ]
