"""Voice notes through the real python-telegram-bot against the fake Bot API (getFile and the file download) and
the real speech-to-text client against the fake server: the words are handled exactly as if typed (a drink is
logged, the model gets a turn), and every way it can fail is one message that changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from sqlalchemy import select

from adapters.telegram.adapter import TelegramAdapter
from bot.voice import VoiceLimits, VoiceNotes
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.companion.models import CompanionSettings, ConversationMessage
from brain.core import Brain
from brain.media.speech import SpeechConfig, SpeechToText
from brain.modules.drink.models import DrinkEntry
from tests.fakes.ollama_server import FakeOllama, Script, call
from tests.fakes.stt_server import FakeSpeechServer, fake_audio
from tests.reliability.test_bad_input import BOOKKEEPING, table_counts
from tests.telegram.conftest import replies_after, send, serving, user_id_of
from tests.telegram.fake_bot_api import Call, FakeBotAPI, Person

# What answering a message writes besides its effect: the reply, the update's id, the person's last activity, and
# for a reply with buttons the platform's id of it (written after the send, so a count may see it or not yet).
ANSWERING = BOOKKEEPING | {"telegram_updates", "telegram_deliveries", "keyboard_messages"}


@pytest.fixture
async def stt() -> AsyncIterator[FakeSpeechServer]:
    server = FakeSpeechServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def voice_notes(url: str | None, *, local: bool = True, limits: VoiceLimits = VoiceLimits()) -> VoiceNotes:
    speech = None if url is None else SpeechToText(SpeechConfig(url, "whisper-test", local=local, timeout_s=5.0))
    return VoiceNotes(speech, limits)


@pytest.fixture
def serve(brain: Brain, api: FakeBotAPI) -> Callable[[VoiceNotes], AsyncIterator[TelegramAdapter]]:
    """Starts the Telegram adapter over a dialog with these voice notes."""
    import contextlib

    @contextlib.asynccontextmanager
    async def start(voice: VoiceNotes) -> AsyncIterator[TelegramAdapter]:
        try:
            async with serving(brain, api, voice=voice) as adapter:
                yield adapter
        finally:
            await voice.close()

    return start  # type: ignore[return-value]


async def speak(api: FakeBotAPI, who: Person, update: dict[str, object], *, replies: int) -> list[Call]:
    before = len(api.calls_of("sendMessage", who.id))
    api.push(update)
    return await replies_after(api, who.id, before, replies)


async def drinks(brain: Brain) -> list[tuple[str, int]]:
    async with brain.transactions.read() as session:
        rows = (await session.scalars(select(DrinkEntry).order_by(DrinkEntry.created_at))).all()
    return [(d.drink_type, d.quantity_ml) for d in rows]


@pytest.mark.parametrize(("language", "words", "answer"), [
    ("de", "Ich hatte gerade zwei Kaffee", "Zwei Kaffee sind eingetragen."),
    ("en", "I just had two coffees", "Two coffees are logged."),
])
async def test_a_voice_note_becomes_a_model_turn_that_logs_a_drink(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, llm: LLM, fake_ollama: FakeOllama, serve, person,
        language: str, words: str, answer: str) -> None:
    brain.companion = Companion(brain, llm, CompanionConfig())
    fake_ollama.script(Script(tool_calls=[call("log_drink", drink_type="coffee", count=2)]), Script(content=answer))
    speaker = person(language_code=language)
    async with serve(voice_notes(stt.url)):
        (answered,) = await speak(api, speaker, api.voice(speaker, fake_audio(words)), replies=1)
    # The words heard, on top of the answer to them, in a quote Telegram folds to its first lines.
    assert answered.text == f"<blockquote expandable>🎙 {words}</blockquote>{answer}"
    assert answered.params["parse_mode"] == "HTML"
    assert [kind for kind, _ in await drinks(brain)] == ["coffee", "coffee"]
    # The language of the person is the hint; the model got the words as the person's message.
    (request,) = stt.requests
    assert request.language == language and request.model == "whisper-test" and request.size > 0
    assert [m["content"] for m in fake_ollama.requests[0]["messages"] if m["role"] == "user"] == [words]
    async with brain.transactions.read() as session:
        said = (await session.scalars(select(ConversationMessage.content).where(
            ConversationMessage.role == "user"))).all()
    assert said == [words]
    assert len(api.downloads) == 1


async def test_a_german_voice_note_without_a_model_logs_the_drink_the_parser_reads(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    hans = person("Hans", language_code="de")
    async with serve(voice_notes(stt.url)):
        (logged,) = await speak(api, hans, api.voice(hans, fake_audio("zwei Kaffee")), replies=1)
    assert logged.text.startswith("<blockquote expandable>🎙 zwei Kaffee</blockquote>2 × 150 ml Kaffee")
    assert logged.keyboard  # the drink's quick buttons, as for typed text
    assert [kind for kind, _ in await drinks(brain)] == ["coffee", "coffee"]
    assert stt.requests[0].language == "de"


async def test_an_audio_file_is_transcribed_like_a_voice_note(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    async with serve(voice_notes(stt.url)):
        (shown,) = await speak(api, alice, api.voice(alice, fake_audio("250 ml water"), audio=True), replies=1)
    assert shown.text.startswith("<blockquote expandable>🎙 250 ml water</blockquote>Logged 250 ml water")
    assert await drinks(brain) == [("water", 250)]
    assert stt.requests[0].file_name == "note.mp3"


async def test_a_spoken_command_runs_as_the_command(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    async with serve(voice_notes(stt.url)):
        (helped,) = await speak(api, alice, api.voice(alice, fake_audio("/help")), replies=1)
    assert helped.text.startswith("<blockquote expandable>🎙 /help</blockquote>What I understand")


# ---- every failure: one message, nothing stored, and the same voice note works later ------------------------
async def fails_cleanly(brain: Brain, api: FakeBotAPI, who: Person, update: dict[str, object]) -> str:
    """Sends `update` to a person who has written before; returns the one reply, after checking that it was the
    only one and that no table but the answering's bookkeeping changed."""
    await send(api, who, "/help")  # the person exists
    before = await table_counts(brain, ANSWERING)
    (reply,) = await speak(api, who, update, replies=1)
    await send(api, who, "/help")  # handled after the voice note in this chat: nothing else came in between
    assert api.calls_of("sendMessage", who.id)[-2].text == reply.text
    assert await table_counts(brain, ANSWERING) == before
    return reply.text


