"""Compaction: past 0.6 x the input budget, all but the last 3 turns are folded into one summary by the fast
tier; the originals are archived, not deleted, and the next request carries the summary and the last 3."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from brain.companion.agent import Companion, CompanionConfig
from brain.companion.compaction import needs_compaction, shaped_summary
from brain.companion.conversation import TurnMessage, store_turn
from brain.companion.llm import LLM
from brain.core import Brain
from tests.companion.conftest import conversation
from tests.fakes.ollama_server import FakeOllama, Script

BUDGET = 2000  # tokens; compaction above 1200
SUMMARY = "## Goal\nPlan the garden.\n## Decisions\nTomatoes first.\n## Progress\nSeeds bought."


@pytest.fixture
def small_budget(brain: Brain, llm: LLM) -> Companion:
    brain.companion = Companion(brain, llm, CompanionConfig(input_tokens=BUDGET))
    return brain.companion


async def stored_turns(brain: Brain, user_id: uuid.UUID, count: int, words: int) -> list[uuid.UUID]:
    """`count` earlier turns of about `words` * 2 tokens each (user + assistant)."""
    turns = []
    async with brain.transactions.begin() as uow:
        for index in range(count):
            turn_id = uuid.uuid4()
            turns.append(turn_id)
            at = uow.now - timedelta(hours=count - index)
            await store_turn(uow.session, user_id, turn_id, at, [
                TurnMessage("user", f"turn{index} question " + "garden " * words),
                TurnMessage("assistant", f"turn{index} answer " + "tomato " * words),
            ])
    return turns


def by_model(body: dict[str, Any]) -> Script:
    if body["model"] == "qwen3:1.7b":
        return Script(content=SUMMARY)
    return Script(content="Fine.")


async def test_compaction_folds_all_but_the_last_three_turns(brain: Brain, small_budget: Companion, user,
                                                             fake_ollama: FakeOllama) -> None:
    turns = await stored_turns(brain, user.id, 5, words=150)  # about 1,900 tokens: past 0.6 x 2,000
    fake_ollama.default = by_model
    outcome = await small_budget.respond(user, "and now?")
    assert outcome.text == "Fine."
    [summarise, answer] = fake_ollama.requests
    assert summarise["model"] == "qwen3:1.7b"
    summarised = summarise["messages"][1]["content"]
    assert "turn0 question" in summarised and "turn2" not in summarised

    rows = await conversation(brain, user.id)
    archived = [r for r in rows if r.archived]
    assert {r.turn_id for r in archived} == set(turns[:2]) and len(archived) == 4  # kept, not deleted
    [summary] = [r for r in rows if r.kind == "summary"]
    assert summary.content == SUMMARY and not summary.archived
    live = [r for r in rows if not r.archived and r.kind == "message"]
    assert [r.turn_id for r in live][:6] == [t for t in turns[2:] for _ in range(2)]

    sent = fake_ollama.sent_text(1)
    assert "Summary of the earlier conversation:\n## Goal" in sent
    assert "turn0" not in sent and "turn1" not in sent
    assert all(f"turn{i} question" in sent for i in (2, 3, 4))
    assert any("folded into a summary" in str(m.get("content")) for m in answer["messages"])


async def test_below_the_threshold_nothing_is_folded(brain: Brain, small_budget: Companion, user,
                                                     fake_ollama: FakeOllama) -> None:
    await stored_turns(brain, user.id, 5, words=60)  # about 800 tokens
    fake_ollama.default = by_model
    await small_budget.respond(user, "and now?")
    assert [r["model"] for r in fake_ollama.requests] == ["qwen3:4b"]
    assert not any(r.archived for r in await conversation(brain, user.id))


async def test_a_second_compaction_folds_the_first_summary_in(brain: Brain, small_budget: Companion, user,
                                                              fake_ollama: FakeOllama) -> None:
    await stored_turns(brain, user.id, 5, words=150)
    fake_ollama.default = by_model
    await small_budget.respond(user, "first")
    await stored_turns(brain, user.id, 3, words=150)
    await small_budget.respond(user, "second")
    summaries = [r for r in await conversation(brain, user.id) if r.kind == "summary"]
    assert [s.archived for s in summaries] == [True, False]
    second_input = [r for r in fake_ollama.requests if r["model"] == "qwen3:1.7b"][1]["messages"][1]["content"]
    assert "[earlier summary] ## Goal" in second_input


async def test_when_the_summariser_is_down_the_turn_still_answers(brain: Brain, small_budget: Companion, user,
                                                                  fake_ollama: FakeOllama) -> None:
    await stored_turns(brain, user.id, 5, words=150)

    def fast_down(body: dict[str, Any]) -> Script:
        return Script(status=500) if body["model"] == "qwen3:1.7b" else Script(content="Still here.")

    fake_ollama.default = fast_down
    outcome = await small_budget.respond(user, "hello")
    assert outcome.text == "Still here."
    assert not any(r.archived for r in await conversation(brain, user.id))


def test_the_trigger_is_six_tenths_of_the_budget() -> None:
    assert not needs_compaction(4800, 8000)
    assert needs_compaction(4801, 8000)
    assert not needs_compaction(100, 0)


def test_a_summary_always_has_its_three_sections() -> None:
    assert shaped_summary("Some notes.") == "## Goal\n-\n## Decisions\nSome notes.\n## Progress\n-"
    assert shaped_summary("Intro\n" + SUMMARY) == SUMMARY
