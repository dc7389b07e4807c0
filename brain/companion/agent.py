"""The companion turn: one message of the person answered by the language model with the person's tools.

    outcome = await companion.respond(user, "log a glass of water", control=control, on_text=sink)

Order: compact the history if it passed 0.6 x the input budget -> read settings, pending proposals,
rejection feedback, facts and the history (one transaction) -> context document and recalled memories ->
the agent loop (3 tool rounds, calls as the AI actor through the executor and its policy gate) -> the
turn's messages stored in one transaction -> memories the answer drew on reinforced. Traced in the pipeline
log (span "companion.turn" with the turn id) when one is available.

The brain returns structure, not chat messages: the answer text, the proposals staged (the bot adds
Approve / Reject buttons), and whether the turn was stopped or found no model. The bot decides what to say."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from brain.companion.compaction import KEEP_TURNS, compact, needs_compaction
from brain.companion.conversation import History, message_tokens, store_turn
from brain.companion.llm import LLM, ModelUnavailable, Tier
from brain.companion.loop import AgentLoop, CallOutcome, LoopLimits, LoopResult, TextSink, TurnControl
from brain.companion.prompt import (
    MARKDOWN,
    ContextCache,
    Prompt,
    SchemaCache,
    TurnData,
    build_chat_prompt,
    forwarded_message,
    load_turn_data,
    may_see_sensitive,
    restore_feedback,
)
from brain.companion.subagent import run_subagent
from brain.events.actor import ai
from brain.kernel import Kernel
from brain.people.models import User
from brain.pipeline_log import PipelineLog, Span

log = logging.getLogger(__name__)

MAX_RATIONALE = 200


@dataclass(frozen=True)
class CompanionConfig:
    """Numbers of the companion (bot.settings: COMPANION_*)."""

    input_tokens: int = 8000  # the model's input budget; compaction at 0.6 x this
    context_tokens: int = 500  # the context document
    chat_rounds: int = 3
    subagent_rounds: int = 3
    stale_after: timedelta = timedelta(minutes=10)
    recall_k: int = 5
    keep_turns: int = KEEP_TURNS
    compact_ratio: float = 0.6
    admins: frozenset[str] = frozenset()  # "platform:id" identities allowed to run /audit
    tier: Tier = "primary"
    max_parallel: int = 10  # read calls of one round that run at once


@dataclass
class TurnOutcome:
    turn_id: uuid.UUID
    text: str  # the model's answer (empty if it gave none)
    calls: list[CallOutcome] = field(default_factory=list)
    stop_reason: str = "answer"
    answered: bool = True  # a model replied at least once
    tell_model_down: bool = False  # no model answered and the person has not been told during this outage
    rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_ms: float = 0.0
    server_ms: float = 0.0  # of model_ms, what the model server reports as its own time
    tool_ms: float = 0.0

    @property
    def proposals(self) -> list[CallOutcome]:
        return [c for c in self.calls if c.proposal_id]

    @property
    def proposal_ids(self) -> list[str]:
        return [c.proposal_id for c in self.calls if c.proposal_id]

    @property
    def stopped(self) -> bool:
        return self.stop_reason == "stopped"

    @property
    def model_down(self) -> bool:
        return self.stop_reason in ("model-down", "privacy")


class RunningTurns:
    """The companion turns running right now, one per person: for steering, /stop, and adapters that need
    to know which messages may pass a chat's queue."""

    def __init__(self) -> None:
        self._turns: dict[uuid.UUID, TurnControl] = {}

    def begin(self, user_id: uuid.UUID) -> TurnControl | None:
        """A control for a new turn of this person; None while another one of theirs runs."""
        if user_id in self._turns:
            return None
        control = TurnControl()
        self._turns[user_id] = control
        return control

    def get(self, user_id: uuid.UUID) -> TurnControl | None:
        control = self._turns.get(user_id)
        return control if control is not None and not control.closed else None

    def end(self, user_id: uuid.UUID, control: TurnControl) -> list[str]:
        """The turn is over; returns the messages that arrived too late for it (answer them next)."""
        if self._turns.get(user_id) is control:
            del self._turns[user_id]
        return control.close()

    def __contains__(self, user_id: object) -> bool:
        return user_id in self._turns


