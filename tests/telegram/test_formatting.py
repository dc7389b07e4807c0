"""The model's Markdown arrives in Telegram as formatting (HTML parse mode), through python-telegram-bot against
the fake Bot API: bold, italics, code, lists and links are tags, anything else plain text; a long answer is split
into messages of at most 4096 characters whose tags are each complete; our own texts keep their exact wording."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.render import MAX_TEXT, render, utf16_length
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.core import Brain
from brain.outbox.models import Outbound
from tests.fakes.ollama_server import FakeOllama, Script
from tests.telegram.conftest import send
from tests.telegram.fake_bot_api import FakeBotAPI

ANSWER = ("**Step 1**: call *mom* at `18:00`.\n\n- buy *flowers*\n- say [hello](https://example.org/?a=1&b=2)\n\n"
          "| a | b |\n|---|---|\n<script>x</script> & 3 < 4")
HTML = ("<b>Step 1</b>: call <i>mom</i> at <code>18:00</code>.\n\n• buy <i>flowers</i>\n"
        '• say <a href="https://example.org/?a=1&amp;b=2">hello</a>\n\n'
        "| a | b |\n|---|---|\n&lt;script&gt;x&lt;/script&gt; &amp; 3 &lt; 4")


@pytest.fixture
def companion(brain: Brain, llm: LLM) -> Companion:
    brain.companion = Companion(brain, llm, CompanionConfig())
    return brain.companion


def answers(content: str) -> Any:
    """The primary model answers `content`; the fast one (summaries, guards) a short 'OK.'."""
    def respond(body: dict[str, Any]) -> Script:
        return Script(content=content) if body.get("model") == "qwen3:4b" else Script(content="OK.")
    return respond


class Nesting(HTMLParser):
    """Fails on a closing tag that does not close the innermost open one; `open` is what is left open."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "hr"):  # void elements: never closed
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, (tag, self.open)
        self.open.pop()


def balanced(html: str) -> bool:
    checker = Nesting()
    checker.feed(html)
    checker.close()
    return not checker.open


@pytest.mark.parametrize(("language", "question"), [("en", "what should I do tonight?"),
                                                     ("de", "was soll ich heute Abend machen?")])
async def test_the_models_markdown_arrives_as_telegram_formatting(
        telegram: TelegramAdapter, api: FakeBotAPI, person, companion: Companion, fake_ollama: FakeOllama,
        language: str, question: str) -> None:
    alice = person(language_code=language)
    fake_ollama.default = answers(ANSWER)
    (reply,) = await send(api, alice, question)  # in the app's language: no note that the language follows
    assert reply.params["parse_mode"] == "HTML"
    assert reply.text == HTML
    primary = [r for r in fake_ollama.requests if r.get("model") == "qwen3:4b"]
    system = primary[0]["messages"][0]["content"]
    assert "The chat shows Markdown: **bold**, *italics*, `code`, lists and [links]" in system


@pytest.mark.parametrize(("language", "expected"), [("en", "**milk** <now>"), ("de", "**milk** <now>")])
async def test_our_own_texts_keep_their_exact_wording(
        telegram: TelegramAdapter, api: FakeBotAPI, person, language: str, expected: str) -> None:
    alice = person(language_code=language)
    (reply,) = await send(api, alice, "/task Buy **milk** <now>")
    assert expected.replace("<", "&lt;").replace(">", "&gt;") in reply.text  # escaped, not made bold
    assert "<b>" not in reply.text


async def test_a_long_answer_is_split_between_blocks_with_complete_tags(
        telegram: TelegramAdapter, api: FakeBotAPI, person, companion: Companion, fake_ollama: FakeOllama) -> None:
    alice = person()
    paragraph = "**Bold start** and *italic* with `code` & a [link](https://example.org) " + "word " * 60
    long_answer = "\n\n".join(f"{n}. {paragraph}" if n % 3 else f"- {paragraph}\n- second *item*"
                              for n in range(1, 40))
    fake_ollama.default = answers(long_answer)
    expected = render(Outbound(text=long_answer, markdown=True))
    assert len(expected) >= 4 and all(p.formatted is not None for p in expected)  # formatted, not plain fallback
    api.push(api.text(alice, "tell me everything"))
    parts = await api.wait_for("sendMessage", chat_id=alice.id, count=len(expected))
    for part in parts:
        assert utf16_length(part.text) <= MAX_TEXT
        assert balanced(part.text), part.text[:200]
        assert part.params["parse_mode"] == "HTML"
    joined = "".join(p.text for p in parts)
    assert joined.count("<b>Bold start</b>") == 39  # nothing lost at the cuts
