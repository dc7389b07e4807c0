"""A companion turn from the person's message to the reply, with the real ollama client against the fake
server and the real executor and policy gate: auto writes, proposals with buttons, rejection feedback,
refusals, what is stored and what is traced."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import event, select

from bot.inbound import Inbound
from brain.companion.models import ConversationMessage, Proposal, ToolCallRecord
from brain.core import Brain
from brain.events.store import EventRecord
from brain.modules.drink.models import DrinkEntry
from brain.modules.todo.models import Task
from brain.pipeline_log import PipelineLog, query_turn
from brain.tools.spec import ToolContext, ToolResult, ToolSpec
from tests.companion.conftest import conversation, count_rows, system_prompt, tool_messages
from tests.fakes.ollama_server import FakeOllama, Script, call


async def test_log_a_glass_of_water_runs_log_drink_as_the_ai(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("log_drink", drink_type="water", quantity_ml=250)]),
                Script(content="Done: a glass of water is logged."))
    alice = person()
    reply = await alice.send("log a glass of water")
    assert reply == "Done: a glass of water is logged."
    async with brain.transactions.read() as session:
        drinks = (await session.scalars(select(DrinkEntry))).all()
        events = (await session.scalars(select(EventRecord).where(EventRecord.type == "DrinkLogged"))).all()
    assert [(d.drink_type, d.quantity_ml) for d in drinks] == [("water", 250)]
    assert [e.actor["kind"] for e in events] == ["ai"]
    assert events[0].actor["rationale"] == "log a glass of water"
    [result] = tool_messages(fake.requests[1])
    body = json.loads(result["content"])
    assert body["ok"] is True and "Logged 250 ml water" in body["message"]
    assert result["tool_name"] == "log_drink"


async def test_a_task_from_the_model_becomes_a_proposal_with_buttons(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("create_task", title="Buy milk")]),
                Script(content="I proposed a task for you."))
    alice = person()
    reply = await alice.send("remind me to buy milk")
    assert "I proposed a task for you." in reply
    assert "Create the task «Buy milk»?" in reply
    assert "remind me to buy milk" not in reply  # the person's own words are not read back as a reason
    assert {"Approve", "Reject"} <= set(alice.buttons())
    assert await count_rows(brain, Task) == 0
    assert json.loads(tool_messages(fake.requests[1])[0]["content"])["data"]["status"] == "proposed"

    await alice.press("Approve")
    async with brain.transactions.read() as session:
        tasks = (await session.scalars(select(Task))).all()
        event = (await session.scalars(select(EventRecord).where(EventRecord.type == "TaskCreated"))).one()
    assert [t.title for t in tasks] == ["Buy milk"]
    assert event.actor["kind"] == "ai"


async def test_a_reminder_from_the_model_is_set_without_a_proposal(brain: Brain, person, fake: FakeOllama) -> None:
    from brain.reminders.models import Reminder

    fake.script(Script(tool_calls=[call("create_reminder", text="Call mom", at="2026-11-30T15:00")]),
                Script(content="I'll remind you at 3 pm."))
    alice = person()
    assert await alice.send("remind me to call mom at 3pm") == "I'll remind you at 3 pm."
    async with brain.transactions.read() as session:
        [reminder] = (await session.scalars(select(Reminder))).all()
        event = (await session.scalars(select(EventRecord).where(EventRecord.type == "ReminderCreated"))).one()
    assert reminder.text == "Call mom" and reminder.occurrence_at.isoformat() == "2026-11-30T14:00:00+00:00"
    assert event.actor["kind"] == "ai" and await count_rows(brain, Proposal) == 0


async def test_a_rejection_reason_reaches_the_next_prompt_once(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("create_task", title="Call the dentist")]), Script(content="Proposed."))
    alice = person()
    await alice.send("I need to call the dentist")
    async with brain.transactions.read() as session:
        proposal = (await session.scalars(select(Proposal))).one()
    await alice.send(f"/reject {proposal.id.hex[:8]} not this week, I'm travelling")
    await alice.send("what else?")
    assert "not this week, I'm travelling" in system_prompt(fake.requests[-1])
    assert "create_task" in system_prompt(fake.requests[-1])
    await alice.send("and now?")
    assert "not this week" not in system_prompt(fake.requests[-1])


async def test_deleting_all_tasks_is_denied_and_nothing_changes(brain: Brain, person, fake: FakeOllama) -> None:
    alice = person()
    await alice.send("/task Buy milk")
    await alice.send("/task Water the plants")
    before = (await count_rows(brain, Task), await count_rows(brain, EventRecord), await count_rows(brain, Proposal))
    fake.script(Script(tool_calls=[call("delete_task", task="1"), call("delete_task", task="2")]),
                Script(content="I may not delete tasks."))
    reply = await alice.send("delete all tasks")
    assert reply == "I may not delete tasks."
    assert (await count_rows(brain, Task), await count_rows(brain, EventRecord),
            await count_rows(brain, Proposal)) == before
    results = [json.loads(m["content"]) for m in tool_messages(fake.requests[1])]
    assert [r["ok"] for r in results] == [False, False]
    assert {r["data"]["error"] for r in results} == {"policy_denied"}


async def test_unknown_tools_and_bad_arguments_become_tool_messages(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("make_coffee", strength="strong"), call("log_drink", drink_type="lava")]),
                Script(content="That did not work."))
    alice = person()
    assert await alice.send("make me a coffee") == "That did not work."
    unknown, bad = (json.loads(m["content"]) for m in tool_messages(fake.requests[1]))
    assert unknown["ok"] is False and unknown["data"]["error"] == "unknown_tool"
    assert bad["ok"] is False and bad["data"]["error"] not in (None, "internal_error")
    async with brain.transactions.read() as session:
        invented = (await session.scalars(select(ToolCallRecord).where(ToolCallRecord.known.is_(False)))).all()
    assert [r.tool_name for r in invented] == ["make_coffee"]
    assert await count_rows(brain, DrinkEntry) == 0


async def test_at_most_three_tool_rounds_then_an_answer_without_tools(person, fake: FakeOllama) -> None:
    asks_again = Script(tool_calls=[call("get_task_stats")])
    fake.script(asks_again, asks_again, asks_again, Script(content="Here is what I found."))
    alice = person()
    assert await alice.send("how am I doing?") == "Here is what I found."
    assert len(fake.requests) == 4
    assert all(r.get("tools") for r in fake.requests[:3])
    assert not fake.requests[3].get("tools")
    assert "No tool calls are possible any more" in fake.sent_text(3)


async def test_the_conversation_is_stored_in_order_and_becomes_history(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("get_task_stats")]), Script(content="You have no open tasks."))
    alice = person()
    await alice.send("any tasks?")
    user = await alice.user()
    rows = await conversation(brain, user.id)
    assert [(r.role, r.tool_name) for r in rows] == [("user", None), ("assistant", None), ("tool", "get_task_stats"),
                                                     ("assistant", None)]
    assert rows[1].tool_calls == [{"function": {"name": "get_task_stats", "arguments": {}}}]
    assert len({r.turn_id for r in rows}) == 1

    await alice.send("thanks")
    history = [m for m in fake.requests[-1]["messages"] if m["role"] != "system"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant", "user"]
    assert history[0]["content"] == "any tasks?" and history[-1]["content"] == "thanks"


async def test_the_streaming_sink_gets_the_pieces_of_the_answer(person, fake: FakeOllama) -> None:
    fake.script(Script(content="One, two, three, four.", chunks=4))
    pieces: list[str] = []

    async def sink(piece: str) -> None:
        pieces.append(piece)

    alice = person()
    reply = await alice.send("count to four", on_text=sink)
    assert len(pieces) == 4
    assert "".join(pieces) == reply == "One, two, three, four."
    assert fake.requests[0]["stream"] is True


async def test_streamed_words_of_two_replies_are_joined_as_the_answer_is(person, fake: FakeOllama) -> None:
    fake.script(Script(content="Let me look.", tool_calls=[call("get_task_stats")]), Script(content="Nothing open."))
    pieces: list[str] = []

    async def sink(piece: str) -> None:
        pieces.append(piece)

    alice = person()
    reply = await alice.send("anything open?", on_text=sink)
    assert "".join(pieces) == reply == "Let me look.\n\nNothing open."


async def test_the_turn_is_traced_in_the_pipeline_log(brain: Brain, person, fake: FakeOllama, companion) -> None:
    log = PipelineLog(brain.db.sessions, brain.clock)
    companion._log = log
    fake.script(Script(tool_calls=[call("get_task_stats")], prompt_tokens=120, eval_tokens=7),
                Script(content="All clear.", prompt_tokens=150, eval_tokens=3))
    await person().send("status?")
    await log.close()
    async with brain.transactions.read() as session:
        from brain.memory.models import PipelineLogEntry

        turn_id = (await session.scalars(select(PipelineLogEntry.turn_id).where(
            PipelineLogEntry.name == "companion.turn"))).first()
        assert turn_id is not None
        rows = await query_turn(session, turn_id)
    kinds = [r.kind for r in rows]
    assert kinds[0] == "span_start" and kinds[-1] == "span_end"
    assert kinds.count("prompt") == 2
    tokens = [r.content for r in rows if r.kind == "token"]
    assert [(t["prompt"], t["completion"]) for t in tokens] == [(120, 7), (150, 3)]
    output = next(r.content for r in rows if r.kind == "output")
    assert output["text"] == "All clear." and output["tools"] == ["get_task_stats"]
    stored = (await conversation(brain, next(r.user_id for r in rows if r.user_id is not None)))
    assert {r.turn_id for r in stored} == {turn_id}


async def test_an_empty_answer_shows_what_the_calls_did(person, fake: FakeOllama) -> None:
    fake.script(Script(tool_calls=[call("log_drink", drink_type="coffee")]), Script(content=""))
    reply = await person().send("coffee")
    assert "Logged" in reply and "coffee" in reply


async def test_another_persons_conversation_never_reaches_the_prompt(brain: Brain, person, fake: FakeOllama) -> None:
    fake.script(Script(content="Noted, Alice."))
    await person().send("my secret word is pumpernickel")
    await person().send("hello")
    assert "pumpernickel" not in fake.sent_text(-1)
    assert await count_rows(brain, ConversationMessage) == 4


async def test_the_rules_ask_for_the_persons_language(dialog, fake: FakeOllama) -> None:
    from tests.companion.conftest import Person

    fake.script(Script(content="Hallo!"))
    german = Person(dialog, "de-person")
    german.inbound = lambda text=None, action=None: Inbound(  # type: ignore[method-assign]
        platform="test", platform_user_id="de-person", chat_id="de-person", message_id="m1", text=text,
        action=action, language_code="de")
    assert await german.send("Hallo") == "Hallo!"
    prompt = system_prompt(fake.requests[0])
    assert "Answer in German." in prompt
    assert "Aufgaben:" in prompt  # the context document is rendered in the person's language


async def test_recalled_memories_go_into_the_prompt_with_day_speaker_and_why_and_are_reinforced(
        brain: Brain, person, fake: FakeOllama) -> None:
    from brain.memory.recall import Recalled

    class Remembers:
        """The memory as the companion uses it: one recalled node, and a record of what was reinforced."""

        log = None

        def __init__(self) -> None:
            self.queries: list[tuple[str, str]] = []
            self.reinforced: list[tuple[str, list[int]]] = []

        async def recall(self, user_id, query, at, k=5, mode="chat"):  # type: ignore[no-untyped-def]
            self.queries.append((query, mode))
            return [Recalled(id=7, text="Anna's birthday is on 12 May", score=0.9, why="anchor: birthday",
                             at=at, speaker="user"),
                    Recalled(id=8, text="The bike needs a new chain", score=0.05, why="match (vector 0.08)",
                             at=at, speaker="user", meant=False)]

        async def reinforce_from_answer(self, user_id, answer, recalled):  # type: ignore[no-untyped-def]
            self.reinforced.append((answer, [r.id for r in recalled]))
            return [7]

        async def remember(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return None  # the dialog's capture of the conversation; not what this test is about

    memory = Remembers()
    brain.memory = memory
    fake.script(Script(content="Anna's birthday is on 12 May."))
    await person().send("when is Anna's birthday?")
    assert memory.queries == [("when is Anna's birthday?", "chat")]
    assert system_prompt(fake.requests[0]).endswith(
        "\n- Mon 2026-11-30, the person said: Anna's birthday is on 12 May (anchor: birthday)")
    assert "bike" not in system_prompt(fake.requests[0])  # only what the message clearly means
    assert memory.reinforced == [("Anna's birthday is on 12 May.", [7])]


async def test_a_follow_up_turn_with_a_read_call_costs_five_statements_in_three_transactions(
        brain: Brain, companion, user, fake: FakeOllama) -> None:
    """The loop's own database work per turn (benchmarks/companion.py): settings and whether proposals or
    rejections wait, then the history (one transaction); the person with the gate's lock, then the gate's
    record with the rate-limit count (one transaction); the turn's messages (one transaction)."""
    async def lookup(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        return ToolResult(ok=True, data={"found": 1})

    brain.registry.register(ToolSpec("noop_lookup", "todo", "A lookup without work of its own.", (), "read", lookup))
    counted = {"statements": 0, "commits": 0}

    def statement(*_: Any) -> None:
        counted["statements"] += 1

    def commit(*_: Any) -> None:
        counted["commits"] += 1

    for text in ("first", "again"):
        fake.script(Script(tool_calls=[call("noop_lookup")]), Script(content="Found it."))
        if text == "again":  # the first turn builds the context document; the follow-up is measured
            event.listen(brain.db.engine.sync_engine, "before_cursor_execute", statement)
            event.listen(brain.db.engine.sync_engine, "commit", commit)
        outcome = await companion.respond(user, text)
        assert outcome.text == "Found it." and [(c.name, c.ok) for c in outcome.calls] == [("noop_lookup", True)]
    event.remove(brain.db.engine.sync_engine, "before_cursor_execute", statement)
    event.remove(brain.db.engine.sync_engine, "commit", commit)
    assert counted == {"statements": 5, "commits": 3}
    async with brain.transactions.read() as session:
        records = (await session.scalars(select(ToolCallRecord).where(ToolCallRecord.user_id == user.id))).all()
    assert [(r.tool_name, r.decision, r.ok) for r in records] == [("noop_lookup", "auto", True)] * 2
    assert len(await conversation(brain, user.id)) == 8
