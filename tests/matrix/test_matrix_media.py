"""Voice notes (m.audio) and photos (m.image) on Matrix: a person uploads the file to the real homeserver and sends
it; the bot downloads it with matrix-nio and the dialog handles it as on Telegram (the fake speech-to-text server
and the fake Ollama server with a vision model stand in for the models)."""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import AsyncIterator

import pytest
from nio import RoomSendResponse, UploadResponse
from sqlalchemy import select

from bot.access import AccessPolicy
from bot.dialog import Dialog
from bot.photos import Photos
from bot.voice import VoiceNotes
from brain.core import Brain
from brain.events.store import EventRecord
from brain.media.speech import SpeechConfig, SpeechToText
from brain.media.vision import Vision, VisionConfig
from brain.modules.drink.models import DrinkEntry
from brain.modules.food.models import Meal
from tests.fakes.ollama_server import FakeOllama, Script
from tests.fakes.stt_server import FakeSpeechServer, fake_audio
from tests.matrix.people import MatrixPerson, numbered
from tests.matrix.test_matrix_bot import greeted
from tests.telegram.test_voice_notes import ANSWERING, table_counts

pytestmark = pytest.mark.slow
_txn = itertools.count()


@pytest.fixture
async def stt() -> AsyncIterator[FakeSpeechServer]:
    server = FakeSpeechServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def dialog(brain: Brain, stt: FakeSpeechServer, fake_ollama: FakeOllama) -> Dialog:
    """The dialog the Matrix bot of these tests serves: with a speech-to-text server and a vision model."""
    return Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open(),
                  voice=VoiceNotes(SpeechToText(SpeechConfig(stt.url, "whisper-test"))),
                  photos=Photos(Vision(VisionConfig(fake_ollama.url, "qwen2.5vl:3b"))))


async def send_file(person: MatrixPerson, room: str, msgtype: str, content: bytes, *, mime: str, name: str,
                    body: str | None = None, **info: object) -> str:
    uploaded, _ = await person.client.upload(io.BytesIO(content), content_type=mime, filename=name,
                                             filesize=len(content))
    assert isinstance(uploaded, UploadResponse), uploaded
    message = {"msgtype": msgtype, "body": body or name, "filename": name, "url": uploaded.content_uri,
               "info": {"mimetype": mime, "size": len(content), **info}}
    sent = await person.client.room_send(room, "m.room.message", message, tx_id=f"media{next(_txn)}")
    assert isinstance(sent, RoomSendResponse), sent
    return sent.event_id


async def test_a_voice_note_on_matrix_is_transcribed_and_logs_the_drink(
        matrix_bot, matrix_people, brain: Brain, stt: FakeSpeechServer) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    mark = alice.mark()
    await send_file(alice, room, "m.audio", fake_audio("two coffees"), mime="audio/ogg", name="voice.ogg",
                    duration=2500)
    logged = await alice.message_from(bot, room, after=mark, contains="🎙")
    assert logged.body.startswith("🎙 two coffees\n\nLogged 2 × 150 ml coffee")
    # Shown formatted as a quote on top of the answer.
    assert logged.source["content"]["formatted_body"].startswith(
        "<blockquote>🎙 two coffees</blockquote>Logged 2 × 150 ml coffee")
    async with brain.transactions.read() as session:
        drinks = (await session.scalars(select(DrinkEntry.drink_type))).all()
    assert drinks == ["coffee", "coffee"]
    assert stt.requests[0].language == "en" and stt.requests[0].size == len(fake_audio("two coffees"))


async def test_a_voice_note_over_the_limit_on_matrix_is_refused_and_nothing_is_stored(
        matrix_bot, matrix_people, brain: Brain, stt: FakeSpeechServer) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    await alice.say(bot, room, "/help", contains="What I understand")
    before = await table_counts(brain, ANSWERING | {"matrix_rooms", "matrix_messages"})
    mark = alice.mark()
    await send_file(alice, room, "m.audio", fake_audio("a long story"), mime="audio/ogg", name="voice.ogg",
                    duration=400_000)
    refused = await alice.message_from(bot, room, after=mark, contains="too long")
    assert "(400 s; at most 300 s)" in refused.body
    await alice.say(bot, room, "/help", contains="What I understand")
    assert len(alice.messages_from(bot, room, after=mark)) == 2  # the refusal and the help: nothing else
    assert await table_counts(brain, ANSWERING | {"matrix_rooms", "matrix_messages"}) == before
    assert stt.requests == []


async def test_a_meal_photo_on_matrix_becomes_an_approved_meal(
        matrix_bot, matrix_people, brain: Brain, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(content=json.dumps({"meal": True, "description": "Porridge with berries",
                                                  "kcal_min": 300, "kcal_max": 400, "confidence": 0.9})))
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    mark = alice.mark()
    picture = b"\xff\xd8\xff\xe0 porridge"
    await send_file(alice, room, "m.image", picture, mime="image/jpeg", name="breakfast.jpg", w=640, h=480)
    proposal = await alice.message_from(bot, room, after=mark, contains="That looks like")
    assert "Porridge with berries, about 300–400 kcal. Log it as your breakfast?" in proposal.body
    choices = numbered(proposal)
    assert set(choices) == {"Approve", "Edit", "Reject"}
    logged = await alice.say(bot, room, str(choices["Approve"]), contains="Logged")
    assert "Logged breakfast: Porridge with berries" in logged.body
    async with brain.transactions.read() as session:
        (meal,) = (await session.scalars(select(Meal))).all()
        (event,) = (await session.scalars(select(EventRecord).where(EventRecord.type == "MealFromPhotoLogged"))).all()
    assert (meal.input_type, meal.calories) == ("photo", 350)
    assert event.payload["photo_media_id"].startswith("mxc://")
    assert fake_ollama.images(0) == [picture]


async def test_a_photo_with_a_caption_on_matrix_is_answered_as_a_question(
        matrix_bot, matrix_people, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(content='{"meal": false}'), Script(content="A red bicycle."))
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    mark = alice.mark()
    await send_file(alice, room, "m.image", b"\xff\xd8 bike", mime="image/jpeg", name="bike.jpg",
                    body="What is this?")
    answer = await alice.message_from(bot, room, after=mark, contains="bicycle")
    assert answer.body == "A red bicycle."
    assert "What is this?" in fake_ollama.requests[1]["messages"][-1]["content"]
