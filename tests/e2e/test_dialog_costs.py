"""What one message of a known person costs the database: transactions and statements of the hot path (the
Telegram load benchmark's mix), so a change that adds a transaction per message shows up here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import event, select

from brain.core import Brain
from brain.people.models import Identity
from brain.pulse.models import PulseState
from tests.conftest import checkouts


@contextmanager
def counting(brain: Brain) -> Iterator[tuple[list[str], list[object]]]:
    statements: list[str] = []
    commits: list[object] = []

    def statement(conn: object, cursor: object, text: str, *rest: object) -> None:
        statements.append(" ".join(text.split()))

    def commit(conn: object) -> None:
        commits.append(conn)

    engine = brain.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", commit)
    try:
        yield statements, commits
    finally:
        event.remove(engine, "before_cursor_execute", statement)
        event.remove(engine, "commit", commit)


# Statements and pool checkouts of one message of a known person (the Telegram load benchmark's mix, without
# the adapter's own): they may go down, never up. Checkouts: the glances before a transaction share one
# connection, the transaction has its own, and the glances after it (the streak's, the goals', the reply) share
# another (`Database.sharing`).
COSTS = {
    "250 ml water": (8, 3),  # lookup with note, free-text flows, drink (goal, insert, event), streak, goals, reply
    "/water 250": (7, 3),
    "/today": (4, 1),  # lookup with note, the snapshot in one statement, the streaks, the reply with its tokens
    "zwei Kaffee": (11, 3),  # both cups in one tool call, one transaction
    "/tasks": (3, 1),  # lookup with note, the read tool as a glance, the reply: all on one connection
}


@pytest.mark.parametrize("text", list(COSTS))
async def test_a_messages_statements_and_checkouts_do_not_grow(brain: Brain, clock, person, text: str) -> None:
    alice = person()
    await alice.send("/today")  # first contact
    await alice.send(text)
    clock.advance(timedelta(minutes=5))
    await alice.send("250 ml water")  # the day counted for the streak already; the snapshot to be read again
    with counting(brain) as (statements, commits), checkouts(brain) as taken:
        reply = await alice.send(text)
    assert reply
    assert (len(statements), len(taken)) == COSTS[text], statements
    assert len(commits) == {"250 ml water": 1, "/water 250": 1, "zwei Kaffee": 1}.get(text, 0)


async def last_inbound(brain: Brain, handle: str):  # type: ignore[no-untyped-def]
    async with brain.transactions.read() as session:
        return await session.scalar(
            select(PulseState.last_inbound_at).join(Identity, Identity.user_id == PulseState.user_id)
            .where(Identity.platform == "test", Identity.platform_id == handle))


async def test_a_known_persons_drink_commits_once_and_still_notes_the_message(brain: Brain, clock, person) -> None:
    alice = person()
    await alice.send("250 ml water")  # first contact, and the streak's first day
    clock.advance(timedelta(minutes=5))
    with counting(brain) as (statements, commits):
        reply = await alice.send("250 ml water")
    assert "Logged 250 ml water. Water today: 500 of 2,000 ml (25%)" in reply
    # The drink's own transaction; the lookup, the idle note, the streak's look, the goals' look and the reply
    # each commit on their own.
    assert len(commits) == 1
    assert len([s for s in statements if "INSERT INTO outbox" in s]) == 1  # the reply, with its buttons' tokens
    assert not any("FOR UPDATE" in s for s in statements)
    assert await last_inbound(brain, alice.handle) == clock.now()


async def test_a_reply_with_buttons_stores_its_tokens_with_it(brain: Brain, clock, person) -> None:
    alice = person()
    await alice.send("/today")
    with counting(brain) as (statements, commits):
        await alice.send("/today")
    assert not commits  # the reply and its buttons' tokens in one statement, committed on its own
    assert [s for s in statements if "INSERT INTO action_tokens" in s and "INSERT INTO outbox" in s]
    assert "Logged 250 ml water" in await alice.press(alice.buttons()["+250 ml water"])


async def test_tokens_stored_with_the_reply_keep_their_kind_and_reuse(person) -> None:
    alice = person()
    await alice.send("/today")
    buttons = alice.buttons()
    water, tasks = buttons["+250 ml water"], buttons["Tasks"]
    assert "Logged 250 ml water" in await alice.press(water)
    assert "Logged" not in await alice.press(water)  # a tool button acts once
    assert "No open tasks" in await alice.press(tasks)
    assert "No open tasks" in await alice.press(tasks)  # a command button can be pressed again
