"""Photos through the real python-telegram-bot against the fake Bot API and the real `ollama` client (images=)
against the fake Ollama server: a meal photo becomes a meal proposal that, approved, is logged with
MealFromPhotoLogged; any other photo is answered as a question; without a vision model, or when it fails, one
message and nothing stored."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable

import pytest
from sqlalchemy import select

from adapters.telegram.adapter import TelegramAdapter
from bot.photos import Photos
from brain.companion.models import CompanionSettings
from brain.core import Brain
from brain.events.store import EventRecord
from brain.media.vision import Vision, VisionConfig
from brain.modules.food.models import Meal
from tests.fakes.ollama_server import FakeOllama, Script
from tests.telegram.conftest import press, replies_after, send, serving, user_id_of
from tests.telegram.fake_bot_api import Call, FakeBotAPI, Person
from tests.telegram.test_voice_notes import ANSWERING, table_counts

VISION_MODEL = "qwen2.5vl:3b"
PLATE = b"\xff\xd8\xff\xe0 a plate of spaghetti"
SPAGHETTI = json.dumps({"meal": True, "description": "Spaghetti Bolognese", "foods": ["pasta", "minced beef"],
                        "kcal_min": 550, "kcal_max": 750, "confidence": 0.8})


def photos(url: str | None, *, local: bool = True) -> Photos:
    return Photos(None if url is None else Vision(VisionConfig(url, VISION_MODEL, local=local, timeout_s=5.0)))


@pytest.fixture
def serve(brain: Brain, api: FakeBotAPI) -> Callable[[Photos], contextlib.AbstractAsyncContextManager[TelegramAdapter]]:
    return lambda seeing: serving(brain, api, photos=seeing)


async def show(api: FakeBotAPI, who: Person, update: dict[str, object], *, replies: int = 1) -> list[Call]:
    before = len(api.calls_of("sendMessage", who.id))
    api.push(update)
    return await replies_after(api, who.id, before, replies)


async def meals(brain: Brain) -> list[Meal]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(Meal))).all())


async def test_a_meal_photo_becomes_an_approved_meal_with_its_event(
        brain: Brain, api: FakeBotAPI, fake_ollama: FakeOllama, serve, person) -> None:
    fake_ollama.script(Script(content=SPAGHETTI))
    alice = person()
    async with serve(photos(fake_ollama.url)):
        (proposal,) = await show(api, alice, api.photo(alice, PLATE))
        # 08:30 in Berlin: breakfast, whatever is on the plate.
        assert proposal.text == "That looks like Spaghetti Bolognese, about 550–750 kcal. Log it as your breakfast?"
        assert set(proposal.buttons()) == {"Approve", "Edit", "Reject"}
        assert await meals(brain) == []  # a proposal, nothing logged yet
        (logged,) = await press(api, alice, "Approve", proposal)
    assert logged.text.startswith("Logged breakfast: Spaghetti Bolognese. Today: 650 of 2,000 kcal")
    (meal,) = await meals(brain)
    assert (meal.input_type, meal.meal_type, meal.calories) == ("photo", "breakfast", 650)
    async with brain.transactions.read() as session:
        (event,) = (await session.scalars(select(EventRecord).where(EventRecord.type == "MealFromPhotoLogged"))).all()
    assert event.payload["meal_id"] == str(meal.id) and event.payload["calories"] == 650
    assert event.payload["foods"] == ["pasta", "minced beef"] and event.payload["confidence"] == 0.8
    assert event.payload["photo_media_id"].startswith("ufile")  # Telegram's id of the photo, not the photo
    # The largest size went to the vision model, through images=, asking for JSON.
    (request,) = fake_ollama.requests
    assert request["model"] == VISION_MODEL and request["format"] == "json"
    assert fake_ollama.images(0) == [PLATE]


async def test_rejected_or_edited_the_meal_is_not_logged(
        brain: Brain, api: FakeBotAPI, fake_ollama: FakeOllama, serve, person) -> None:
    fake_ollama.script(Script(content=SPAGHETTI), Script(content=SPAGHETTI))
    alice = person()
    async with serve(photos(fake_ollama.url)):
        (first,) = await show(api, alice, api.photo(alice, PLATE))
        (rejected,) = await press(api, alice, "Reject", first)
        (second,) = await show(api, alice, api.photo(alice, PLATE))
        (edit,) = await press(api, alice, "Edit", second)
    assert rejected.text == "Not logged."
    assert edit.text.splitlines()[-1] == "/meal breakfast Spaghetti Bolognese 650 kcal"
    assert await meals(brain) == []


async def test_any_other_photo_is_answered_as_a_question_about_it(
        brain: Brain, api: FakeBotAPI, fake_ollama: FakeOllama, serve, person) -> None:
    fake_ollama.script(Script(content='{"meal": false}'), Script(content="A tabby cat asleep on a sofa."))
    alice = person()
    async with serve(photos(fake_ollama.url)):
        await send(api, alice, "/help")
        before = await table_counts(brain, ANSWERING)
        (answer,) = await show(api, alice, api.photo(alice, b"\xff\xd8 a cat", caption="What animal is this?"))
        assert answer.text == "A tabby cat asleep on a sofa."
        assert await table_counts(brain, ANSWERING) == before
    asked = fake_ollama.requests[1]
    assert "What animal is this?" in asked["messages"][-1]["content"] and not asked.get("format")
    assert fake_ollama.images(1) == [b"\xff\xd8 a cat"]


async def test_without_a_vision_model_a_button_starts_the_meal_flow_by_text(
        brain: Brain, api: FakeBotAPI, serve, person) -> None:
    alice = person()
    async with serve(photos(None)):
        await send(api, alice, "/help")
        before = await table_counts(brain, ANSWERING)
        (told,) = await show(api, alice, api.photo(alice, PLATE))
        assert await table_counts(brain, ANSWERING) == before
        (usage,) = await press(api, alice, "Log a meal by text", told)
    assert told.text == "I can't look at pictures without a vision model; tell me what you ate."
    assert "Log one: /meal lunch Pasta 650 kcal" in usage.text
    assert api.downloads == []


async def test_a_vision_model_that_fails_is_told_and_nothing_is_stored(
        brain: Brain, api: FakeBotAPI, fake_ollama: FakeOllama, serve, person) -> None:
    fake_ollama.script(Script(status=500, error="model crashed"))
    alice = person("Alice", language_code="de")
    async with serve(photos(fake_ollama.url)):
        await send(api, alice, "/help")
        before = await table_counts(brain, ANSWERING)
        (told,) = await show(api, alice, api.photo(alice, PLATE))
        await send(api, alice, "/help")  # nothing else came before it
        assert await table_counts(brain, ANSWERING) == before
    assert "Bildmodell" in told.text


async def test_a_remote_vision_model_sees_nothing_without_consent(
        brain: Brain, api: FakeBotAPI, fake_ollama: FakeOllama, serve, person) -> None:
    fake_ollama.script(Script(content=SPAGHETTI))
    alice = person()
    async with serve(photos(fake_ollama.url, local=False)):
        (told,) = await show(api, alice, api.photo(alice, PLATE))
        assert "does not run on your own hardware" in told.text
        assert fake_ollama.requests == [] and api.downloads == []
        async with brain.transactions.begin() as uow:
            uow.session.add(CompanionSettings(user_id=await user_id_of(brain, alice), remote_consent=True))
        (proposal,) = await show(api, alice, api.photo(alice, PLATE))
    assert proposal.text.startswith("That looks like Spaghetti Bolognese")
