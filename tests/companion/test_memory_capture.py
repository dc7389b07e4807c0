"""What a conversation leaves in the short-term memory: the person's message and the model's answer, never a
canned reply of the app."""

from __future__ import annotations

from sqlalchemy import select

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.memory.models import ShortTermEntry
from brain.pipeline_log import PipelineLog
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
