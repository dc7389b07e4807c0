"""Without a model the bot keeps working (the person is told once per outage, the rule-based parser takes
the message); sensitive content (meals, places, memories) never reaches a remote model without consent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from bot.access import AccessPolicy
from bot.dialog import Dialog
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM, TierConfig
from brain.companion.models import CompanionSettings
from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.modules.drink.models import DrinkEntry
from tests.companion.conftest import Person, conversation, count_rows, offered, tool_messages
from tests.fakes.ollama_server import FakeOllama, Script, call

DOWN = "I can't reach my language model right now"


async def test_model_down_is_said_once_and_the_parser_still_logs(brain: Brain, person, fake: FakeOllama) -> None:
    fake.default = Script(status=500, error="model crashed")
    alice = person()
    first = await alice.send("250 ml water")
    assert DOWN in first and "Logged 250 ml water" in first
    second = await alice.send("zwei Kaffee")
    assert DOWN not in second and "coffee" in second.lower()
    assert "Water: 250 ml" in await alice.send("/today")  # commands need no model
    async with brain.transactions.read() as session:
        assert len((await session.scalars(select(DrinkEntry))).all()) == 3
    assert await conversation(brain, (await alice.user()).id) == []  # nothing half-stored

    fake.default = Script(content="I'm back.")
    assert await alice.send("hello?") == "I'm back."
    fake.default = Script(status=500)
    assert DOWN in await alice.send("hello again")  # down again after it was back: told again


async def test_model_down_with_nothing_understood_says_both_in_one_message(person, fake: FakeOllama) -> None:
    fake.default = Script(status=503)
    alice = person()
    reply = await alice.send("tell me a joke")
    assert [m.text for m in alice.last] == [
        "I can't reach my language model right now, and I didn't understand that on my own. Try \"250 ml water\", "
        "\"two coffees\", \"Buy milk by Friday\" or /help."]
    assert DOWN in reply


async def test_a_model_lost_in_the_middle_keeps_what_was_done_and_does_not_parse_again(
        brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("log_drink", drink_type="water", quantity_ml=250)]))
    fake.default = Script(status=500)
    alice = person()
    reply = await alice.send("250 ml water")
    assert DOWN in reply and "Logged 250 ml water" in reply
    assert await count_rows(brain, DrinkEntry) == 1  # the parser did not log it a second time
    rows = await conversation(brain, (await alice.user()).id)
    assert [r.role for r in rows] == ["user", "assistant", "tool"]


# ---- privacy -----------------------------------------------------------------------------------------------
MEAL = "Zucchini lasagne"
PLACE = "Café Mondschein"
SECRET = "Dr. Hubertus Kleinschmidt"


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture
async def remote(brain: Brain, fake_ollama: FakeOllama, embedder: WordLlamaEmbedder) -> AsyncIterator[Dialog]:
    """A companion whose models both run remotely, with the memory switched on."""
    llm = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b", local=False),
                                "fast": TierConfig("qwen3:1.7b", local=False)},
              timeout_s=5.0, recheck_s=0.0, retry_delay_s=0.01)
    brain.companion = Companion(brain, llm, CompanionConfig())
    brain.memory = Memory(brain, embedder)
    dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open())
    yield dialog
    await dialog.settle()


async def sensitive_person(dialog: Dialog) -> Person:
    alice = Person(dialog, "alice-private")
    await alice.send(f"/meal lunch {MEAL} 650 kcal")
    await alice.send(f"/place {PLACE}")
    await alice.send(f"/remember My doctor is {SECRET}")
    return alice


async def consent(brain: Brain, person: Person, given: bool) -> None:
    user = await person.user()
    async with brain.transactions.begin() as uow:
        row = await uow.session.get(CompanionSettings, user.id)
        if row is None:
            uow.session.add(CompanionSettings(user_id=user.id, remote_consent=given))
        else:
            row.remote_consent = given


def asks_for_the_meals(body: dict[str, Any]) -> Script:
    if not tool_messages(body):
        return Script(tool_calls=[call("nutrition_summary"), call("get_task_stats")])
    return Script(content="Here is your day.")


async def test_sensitive_data_never_goes_to_a_remote_model_without_consent(
        brain: Brain, remote: Dialog, fake_ollama: FakeOllama) -> None:
    alice = await sensitive_person(remote)
    fake_ollama.default = asks_for_the_meals
    assert await alice.send("who is my doctor, what did I eat and where was I?") == "Here is your day."
    sent = fake_ollama.all_sent_text()
    for secret in (MEAL, PLACE, SECRET, "Meals:", "kcal"):
        assert secret not in sent
    tools = offered(fake_ollama.requests[0])
    assert "get_task_stats" in tools
    assert not tools & {"log_meal", "nutrition_summary", "create_place", "visit_place", "log_location"}
    refused = {m["tool_name"]: m["content"] for m in tool_messages(fake_ollama.requests[1])}
    assert "not_offered" in refused["nutrition_summary"]


async def test_with_consent_the_remote_model_sees_meals_places_and_memories(
        brain: Brain, remote: Dialog, fake_ollama: FakeOllama) -> None:
    alice = await sensitive_person(remote)
    await consent(brain, alice, True)
    fake_ollama.default = asks_for_the_meals
    await alice.send("who is my doctor, what did I eat and where was I?")
    system = str(fake_ollama.requests[0]["messages"][0]["content"])
    assert PLACE in system and SECRET in system and "Meals: 1" in system
    assert "nutrition_summary" in offered(fake_ollama.requests[0])
    assert MEAL in fake_ollama.sent_text(1)  # the tool result

    # Consent withdrawn: what the earlier turn stored from sensitive tools is withheld from now on.
    await consent(brain, alice, False)
    fake_ollama.default = Script(content="OK.")
    await alice.send("anything else?")
    last = fake_ollama.sent_text(-1)
    for secret in (MEAL, PLACE, SECRET):
        assert secret not in last
    assert "withheld" in last
