"""The agent loop: call the model, run the tool calls it asks for through the executor (the one place tool
calls run, behind the policy gate), return the results as `tool` messages, and repeat until the model
answers or the round budget is spent. Used by chat turns (3 rounds), mission planner turns (5) and
sub-agents (their own small budget).

Around the plain loop (mana's `runPlannerLoop`, with Claude Code's patterns from agent-improvements §5-§10):
- the read-only calls of one round run in parallel (at most 10 at a time), results kept in call order; a
  round with any other call runs one call after another;
- transient `<reminder>` system messages are added before each model call and never kept;
- steering: messages the person sends while the turn runs are taken in before the next model call;
  `stop()` ends the turn at the next step (an in-flight model call is cancelled);
- a "task" entry hands a question to a sub-agent (fresh messages, read-only tools, depth 1).
Nothing here raises for what the model does: unknown tools, bad arguments and refusals become tool messages."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from brain.companion.conversation import TurnMessage
from brain.companion.llm import LLM, LLMReply, ModelUnavailable, PacedSink, PrivacyBlocked, Tier, ToolCall
from brain.companion.reminders import LoopState, reminder_messages, reminders_for
from brain.events.actor import AiActor
from brain.i18n import Renderer, Text, tr
from brain.people.models import User
from brain.tools.spec import ToolResult

if TYPE_CHECKING:
    from brain.kernel import Kernel
    from brain.pipeline_log import Span

log = logging.getLogger(__name__)

TASK_TOOL = "task"
MAX_TASK_CHARS = 2000
MAX_PARALLEL = 10
MAX_RESULT_CHARS = 6000  # of one tool message; longer data is cut, the message stays
MAX_STEERING_CALLS = 2  # extra model calls for messages that arrive after the model answered
TextSink = Callable[[str], Awaitable[None]]


class TurnControl:
    """Steering and abort for one running turn. `steer` queues a message of the person, `take` hands the
    queue to the loop before its next model call, `stop` asks the loop to end. After `close` (the turn is
    over) nothing is queued any more; `close` returns what arrived too late for the loop."""

    def __init__(self) -> None:
        self._queue: list[str] = []
        self._stop = asyncio.Event()
        self.closed = False

    def steer(self, text: str) -> bool:
        if self.closed:
            return False
        self._queue.append(text)
        return True

    def take(self) -> list[str]:
        taken, self._queue = self._queue, []
        return taken

    @property
    def waiting(self) -> bool:
        return bool(self._queue)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    async def wait_stopped(self) -> None:
        await self._stop.wait()

    def close(self) -> list[str]:
        self.closed = True
        return self.take()

    def child(self) -> TurnControl:
        """A control for a sub-agent: stopped together with this one, but the person's messages stay here
        (they are for the conversation, not for the helper)."""
        child = TurnControl()
        child._stop = self._stop
        return child


@dataclass
class CallOutcome:
    """One tool call of the model and what came of it."""

    name: str
    arguments: Any
    ok: bool
    message: str  # rendered in the person's language; what the model reads
    data: dict[str, Any] = field(default_factory=dict)
    error_code: str | None = None
    result: ToolResult | None = None  # the executor's result (None for calls the loop answered itself)
    sensitive: bool = False  # the result carries content of a sensitive class

    @property
    def proposal_id(self) -> str | None:
        if self.ok and self.data.get("status") == "proposed" and self.data.get("proposal_id"):
            return str(self.data["proposal_id"])
        return None

    def tool_message(self) -> str:
        """The JSON the model reads: {ok, message, data}; data is dropped when it would be too long."""
        data: dict[str, Any] = dict(self.data) if self.ok else {"error": self.error_code, **self.data}
        body = json.dumps({"ok": self.ok, "message": self.message, "data": data}, ensure_ascii=False, default=str)
        if len(body) > MAX_RESULT_CHARS:
            body = json.dumps({"ok": self.ok, "message": self.message[:MAX_RESULT_CHARS // 2],
                               "data": {"truncated": True}}, ensure_ascii=False)
        return body


@dataclass(frozen=True)
class LoopLimits:
    max_rounds: int = 3  # tool rounds; one more call without tools follows to get the answer
    max_steps: int | None = None  # tool calls in the whole loop (missions: 25)
    max_input_chars: int | None = None  # of one request (missions: 100,000)
    depth: int = 0  # 0: may hand a question to a sub-agent; 1: is a sub-agent
    subagent_rounds: int = 3
    stale_after: timedelta = timedelta(minutes=10)
    max_parallel: int = MAX_PARALLEL  # read calls of one round at once; 1 runs every round one call at a time


@dataclass
class LoopResult:
    text: str  # the model's words in this turn, joined (what was streamed)
    transcript: list[TurnMessage]  # user, assistant and tool messages in order; never system or reminders
    calls: list[CallOutcome]
    rounds: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_ms: float = 0.0
    server_ms: float = 0.0  # of model_ms, what the model server reports as its own time
    tool_ms: float = 0.0  # wall time of the tool rounds
    stop_reason: str = "answer"  # answer | max-rounds | stopped | model-down | privacy | step-limit | too-large
    answered: bool = False  # at least one model reply arrived
    error: str | None = None

    @property
    def proposals(self) -> list[CallOutcome]:
        return [c for c in self.calls if c.proposal_id]


class _Stopped(Exception):
    pass


class _Stream:
    """Passes the pieces of every model reply on, with a blank line between replies that both have words,
    so what was streamed equals `LoopResult.text`. Paced as its sink is (`PacedSink`)."""

    def __init__(self, sink: TextSink | None) -> None:
        self.sink = sink
        self._paced = sink if isinstance(sink, PacedSink) else None  # a runtime protocol check is slow: once
        self.wrote = False
        self._reply_started = False

    def start_reply(self) -> None:
        self._reply_started = False

    async def __call__(self, text: str) -> None:
        if self.sink is None or not text:
            return
        if self.wrote and not self._reply_started:
            await self.sink("\n\n")
        self._reply_started = True
        self.wrote = True
        await self.sink(text)

    def rest(self) -> float:
        return self._paced.rest() if self._paced is not None else 0.0


# Runs a "task" call of a loop: a helper loop, whose summary is the call's outcome.
Helper = Callable[["AgentLoop", Any], Awaitable["CallOutcome"]]


def task_schema() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": TASK_TOOL,
            "description": ("Hand a self-contained question to a helper that can only read the person's data "
                            "(tasks, calendar, drinks, ...) and returns a short summary. Use it when answering "
                            "needs several lookups."),
            "parameters": {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "A few words on what the helper does.",
                                    "maxLength": 100},
                    "prompt": {"type": "string", "description": "The full question, with everything the helper "
                               "needs to know (it does not see this conversation).", "maxLength": MAX_TASK_CHARS},
                },
                "required": ["prompt"],
            },
        },
    }



class AgentLoop:
    def __init__(
        self,
        brain: Kernel,
        llm: LLM,
        user: User,
        actor: AiActor,
        *,
        tools: Sequence[dict[str, Any]],
        offered: frozenset[str],
        tier: Tier = "primary",
        allow_sensitive: bool,
        consent: bool,
        sensitive: bool = False,
        limits: LoopLimits = LoopLimits(),
        control: TurnControl | None = None,
        on_text: TextSink | None = None,
        span: Span | None = None,
        context_at: datetime | None = None,
        pending_proposals: int = 0,
        compacted: bool = False,
        helper: Helper | None = None,
    ) -> None:
        """`helper` runs a "task" call (brain.companion.subagent.run_subagent): offered to the model at depth 0."""
        self.brain = brain
        self.llm = llm
        self.user = user
        self.actor = actor
        self.tools = list(tools)
        self.offered = offered
        self.tier = tier
        self.allow_sensitive = allow_sensitive
        self.consent = consent
        self.sensitive = sensitive
        self.limits = limits
        self.control = control
        self.span = span
        self.context_at = context_at
        self.pending = pending_proposals
        self.compacted = compacted
        self.render = Renderer(user.locale, user.timezone)
        self._stream = _Stream(on_text)
        self._steps = 0
        self.helper = helper
        if helper is not None and limits.depth == 0 and TASK_TOOL not in {t["function"]["name"] for t in self.tools}:
            self.tools.append(task_schema())

    # -- the loop ---------------------------------------------------------------------------------------

    async def run(self, messages: Sequence[dict[str, Any]], text: str) -> LoopResult:
        """`messages`: system prompt and history; `text`: the new message of the person (or the planner's
        instruction). Returns when the model answered, the budget is spent, the turn was stopped or no
        model answered."""
        messages = list(messages)
        result = LoopResult(text="", transcript=[], calls=[])
        self._add(messages, result, TurnMessage("user", text))
        texts: list[str] = []
        extra_calls = 0
        while True:
            steered = self._take_steering(messages, result)
            if self.control is not None and self.control.stopped:
                result.stop_reason = "stopped"
                break
            final = result.rounds >= self.limits.max_rounds or self._steps_left() <= 0
            request = messages + reminder_messages(reminders_for(self._state(result, final=final,
                                                                               steered=steered)))
            if self.limits.max_input_chars is not None and _chars(request) > self.limits.max_input_chars:
                result.stop_reason, result.error = "too-large", f"the request has {_chars(request)} characters"
                break
            try:
                reply = await self._call(request, None if final else self.tools, result)
            except _Stopped:
                result.stop_reason = "stopped"
                break
            except ModelUnavailable as down:
                result.stop_reason, result.error = "model-down", str(down)
                break
            except PrivacyBlocked as blocked:
                log.error("privacy check refused a companion request for user %s: %s", self.user.id, blocked)
                result.stop_reason, result.error = "privacy", str(blocked)
                break
            result.answered = True
            calls = [] if final else reply.tool_calls
            if reply.content.strip():
                texts.append(reply.content.strip())
            self._add(messages, result, TurnMessage("assistant", reply.content, tool_calls=_calls_json(calls) or None,
                                                    sensitive=self.sensitive))
            if not calls:
                if self.control is not None and self.control.waiting and extra_calls < MAX_STEERING_CALLS:
                    extra_calls += 1  # the person wrote while the model answered: answer that too
                    continue
                result.stop_reason = "max-rounds" if final and result.rounds >= self.limits.max_rounds else "answer"
                if final and self._steps_left() <= 0:
                    result.stop_reason = "step-limit"
                break
            result.rounds += 1
            started = time.perf_counter()
            outcomes = await self._run_round(calls)
            result.tool_ms += (time.perf_counter() - started) * 1000
            for outcome in outcomes:
                result.calls.append(outcome)
                self.sensitive = self.sensitive or outcome.sensitive
                self._add(messages, result, TurnMessage("tool", outcome.tool_message(), tool_name=outcome.name,
                                                        sensitive=outcome.sensitive))
        result.text = "\n\n".join(texts)
        return result

    def _add(self, messages: list[dict[str, Any]], result: LoopResult, message: TurnMessage) -> None:
        messages.append(message.as_model())
        result.transcript.append(message)

    def _take_steering(self, messages: list[dict[str, Any]], result: LoopResult) -> int:
        if self.control is None:
            return 0
        taken = self.control.take()
        for text in taken:
            self._add(messages, result, TurnMessage("user", text))
        if taken and self.span is not None:
            self.span.log("input", "companion.steering", {"messages": len(taken)})
        return len(taken)

    def count_steps(self, n: int) -> None:
        """Tool calls made on the loop's behalf (by a sub-agent) count against its step limit."""
        self._steps += n

    def _steps_left(self) -> int:
        return (self.limits.max_steps - self._steps) if self.limits.max_steps is not None else 1

    def _state(self, result: LoopResult, *, final: bool, steered: int) -> LoopState:
        now = self.brain.clock.now().astimezone(self.render.tz)
        pending = self.pending + len(result.proposals)
        return LoopState(round=result.rounds, max_rounds=self.limits.max_rounds, tool_calls=len(result.calls),
                         prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens, now=now,
                         context_at=self.context_at, stale_after=self.limits.stale_after, pending_proposals=pending,
                         final=final, steered=steered, compacted=self.compacted and result.model_calls == 0,
                         max_steps=self.limits.max_steps)

    async def _call(self, request: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                    result: LoopResult) -> LLMReply:
        if self.span is not None:
            reminders = [m["content"] for m in request if m["role"] == "system"
                         and str(m["content"]).startswith("<reminder>")]
            self.span.log("prompt", "companion.request", {
                "round": result.rounds, "tier": self.tier, "messages": len(request), "chars": _chars(request),
                "tools": len(tools or []), "sensitive": self.sensitive, "reminders": reminders,
            })
        self._stream.start_reply()
        on_text = self._stream if self._stream.sink is not None else None
        chat = self.llm.chat(self.tier, request, tools=tools, on_text=on_text, sensitive=self.sensitive,
                             consent=self.consent)
        if self.control is None:
            reply = await chat
        else:
            reply = await self._unless_stopped(chat)
        result.model_calls += 1
        result.prompt_tokens += reply.prompt_tokens
        result.completion_tokens += reply.completion_tokens
        result.model_ms += reply.model_ms
        result.server_ms += reply.server_ms
        if self.span is not None:
            self.span.log("token", "companion.tokens", {"prompt": reply.prompt_tokens,
                                                        "completion": reply.completion_tokens,
                                                        "model_ms": round(reply.model_ms, 1),
                                                        "tool_calls": [c.name for c in reply.tool_calls]})
        return reply

    async def _unless_stopped(self, chat: Awaitable[LLMReply]) -> LLMReply:
        assert self.control is not None
        call = asyncio.ensure_future(chat)
        stop = asyncio.ensure_future(self.control.wait_stopped())
        try:
            await asyncio.wait({call, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if not call.done():
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await call
            raise _Stopped
        return call.result()

    # -- one round of tool calls ------------------------------------------------------------------------

    async def _run_round(self, calls: Sequence[ToolCall]) -> list[CallOutcome]:
        if self.limits.max_parallel > 1 and len(calls) > 1 and all(self._is_read(c.name) for c in calls):
            gate = asyncio.Semaphore(self.limits.max_parallel)

            async def bounded(call: ToolCall) -> CallOutcome:
                async with gate:
                    return await self._execute(call)

            return list(await asyncio.gather(*(bounded(c) for c in calls)))
        outcomes = []
        for call in calls:
            if self.control is not None and self.control.stopped:
                outcomes.append(self._refused(call, tr("Not run: the person stopped this turn."), "stopped"))
            else:
                outcomes.append(await self._execute(call))
        return outcomes

    def _is_read(self, name: str) -> bool:
        if name == TASK_TOOL:
            return self.limits.depth == 0  # a sub-agent only reads
        tool = self.brain.registry.get(name)
        return tool is not None and tool.policy == "read" and name in self.offered

    async def _execute(self, call: ToolCall) -> CallOutcome:
        self._steps += 1
        if self.limits.max_steps is not None and self._steps > self.limits.max_steps:
            return self._refused(call, tr("Not run: the step limit of {limit} tool calls is reached.",
                                          limit=self.limits.max_steps), "step_limit")
        try:
            if call.name == TASK_TOOL:
                if self.limits.depth >= 1 or self.helper is None:
                    return self._refused(call, tr("A helper cannot start another helper. Do the work yourself."),
                                         "sub_agent_depth")
                return await self.helper(self, call.arguments)
            tool = self.brain.registry.get(call.name)
            if tool is not None and call.name not in self.offered:
                await self._record_not_offered(call.name)
                return self._refused(call, tr("The tool {name} is not available here.", name=call.name),
                                     "not_offered")
            result = await self.brain.tools.execute(self.user.id, call.name, call.arguments, self.actor)
        except Exception:
            log.exception("tool call %s failed inside the companion loop for user %s", call.name, self.user.id)
            return self._refused(call, tr("Something went wrong while doing that. Nothing was changed."),
                                 "internal_error")
        from brain.companion.prompt import tool_is_sensitive

        outcome = CallOutcome(name=call.name, arguments=call.arguments, ok=result.ok,
                              message=self.render(result.message) if result.message is not None else "",
                              data=dict(result.data), error_code=result.error_code, result=result,
                              sensitive=tool is not None and tool_is_sensitive(tool))
        if self.span is not None:
            self.span.log("switch", "companion.tool", {"tool": call.name, "ok": result.ok,
                                                       "error": result.error_code,
                                                       "status": result.data.get("status")})
        return outcome

    def _refused(self, call: ToolCall, message: Text, code: str) -> CallOutcome:
        return CallOutcome(name=call.name, arguments=call.arguments, ok=False, message=self.render(message),
                           error_code=code)

    async def _record_not_offered(self, name: str) -> None:
        """A call of a tool the model was not shown (kept from it for privacy, or a sub-agent's restriction):
        the executor never sees it, so the audit row is written here."""
        from brain.companion.models import ToolCallRecord

        try:
            async with self.brain.transactions.begin() as uow:
                uow.session.add(ToolCallRecord(user_id=self.user.id, at=uow.now, tool_name=name[:64], known=True,
                                               decision="deny", ok=False, error_code="not_offered", flags=[]))
        except Exception:
            log.exception("could not record the refused call %s", name)


def _calls_json(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """Tool calls as Ollama message JSON. Arguments that are not an object are sent back as {} (the client
    validates messages; a model's garbage must not make the next request fail)."""
    return [{"function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, dict) else {}}}
            for c in calls]


def _chars(messages: Sequence[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content") or "")) for m in messages)
