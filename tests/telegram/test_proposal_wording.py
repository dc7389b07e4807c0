"""Proposals people understand, through python-telegram-bot against the fake Bot API and the real ollama client
against the fake model server: the action in the person's words with its day written out (never ISO), no echo of
the person's own message as the reason; Reject asks "Why? (optional)" with Telegram's reply field open, and the
next message or the "No reason" button completes it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from adapters.telegram.adapter import TelegramAdapter
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.companion.models import Proposal
from brain.core import Brain
from tests.fakes.ollama_server import FakeOllama, Script, call
from tests.telegram.conftest import press, send
from tests.telegram.fake_bot_api import FakeBotAPI

CASES = {
    "en": ("please remind me to call mom on Thursday", "Call mom",
           "Create the task «Call mom», due Thursday, December 3?",
           "Rejected: Create the task «Call mom», due Thursday, December 3. Nothing was done.",
           "Reject", "No reason", "Why? (optional)", "Noted why you rejected it: not this week",
           "Okay, no reason."),
    "de": ("erinnere mich bitte, Mama am Donnerstag anzurufen", "Mama anrufen",
           "Aufgabe «Mama anrufen» anlegen, fällig Donnerstag, 3. Dezember?",
           None, "Ablehnen", "Kein Grund", "Warum? (optional)", None, "Okay, ohne Grund."),
}


@pytest.fixture
def companion(brain: Brain, llm: LLM) -> Companion:
    brain.companion = Companion(brain, llm, CompanionConfig())
    return brain.companion


async def proposal_reason(brain: Brain) -> str | None:
    async with brain.transactions.read() as session:
        proposal = (await session.scalars(select(Proposal))).one()
    assert proposal.status == "rejected"
    return proposal.reason


async def proposed(api: FakeBotAPI, alice, fake_ollama: FakeOllama, language: str):  # type: ignore[no-untyped-def]
    message, title, question, *_ = CASES[language]
    fake_ollama.script(Script(tool_calls=[call("create_task", title=title, due_date="2026-12-03")]),
                       Script(content="OK" if language == "en" else "Gut"))
    _, proposal = await send(api, alice, message, replies=2)
    assert proposal.text.splitlines()[0] == question
    assert message not in proposal.text and "2026-12-03" not in proposal.text  # no echo, no ISO date
    return proposal


@pytest.mark.parametrize("language", ["en", "de"])
async def test_reject_asks_why_and_the_next_message_is_the_reason(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain, companion: Companion,
        fake_ollama: FakeOllama, language: str) -> None:
    alice = person(language_code=language)
    *_, rejected_text, reject_label, no_reason, why, noted, _ = CASES[language]
    proposal = await proposed(api, alice, fake_ollama, language)
    rejected, asked = await press(api, alice, reject_label, proposal, replies=2)
    if rejected_text is not None:
        assert rejected.text == rejected_text
    assert list(rejected.buttons()) == [no_reason]
    assert asked.text == why
    assert asked.params["reply_markup"] == {"force_reply": True}
    requests = len(fake_ollama.requests)
    (noted_reply,) = await send(api, alice, "not this week")
    if noted is not None:
        assert noted_reply.text == noted
    assert await proposal_reason(brain) == "not this week"
    assert len(fake_ollama.requests) == requests  # the reason went to the proposal, not to the model


@pytest.mark.parametrize("language", ["en", "de"])
async def test_no_reason_ends_the_wait_and_the_next_message_is_conversation(
        telegram: TelegramAdapter, api: FakeBotAPI, person, brain: Brain, companion: Companion,
        fake_ollama: FakeOllama, language: str) -> None:
    alice = person(language_code=language)
    *_, reject_label, no_reason, _, _, okay = CASES[language]
    proposal = await proposed(api, alice, fake_ollama, language)
    rejected, _ = await press(api, alice, reject_label, proposal, replies=2)
    (answer,) = await press(api, alice, no_reason, rejected)
    assert answer.text == okay
    fake_ollama.script(Script(content="Sure."))
    (reply,) = await send(api, alice, "what else is on today?" if language == "en" else "was steht heute noch an?")
    assert reply.text == "Sure."
    assert await proposal_reason(brain) is None
