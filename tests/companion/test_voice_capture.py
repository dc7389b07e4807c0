"""A voice note's words are the person's words: the model gets them as the person's message, and the short-term
memory keeps them (with the model's answer) as said by the person. The audio itself is in no table."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from bot.dialog import Dialog
from bot.inbound import Inbound, Media
from bot.voice import VoiceNotes
from brain.core import Brain
from brain.media.speech import SpeechConfig, SpeechToText
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.memory.models import ShortTermEntry
from brain.pipeline_log import PipelineLog
from tests.fakes.ollama_server import FakeOllama, Script
from tests.fakes.stt_server import FakeSpeechServer, fake_audio

WORDS = "My sister Lena moves to Hamburg next month"


async def test_a_voice_notes_words_are_remembered_as_the_persons(brain: Brain, dialog: Dialog,
                                                                 fake: FakeOllama) -> None:
    stt = FakeSpeechServer()
    await stt.start()
    dialog.voice = VoiceNotes(SpeechToText(SpeechConfig(stt.url, "whisper-test")))
    brain.memory = Memory(brain, WordLlamaEmbedder(), log=PipelineLog(brain.db.sessions, brain.clock))
    audio = fake_audio(WORDS)

    async def fetch() -> bytes:
        return audio

    try:
        fake.script(Script(content="Hamburg is lovely in spring."))
        sent = await dialog.handle(Inbound(platform="test", platform_user_id="speaker", chat_id="speaker",
                                           message_id=uuid.uuid4().hex, language_code="en",
                                           media=Media(kind="voice", fetch=fetch, duration_s=3, size=len(audio))))
        await dialog.settle()
        assert [m.text for m in sent] == [f"🎙 {WORDS}\n\nHamburg is lovely in spring."]
        async with brain.transactions.read() as session:
            rows = (await session.execute(select(ShortTermEntry.speaker, ShortTermEntry.text)
                                          .order_by(ShortTermEntry.speaker))).all()
        # The answer is remembered without the "🎙" line: that is the person's words, shown back.
        assert [(r.speaker, r.text) for r in rows] == [("assistant", "Hamburg is lovely in spring."), ("user", WORDS)]
    finally:
        await brain.memory.log.close()
        await dialog.voice.close()
        await stt.stop()
