"""Sub-agents: the model hands a self-contained question to a helper with the "task" entry. The helper is
another agent loop with fresh messages (none of the parent's history), only the read tools the parent may
use, its own small round budget and depth 1 (it cannot start a helper itself). The parent gets back only
the helper's summary, so a long search does not fill the parent's context (agent-improvements §8).

"task" is handled inside the loop, not by the registry: it runs no handler of its own and writes nothing. The
chat and mission loops get `run_subagent` as their helper."""

from __future__ import annotations

import dataclasses
from typing import Any

from brain.companion.loop import MAX_TASK_CHARS, TASK_TOOL, AgentLoop, CallOutcome
from brain.companion.prompt import SchemaCache, offered_tools, subagent_system_prompt
from brain.events.actor import ai
from brain.i18n import tr

MAX_SUMMARY_CHARS = 2000


async def run_subagent(parent: AgentLoop, arguments: Any) -> CallOutcome:
    """Run the helper for one "task" call of `parent` and return its summary as the call's outcome."""
    prompt = str(arguments.get("prompt") or "").strip() if isinstance(arguments, dict) else ""
    if not prompt:
        return CallOutcome(name=TASK_TOOL, arguments=arguments, ok=False, error_code="invalid_arguments",
                           message=parent.render(tr("The task needs a prompt: the question for the helper.")))
    tools = offered_tools(parent.brain.registry, allow_sensitive=parent.allow_sensitive, read_only=True)
    tools = [t for t in tools if t.name in parent.offered]
    actor = ai(rationale=f"helper: {prompt[:150]}", mission_id=parent.actor.mission_id,
               iteration_id=parent.actor.iteration_id)
    helper = AgentLoop(
        parent.brain, parent.llm, parent.user, actor,
        tools=SchemaCache(parent.brain.registry).schemas(tools), offered=frozenset(t.name for t in tools),
        tier=parent.tier, allow_sensitive=parent.allow_sensitive, consent=parent.consent,
        sensitive=False, limits=dataclasses.replace(parent.limits, depth=1,
                                                    max_rounds=parent.limits.subagent_rounds),
        control=parent.control.child() if parent.control is not None else None, span=parent.span,
    )
    system = {"role": "system", "content": subagent_system_prompt(parent.user, parent.brain.clock.now())}
    result = await helper.run([system], prompt[:MAX_TASK_CHARS])
    parent.count_steps(len(result.calls))  # the helper's calls count against the parent's step limit
    data = {"rounds": result.rounds, "tool_calls": [c.name for c in result.calls], "stop_reason": result.stop_reason}
    if not result.answered:
        return CallOutcome(name=TASK_TOOL, arguments=arguments, ok=False, error_code=result.stop_reason, data=data,
                           message=parent.render(tr("The helper could not finish: no model answered.")))
    summary = result.text.strip() or parent.render(
        tr("The helper ended after {rounds} rounds without a summary.", rounds=result.rounds))
    return CallOutcome(name=TASK_TOOL, arguments=arguments, ok=True, message=summary[:MAX_SUMMARY_CHARS], data=data,
                       sensitive=helper.sensitive)
