"""The agent-loop improvements: parallel read rounds in call order, transient reminders, /stop, steering,
bypassing a chat's queue, and sub-agents."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from bot.dialog import Dialog
from brain.clock import FixedClock
from brain.core import Brain
from brain.modules.drink.models import DrinkEntry
from brain.tools.spec import ToolContext, ToolResult, ToolSpec
from tests.companion.conftest import (
    conversation,
    count_rows,
    offered,
    reminders,
    system_prompt,
    tool_messages,
    wait_for,
)
from tests.fakes.ollama_server import FakeOllama, Script, call

DELAY_S = 0.2


class Concurrency:
    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self.order: list[str] = []
        self.spans: list[tuple[float, float]] = []

    def tool(self, name: str, policy: str = "read") -> ToolSpec:
        async def handler(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
            self.now += 1
            self.peak = max(self.peak, self.now)
            started = time.perf_counter()
            try:
                await asyncio.sleep(DELAY_S)
            finally:
                self.now -= 1
                self.spans.append((started, time.perf_counter()))
            self.order.append(name)
            return ToolResult(ok=True, data={"tool": name})

        return ToolSpec(name, "todo", f"Slow {policy} tool {name}.", (), policy, handler)  # type: ignore[arg-type]


@pytest.fixture
def slow(brain: Brain) -> Concurrency:
    tracker = Concurrency()
    for name in ("slow_a", "slow_b", "slow_c"):
        brain.registry.register(tracker.tool(name))
    brain.registry.register(tracker.tool("slow_write", "write"))
    return tracker


async def test_read_calls_of_one_round_run_together_and_come_back_in_call_order(
        person, fake: FakeOllama, slow: Concurrency) -> None:
    fake.script(Script(tool_calls=[call("slow_c"), call("slow_a"), call("slow_b")]), Script(content="Done."))
    await person().send("read three things")
    assert slow.peak == 3
    assert max(end for _, end in slow.spans) - min(start for start, _ in slow.spans) < 2 * DELAY_S
    results = tool_messages(fake.requests[1])
    assert [m["tool_name"] for m in results] == ["slow_c", "slow_a", "slow_b"]
    assert [json.loads(m["content"])["data"]["tool"] for m in results] == ["slow_c", "slow_a", "slow_b"]


async def test_reads_of_one_tool_in_one_round_run_together_too(person, fake: FakeOllama, slow: Concurrency) -> None:
    # The gate's advisory lock per (person, tool) is held only while it counts and records a call, not while
    # the tool works: three calls of one tool overlap like calls of three tools.
    fake.script(Script(tool_calls=[call("slow_a"), call("slow_a"), call("slow_a")]), Script(content="Done."))
    await person().send("read one thing three times")
    assert slow.peak == 3
    assert [m["tool_name"] for m in tool_messages(fake.requests[1])] == ["slow_a"] * 3


async def test_a_round_with_a_write_runs_one_call_after_another(person, fake: FakeOllama, slow: Concurrency) -> None:
    fake.script(Script(tool_calls=[call("slow_a"), call("slow_write"), call("slow_b")]), Script(content="Done."))
    await person().send("read, write, read")
    assert slow.peak == 1
    assert slow.order == ["slow_a", "slow_b"]  # the write became a proposal: the gate stages AI writes
    (_, a_end), (b_start, _) = slow.spans
    assert b_start >= a_end
    results = tool_messages(fake.requests[1])
    assert [m["tool_name"] for m in results] == ["slow_a", "slow_write", "slow_b"]
    assert json.loads(results[1]["content"])["data"]["status"] == "proposed"


async def test_no_more_than_ten_reads_run_at_once(brain: Brain, person, fake: FakeOllama) -> None:
    tracker = Concurrency()
    names = [f"many_{i}" for i in range(14)]
    for name in names:
        brain.registry.register(tracker.tool(name))
    fake.script(Script(tool_calls=[call(name) for name in names]), Script(content="Done."))
    await person().send("read a lot")
    assert tracker.peak == 10
    assert [m["tool_name"] for m in tool_messages(fake.requests[1])] == names


async def test_reminders_go_into_every_request_but_are_never_stored(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("create_task", title="Buy milk")]), Script(content="Proposed."))
    alice = person()
    await alice.send("buy milk")
    first, second = reminders(fake.requests[0]), reminders(fake.requests[1])
    assert any("Local time of the person: Monday 2026-11-30 08:30" in r for r in first)
    assert any("Budget: 1 of 3 tool rounds used" in r for r in second)
    assert any("1 proposal(s) wait for the person's approval" in r for r in second)
    assert fake.requests[1]["messages"][-1]["content"].startswith("<reminder>")
    rows = await conversation(brain, (await alice.user()).id)
    assert rows and not any("<reminder>" in r.content for r in rows)
    # Nor does a reminder of the first turn come back in the next one's history.
    await alice.send("thanks")
    history = fake.requests[-1]["messages"]
    assert sum("Budget: 1 of 3" in str(m.get("content", "")) for m in history) == 0


async def test_a_stale_overview_is_pointed_out_in_a_long_turn(person, fake: FakeOllama, clock: FixedClock) -> None:
    def slow_tool_round(body: dict[str, Any]) -> Script:
        clock.advance(timedelta(minutes=15))  # the turn has been running for a while
        return Script(tool_calls=[call("get_task_stats")])

    fake.script(slow_tool_round, Script(content="Done."))
    await person().send("what is left for today?")
    assert not any("minutes old" in r for r in reminders(fake.requests[0]))
    assert any("is 15 minutes old" in r for r in reminders(fake.requests[1]))


async def test_stop_ends_the_running_turn_and_keeps_what_it_did(brain: Brain, dialog: Dialog, person,
                                                               fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("log_drink", drink_type="water", quantity_ml=250)]),
                Script(content="too late", delay_s=5))
    alice = person()
    turn = asyncio.create_task(alice.send("log water and then think hard"))
    await wait_for(lambda: len(fake.requests) == 2)
    assert dialog.bypasses_queue(alice.inbound("/stop"))
    assert await alice.send("/stop") == ""
    started = time.perf_counter()
    reply = await turn
    assert time.perf_counter() - started < 2
    assert reply == "Stopped."
    assert await count_rows(brain, DrinkEntry) == 1
    rows = await conversation(brain, (await alice.user()).id)
    assert [(r.role, r.tool_name) for r in rows] == [("user", None), ("assistant", None), ("tool", "log_drink")]


async def test_stop_without_a_running_turn_says_so(person) -> None:
    assert "Nothing is running" in await person().send("/stop")


async def test_a_message_during_a_turn_is_taken_in_before_the_next_model_call(
        dialog: Dialog, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("get_task_stats")], delay_s=0.3), Script(content="Both done."))
    alice = person()
    turn = asyncio.create_task(alice.send("how many tasks?"))
    await wait_for(lambda: len(fake.requests) == 1)
    steering = alice.inbound("and log a coffee too")
    assert dialog.bypasses_queue(steering)
    assert await dialog.handle(steering) == []
    assert await turn == "Both done."
    second = [m for m in fake.requests[1]["messages"] if not str(m.get("content", "")).startswith("<reminder>")]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-1]["content"] == "and log a coffee too"
    assert any("The person wrote again" in r for r in reminders(fake.requests[1]))


async def test_a_message_after_the_answer_gets_one_more_call(dialog: Dialog, person, fake: FakeOllama) -> None:
    fake.script(Script(content="Here you go.", delay_s=0.3), Script(content="And the second one."))
    alice = person()
    turn = asyncio.create_task(alice.send("first"))
    await wait_for(lambda: len(fake.requests) == 1)
    assert await dialog.handle(alice.inbound("second")) == []
    assert await turn == "Here you go.\n\nAnd the second one."
    users = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert users[-2:] == ["first", "second"]


async def test_buttons_and_decisions_bypass_the_queue_and_other_updates_wait(dialog: Dialog, person) -> None:
    alice = person()
    assert dialog.bypasses_queue(alice.inbound(action="sometoken"))
    assert dialog.bypasses_queue(alice.inbound("/approve 1234abcd"))
    assert dialog.bypasses_queue(alice.inbound("/ablehnen 1234abcd"))
    assert dialog.bypasses_queue(alice.inbound("/stop"))
    assert not dialog.bypasses_queue(alice.inbound("/today"))
    assert not dialog.bypasses_queue(alice.inbound("hello"))  # nothing runs for Alice


async def test_approve_is_handled_while_a_turn_runs(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("create_task", title="Buy milk")]), Script(content="Proposed."))
    alice = person()
    await alice.send("buy milk")
    fake.script(Script(content="slow", delay_s=1.0))
    turn = asyncio.create_task(alice.send("something slow"))
    await wait_for(lambda: len(fake.requests) == 3)
    from brain.companion.models import Proposal
    from brain.modules.todo.models import Task

    async with brain.transactions.read() as session:
        from sqlalchemy import select

        proposal = (await session.scalars(select(Proposal))).one()
    started = time.perf_counter()
    reply = await alice.send(f"/approve {proposal.id.hex[:8]}")
    assert time.perf_counter() - started < 0.9
    assert "Approved" in reply
    assert await count_rows(brain, Task) == 1
    assert await turn == "slow"


def helper_or_parent(helper: Callable[[dict[str, Any]], Script],
                     parent: Callable[[dict[str, Any]], Script]) -> Callable[[dict[str, Any]], Script]:
    def respond(body: dict[str, Any]) -> Script:
        is_helper = "You are a helper" in str(body["messages"][0]["content"])
        return helper(body) if is_helper else parent(body)

    return respond


async def test_a_sub_agent_has_fresh_messages_read_tools_depth_one_and_returns_a_summary(
        person, fake: FakeOllama) -> None:
    helper_calls: list[dict[str, Any]] = []

    def helper(body: dict[str, Any]) -> Script:
        helper_calls.append(body)
        if len(helper_calls) == 1:
            return Script(tool_calls=[call("task", prompt="go deeper"), call("create_task", title="sneaky"),
                                      call("get_task_stats")])
        return Script(content="SUMMARY: no open tasks.")

    def parent(body: dict[str, Any]) -> Script:
        if not tool_messages(body):
            return Script(tool_calls=[call("task", description="check tasks", prompt="How many open tasks?")])
        return Script(content="You have no open tasks.")

    fake.default = helper_or_parent(helper, parent)
    alice = person()
    assert await alice.send("my secret is marzipan; how many tasks?") == "You have no open tasks."
    first = helper_calls[0]
    assert "marzipan" not in json.dumps(first["messages"])  # fresh: none of the parent's conversation
    assert [m["content"] for m in first["messages"] if m["role"] == "user"] == ["How many open tasks?"]
    tools = offered(first)
    assert "task" not in tools and "create_task" not in tools and "get_task_stats" in tools
    refused = {m["tool_name"]: json.loads(m["content"]) for m in tool_messages(helper_calls[1])}
    assert refused["task"]["data"]["error"] == "sub_agent_depth"
    assert refused["create_task"]["data"]["error"] == "not_offered"
    assert refused["get_task_stats"]["ok"] is True
    [summary] = tool_messages(fake.requests[-1])
    body = json.loads(summary["content"])
    assert body["message"] == "SUMMARY: no open tasks."
    assert "go deeper" not in json.dumps(fake.requests[-1]["messages"])  # only the summary comes back
    assert "task" in offered(fake.requests[0])
    assert "You are a helper" not in system_prompt(fake.requests[-1])
