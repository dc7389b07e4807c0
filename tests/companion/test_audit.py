"""/audit: per tool the AI's calls, failures, proposals and refusals of the last 7 days, the names it
invented and the tools it never used; only for the identities in COMPANION_ADMINS."""

from __future__ import annotations

from datetime import timedelta

from brain.clock import FixedClock
from brain.companion.audit import tool_usage
from brain.core import Brain
from tests.companion.conftest import ADMIN
from tests.fakes.ollama_server import FakeOllama, Script, call


async def test_audit_is_for_admins_only(person) -> None:
    reply = await person().send("/audit")
    assert "only for administrators" in reply
    assert "Tool use" not in reply


async def test_audit_counts_calls_failures_and_invented_names(brain: Brain, person, fake: FakeOllama,
                                                             clock: FixedClock) -> None:
    fake.script(Script(tool_calls=[call("get_task_stats"), call("get_task_stats"), call("create_task", title="X"),
                                   call("delete_task", task="1"), call("tidy_everything")]),
                Script(content="Done."))
    await person().send("do lots")
    admin = person(ADMIN.split(":", 1)[1])
    reply = await admin.send("/audit")
    assert "Tool use by the assistant in the last 7 days: 5 calls." in reply
    assert "get_task_stats: 2 calls, 0 failed, 0 proposed, 0 refused" in reply
    assert "create_task: 1 call, 0 failed, 1 proposed, 0 refused" in reply
    assert "delete_task: 1 call, 1 failed, 0 proposed, 1 refused" in reply
    assert "Invented tool names: tidy_everything (1)" in reply
    assert "Never used:" in reply and "log_drink" in reply

    async with brain.transactions.read() as session:
        later = await tool_usage(session, brain.registry, clock.now() + timedelta(days=8))
    assert later.calls == 0  # a week later the window is empty