class Companion:
    def __init__(self, brain: Kernel, llm: LLM, config: CompanionConfig = CompanionConfig(), *,
                 log: PipelineLog | None = None) -> None:
        self.brain = brain
        self.llm = llm
        self.config = config
        self.turns = RunningTurns()
        self.schemas = SchemaCache(brain.registry)
        self.contexts = ContextCache(brain)
        self._log = log
        self._told_down: set[uuid.UUID] = set()

    @property
    def log(self) -> PipelineLog | None:
        if self._log is not None:
            return self._log
        return self.brain.memory.log if self.brain.memory is not None else None

    def is_admin(self, platform: str, platform_user_id: str) -> bool:
        return f"{platform}:{platform_user_id}" in self.config.admins

    async def respond(self, user: User, text: str, *, control: TurnControl | None = None,
                      on_text: TextSink | None = None, formatting: str = MARKDOWN,
                      forwarded: bool = False) -> TurnOutcome:
        """Answer one message of the person (see the module docstring). Never raises for what the model
        does or for a missing model; the outcome says what happened. `formatting`: what the person's chat shows
        (`prompt.MARKDOWN` or `prompt.PLAIN`), told to the model. `forwarded`: someone else's message the person
        passed on: given to the model marked as such (`forwarded_message`), with read tools only."""
        turn_id = uuid.uuid4()
        said = forwarded_message(text) if forwarded else text
        async with self._span(user.id, turn_id) as span:
            if span is not None:
                span.log("input", "companion.message", {"text": text[:500]})
            # Independent reads, on two connections at once.
            data, context = await asyncio.gather(load_turn_data(self.brain, user.id), self.contexts.get(user))
            compacted = await self._compact_if_due(user, data, span)
            prompt = await build_chat_prompt(
                self.brain, self.llm, user, text, data, tier=self.config.tier, schemas=self.schemas, context=context,
                context_tokens=self.config.context_tokens, recall_k=self.config.recall_k, with_task=True,
                formatting=formatting, read_only=forwarded)
            history, history_sensitive = self._fit_history(data.history, prompt, said)
            loop = AgentLoop(
                self.brain, self.llm, user, ai(rationale=_rationale(text), quotes_person=True), tools=prompt.tools,
                offered=prompt.offered, tier=self.config.tier, allow_sensitive=prompt.allow_sensitive,
                consent=data.consent, sensitive=prompt.sensitive or history_sensitive,
                limits=LoopLimits(max_rounds=self.config.chat_rounds, subagent_rounds=self.config.subagent_rounds,
                                  stale_after=self.config.stale_after, max_parallel=self.config.max_parallel),
                control=control, on_text=on_text, span=span, context_at=prompt.context_at,
                pending_proposals=prompt.pending, compacted=compacted, helper=run_subagent)
            result = await loop.run([{"role": "system", "content": prompt.system}, *history], said)
            await self._finish(user, turn_id, prompt, result, span)
        return self._outcome(user, turn_id, result)

    # -- steps ------------------------------------------------------------------------------------------

    async def _compact_if_due(self, user: User, data: TurnData, span: Span | None) -> bool:
        tokens = data.history.tokens
        if not needs_compaction(tokens, self.config.input_tokens, self.config.compact_ratio):
            return False
        try:
            done = await compact(self.brain, self.llm, user.id, data.history,
                                 allow_sensitive=may_see_sensitive(self.llm, "fast", data.consent),
                                 consent=data.consent, keep_turns=self.config.keep_turns)
        except ModelUnavailable as down:
            log.info("compaction skipped for user %s: %s", user.id, down)
            return False
        except Exception:
            log.exception("compaction failed for user %s", user.id)
            return False
        if done is None:
            return False
        data.history = done.history
        if span is not None:
            span.log("calculation", "companion.compaction", {"tokens_before": tokens, "folded": done.folded,
                                                             "tokens_after": data.history.tokens})
        return True

    def _fit_history(self, history: History, prompt: Prompt, text: str) -> tuple[list[dict[str, Any]], bool]:
        """The history as messages, without its oldest turns if it would not fit into the input budget
        beside the system prompt and the new message (compaction keeps this rare)."""
        room = self.config.input_tokens - message_tokens(prompt.system) - message_tokens(text)
        keep: int | None = None
        while True:
            messages, sensitive = history.model_messages(allow_sensitive=prompt.allow_sensitive, keep_turns=keep)
            used = sum(message_tokens(str(m.get("content") or ""), m.get("tool_calls")) for m in messages)
            turns = len(history.turns()) if keep is None else keep
            if used <= room or turns == 0:
                return messages, sensitive
            keep = turns - 1

    async def _finish(self, user: User, turn_id: uuid.UUID, prompt: Prompt, result: LoopResult,
                      span: Span | None) -> None:
        if not result.answered:
            await restore_feedback(self.brain, user.id, prompt.feedback_ids)
        if result.answered or result.calls or result.stop_reason == "stopped":
            async with self.brain.transactions.begin() as uow:
                stored = await store_turn(uow.session, user.id, turn_id, uow.now, result.transcript)
            if span is not None:
                span.log("db_write", "companion.conversation", {"messages": stored})
        if span is not None:
            span.log("output", "companion.answer", {
                "text": result.text[:1000], "stop_reason": result.stop_reason, "rounds": result.rounds,
                "model_calls": result.model_calls, "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens, "proposals": [c.proposal_id for c in result.proposals],
                "tools": [c.name for c in result.calls], "error": result.error,
            })
            if result.stop_reason in ("model-down", "privacy"):
                span.status = {"status": result.stop_reason}
        memory = self.brain.memory
        if memory is not None and prompt.recalled and result.text:
            try:
                await memory.reinforce_from_answer(user.id, result.text, prompt.recalled)
            except Exception:
                log.exception("reinforcement after a companion answer failed for user %s", user.id)

    def _outcome(self, user: User, turn_id: uuid.UUID, result: LoopResult) -> TurnOutcome:
        if result.answered:
            self._told_down.clear()  # the model answers: a later outage is news again
        tell = False
        if result.stop_reason == "model-down":
            tell = user.id not in self._told_down
            self._told_down.add(user.id)
        return TurnOutcome(turn_id=turn_id, text=result.text, calls=result.calls, stop_reason=result.stop_reason,
                           answered=result.answered, tell_model_down=tell, rounds=result.rounds,
                           prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                           model_ms=result.model_ms, server_ms=result.server_ms, tool_ms=result.tool_ms)

    @contextlib.asynccontextmanager
    async def _span(self, user_id: uuid.UUID, turn_id: uuid.UUID) -> AsyncIterator[Span | None]:
        pipeline = self.log
        if pipeline is None:
            yield None
            return
        async with pipeline.span("companion.turn", user_id=user_id, turn_id=turn_id) as span:
            yield span


def _rationale(text: str) -> str:
    """The AI actor's reason for its calls: what the person asked, shortened."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_RATIONALE else text[:MAX_RATIONALE - 1] + "…"
