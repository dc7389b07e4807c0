"""Transient reminders: short facts about the running turn (budget used, stale overview, proposals waiting,
the local time) that the loop adds as `<reminder>` system messages right before each model call and drops
again after it. They are never part of the stored conversation, so they never go stale in the history.

Pure: `reminders_for(state)` reads a snapshot of the loop and returns the texts. They are for the model, so
they are in English (the system prompt tells the model which language to answer in)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class LoopState:
    """What the reminders may talk about, as of the next model call."""

    round: int  # tool rounds done so far in this turn
    max_rounds: int
    tool_calls: int  # tool calls so far in this turn
    prompt_tokens: int
    completion_tokens: int
    now: datetime  # the person's local time (aware)
    context_at: datetime | None  # when the overview of the person's day in the system prompt was made
    stale_after: timedelta
    pending_proposals: int  # waiting for the person's decision (including those staged in this turn)
    final: bool = False  # the last call: no tools are offered any more
    steered: int = 0  # messages the person sent while the turn was running, just added
    compacted: bool = False  # the earlier conversation was folded into a summary before this turn
    max_steps: int | None = None  # a mission's step limit


def reminders_for(state: LoopState) -> list[str]:
    """The reminders for the next model call, most urgent first."""
    found: list[str] = []
    if state.steered:
        found.append("The person wrote again while you were working (the newest user message). Take it into "
                     "account; if they changed their mind, follow the new message.")
    if state.final:
        found.append("No tool calls are possible any more in this turn. Answer the person now with what you "
                     "have; say what is still open.")
    elif state.round:
        left = state.max_rounds - state.round
        line = (f"Budget: {state.round} of {state.max_rounds} tool rounds used ({state.tool_calls} tool calls, "
                f"{state.prompt_tokens + state.completion_tokens} tokens so far).")
        if left == 1:
            line += " One round is left: call tools only if you really need them, then answer."
        found.append(line)
    if state.max_steps is not None and state.tool_calls >= state.max_steps * 0.8:
        found.append(f"Step limit: {state.tool_calls} of {state.max_steps} tool calls used.")
    if state.context_at is not None and state.now - state.context_at >= state.stale_after:
        minutes = int((state.now - state.context_at).total_seconds() // 60)
        found.append(f"The overview of the person's day in the system prompt is {minutes} minutes old; tool "
                     "results are more recent. Read again before relying on numbers from it.")
    if state.pending_proposals:
        found.append(f"{state.pending_proposals} proposal(s) wait for the person's approval. Do not propose "
                     "the same change again; mention them if they matter.")
    if state.compacted:
        found.append("The earlier conversation was folded into a summary (the system message starting with "
                     "'Summary of the earlier conversation').")
    found.append("Local time of the person: " + state.now.strftime("%A %Y-%m-%d %H:%M") + f" ({state.now.tzname()}).")
    return found


def reminder_messages(texts: Sequence[str]) -> list[dict[str, Any]]:
    """The reminders as system messages, each wrapped in <reminder>…</reminder>."""
    return [{"role": "system", "content": f"<reminder>{text}</reminder>"} for text in texts]