async def test_no_server_configured_is_told_and_nothing_is_downloaded(
        brain: Brain, api: FakeBotAPI, serve, person) -> None:
    alice = person()
    async with serve(voice_notes(None)):
        text = await fails_cleanly(brain, api, alice, api.voice(alice, fake_audio("two coffees")))
    assert "no speech-to-text server is set up" in text
    assert api.downloads == []


async def test_a_server_that_is_down_is_told_and_the_same_voice_note_works_later(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    stt.fail_next(503)
    note = api.voice(alice, fake_audio("two coffees"))
    async with serve(voice_notes(stt.url)):
        text = await fails_cleanly(brain, api, alice, note)
        assert "can't reach the speech-to-text server" in text
        assert await drinks(brain) == []
        (shown,) = await speak(api, alice, api.resend(note), replies=1)
    assert shown.text.startswith("<blockquote expandable>🎙 two coffees</blockquote>Logged 2 × 150 ml coffee")
    assert [kind for kind, _ in await drinks(brain)] == ["coffee", "coffee"]


async def test_a_server_that_does_not_listen_is_told(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    url = stt.url
    await stt.stop()
    alice = person("Alice", language_code="de")
    async with serve(voice_notes(url)):
        text = await fails_cleanly(brain, api, alice, api.voice(alice, fake_audio("zwei Kaffee")))
    assert "Spracherkennungs" in text  # in the person's language


async def test_a_voice_note_over_the_time_limit_is_refused_before_the_download(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    async with serve(voice_notes(stt.url)):
        text = await fails_cleanly(brain, api, alice, api.voice(alice, fake_audio("a long story"), duration=301))
    assert "too long (301 s; at most 300 s)" in text
    assert api.downloads == [] and stt.requests == []


async def test_a_voice_note_over_the_size_limit_is_refused(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    small = voice_notes(stt.url, limits=VoiceLimits(max_seconds=300, max_bytes=1024 * 1024))
    async with serve(small):
        reported = await fails_cleanly(brain, api, alice,
                                       api.voice(alice, fake_audio("hello"), size=21 * 1024 * 1024))
        # A file larger than Telegram said is caught after the download, before it is sent anywhere.
        actual = await fails_cleanly(brain, api, alice,
                                     api.voice(alice, fake_audio("x" * (1024 * 1024)), size=100))
    assert "too large" in reported and "too large" in actual
    assert stt.requests == []


async def test_unreadable_audio_is_told(brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    async with serve(voice_notes(stt.url)):
        text = await fails_cleanly(brain, api, alice, api.voice(alice, b"\x00\x01 not audio at all"))
    assert "couldn't make out any words" in text
    assert len(stt.requests) == 1


async def test_a_failed_download_is_told(brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    note = api.voice(alice, fake_audio("two coffees"))
    api.files.clear()  # Telegram no longer has the file
    async with serve(voice_notes(stt.url)):
        text = await fails_cleanly(brain, api, alice, note)
    assert "couldn't download that voice note" in text
    assert stt.requests == []


async def test_a_remote_server_hears_nothing_without_consent(
        brain: Brain, api: FakeBotAPI, stt: FakeSpeechServer, serve, person) -> None:
    alice = person()
    async with serve(voice_notes(stt.url, local=False)):
        text = await fails_cleanly(brain, api, alice, api.voice(alice, fake_audio("two coffees")))
        assert "does not run on your own hardware" in text
        assert stt.requests == [] and api.downloads == []
        async with brain.transactions.begin() as uow:
            uow.session.add(CompanionSettings(user_id=await user_id_of(brain, alice), remote_consent=True))
        (shown,) = await speak(api, alice, api.voice(alice, fake_audio("two coffees")), replies=1)
    assert shown.text.startswith("<blockquote expandable>🎙 two coffees</blockquote>")
    assert len(stt.requests) == 1

