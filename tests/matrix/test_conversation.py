"""The conversation through a real Synapse with real matrix-nio clients: the model's Markdown arrives as the
`formatted_body` (with its plain words in `body`), our own texts stay escaped, word for word."""

from __future__ import annotations

from typing import Any

import pytest

from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.core import Brain
from tests.fakes.ollama_server import FakeOllama, Script
from tests.matrix.people import MatrixPerson

pytestmark = pytest.mark.slow

ANSWER = "**Schritt 1**: *Mama* um `18:00` anrufen.\n\n- Blumen\n- [Karte](https://example.org/?a=1&b=2)"
FORMATTED = ("<p><strong>Schritt 1</strong>: <em>Mama</em> um <code>18:00</code> anrufen.</p>"
             '<ul><li>Blumen</li><li><a href="https://example.org/?a=1&amp;b=2">Karte</a></li></ul>')
BODY = "Schritt 1: Mama um 18:00 anrufen.\n\n• Blumen\n• Karte (https://example.org/?a=1&b=2)"


@pytest.fixture
def companion(brain: Brain, llm: LLM) -> Companion:
    brain.companion = Companion(brain, llm, CompanionConfig())
    return brain.companion


def answers(content: str) -> Any:
    def respond(body: dict[str, Any]) -> Script:
        return Script(content=content) if body.get("model") == "qwen3:4b" else Script(content="OK.")
    return respond


async def greeted(alice: MatrixPerson, bot: str) -> str:
    mark = alice.mark()
    room = await alice.open_direct_room(bot)
    await alice.message_from(bot, room, after=mark, contains="Hello")
    return room


@pytest.mark.parametrize(("language", "done"), [("en", "Added the task"), ("de", "Aufgabe")])
async def test_the_models_markdown_arrives_as_formatted_body_and_own_texts_stay_plain(
        matrix_bot, matrix_people, companion: Companion, fake_ollama: FakeOllama, language: str, done: str) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    # Chosen, so the German question is answered in the language of the case (not the one it is written in).
    await alice.say(bot, room, f"!lang {language}", contains="Deutsch" if language == "de" else "English")
    fake_ollama.default = answers(ANSWER)
    reply = await alice.say(bot, room, "Was mache ich heute Abend?", contains="Schritt 1")
    content = reply.source["content"]
    assert content["format"] == "org.matrix.custom.html"
    assert content["formatted_body"] == FORMATTED
    assert content["body"] == BODY
    system = next(r for r in fake_ollama.requests if r.get("model") == "qwen3:4b")["messages"][0]["content"]
    assert "The chat shows Markdown" in system
    own = await alice.say(bot, room, "!task Kaufe **Milch** <jetzt>", contains=done)
    assert "Kaufe **Milch** &lt;jetzt&gt;" in own.source["content"]["formatted_body"]
    assert "<strong>" not in own.source["content"]["formatted_body"]


@pytest.mark.parametrize(("language", "unknown"), [
    ("en", "I don't know the command !nope. !help lists what I understand."),
    ("de", "Den Befehl !nope kenne ich nicht. !hilfe zeigt, was ich verstehe."),
])
async def test_commands_and_hints_are_written_with_a_bang_and_errors_echo_the_prefix(
        matrix_bot, matrix_people, language: str, unknown: str) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    if language == "de":
        await alice.say(bot, room, "!lang de", contains="Deutsch")
    shown = await alice.say(bot, room, "!help", contains="!water")
    assert "/water" not in shown.body and "!today" in shown.body and "!audit" not in shown.body
    assert "/water" not in shown.source["content"]["formatted_body"]
    assert (await alice.say(bot, room, "!nope", contains="nope")).body == unknown


async def test_the_week_chart_is_sent_with_its_size_mimetype_and_a_thumbnail(matrix_bot, matrix_people) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    mark = alice.mark()
    await alice.send(room, "!week")
    picture = await alice.wait_for(lambda s: s.event.sender == bot and getattr(s.event, "source", {}).get(
        "content", {}).get("msgtype") == "m.image", after=mark, within=60)
    info = picture.event.source["content"]["info"]
    assert info["mimetype"] == "image/png" and info["w"] > 100 and info["h"] > 100 and info["size"] > 0
    assert info["thumbnail_url"].startswith("mxc://")
    assert info["thumbnail_info"]["w"] == info["w"] and info["thumbnail_info"]["mimetype"] == "image/png"
