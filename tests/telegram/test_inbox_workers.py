"""The webhook inbox's workers: an idle process asks PostgreSQL once per poll interval (one watcher), not once per
worker, and updates stored by another process (no local wake-up) are still all handled, in each chat's order,
with the burst spread over several workers."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from sqlalchemy import event, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Engine

from bot.inbox import Inbox
from bot.models import InboxUpdate as TelegramInboxUpdate
from brain.core import Brain

BOT = 4242


class ClaimCounter:
    """Counts the inbox's claim statements on every engine of the process."""

    def __init__(self, awaited: int = 0) -> None:
        self.claims = 0
        self.awaited = awaited
        self.reached = asyncio.Event()  # set once `awaited` claims were made

    def __call__(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "telegram_inbox" in statement and "SKIP LOCKED" in statement:
            self.claims += 1
            if self.claims >= self.awaited:
                self.reached.set()

    def __enter__(self) -> ClaimCounter:
        event.listen(Engine, "before_cursor_execute", self)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(Engine, "before_cursor_execute", self)


async def test_an_idle_inbox_polls_once_per_interval_not_once_per_worker(brain: Brain) -> None:
    async def handle(payload: dict[str, Any]) -> None:
        raise AssertionError("nothing was stored")

    inbox = Inbox(brain.db.engine, BOT, handle, workers=8, poll_interval=0.05)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    with ClaimCounter(awaited=8) as counter:
        running = asyncio.create_task(inbox.run(stop))
        # However slow the machine: every worker looks once when it starts (a deadline, not a guessed pause).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(counter.reached.wait(), 30)
        at_start, started = counter.claims, loop.time()
        await asyncio.sleep(1.0)
        idle_claims, idle_s = counter.claims - at_start, loop.time() - started
        stop.set()
        await running
    assert at_start >= 8  # every worker looked once when it started
    # One watcher looks about once per interval (some 20 times in a second); eight polling workers would look eight
    # times per interval. The bound is per interval that passed, so a slow machine neither fails nor hides it.
    assert 1 <= idle_claims <= 2 * idle_s / 0.05


async def test_updates_stored_by_another_process_are_handled_in_chat_order(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    handled: list[tuple[str, int]] = []
    busy = 0
    most_at_once = 0

    async def handle(payload: dict[str, Any]) -> None:
        nonlocal busy, most_at_once
        busy += 1
        most_at_once = max(most_at_once, busy)
        await asyncio.sleep(0.05)
        handled.append((payload["chat"], payload["update_id"]))
        busy -= 1

    inbox = Inbox(brain.db.engine, BOT, handle, workers=6, poll_interval=0.05)
    stop = asyncio.Event()
    running = asyncio.create_task(inbox.run(stop))
    await asyncio.sleep(0.2)  # all workers idle
    # Rows as another process's webhook endpoint stores them: no permit reaches this process's workers.
    rows = [{"user_id": user.id, "bot_id": BOT, "update_id": 100 + i, "chat_id": f"c{i % 4}", "lane": "queued",
             "payload": {"chat": f"c{i % 4}", "update_id": 100 + i}} for i in range(24)]
    async with brain.db.engine.begin() as connection:
        await connection.execute(insert(TelegramInboxUpdate), rows)
    for _ in range(200):
        if len(handled) == len(rows):
            break
        await asyncio.sleep(0.05)
    stop.set()
    await running
    assert sorted(update for _, update in handled) == [row["update_id"] for row in rows]
    for chat in ("c0", "c1", "c2", "c3"):
        order = [update for c, update in handled if c == chat]
        assert order == sorted(order), chat
    assert most_at_once >= 2  # the watcher's find woke other workers: the four chats went on side by side


async def test_an_update_whose_handling_is_cut_off_stays_in_the_inbox_and_is_handled_again(brain: Brain, user) -> None:  # type: ignore[no-untyped-def]
    """The claim deletes the row inside the transaction that stays open while it is handled: a worker cut off
    mid-update (a crash, a cancelled task) rolls that back, and the update is handled by the next claim."""
    started = asyncio.Event()
    handled: list[int] = []

    async def hang(payload: dict[str, Any]) -> None:
        started.set()
        await asyncio.Event().wait()  # never finishes: cut off below

    async def handle(payload: dict[str, Any]) -> None:
        handled.append(payload["update_id"])

    async with brain.db.engine.begin() as connection:
        await connection.execute(insert(TelegramInboxUpdate).values(
            user_id=user.id, bot_id=BOT, update_id=7, chat_id="c", lane="queued", payload={"update_id": 7}))

    async def stored() -> int:
        async with brain.db.engine.connect() as connection:
            return len((await connection.execute(
                select(TelegramInboxUpdate.update_id).where(TelegramInboxUpdate.bot_id == BOT))).all())

    first = Inbox(brain.db.engine, BOT, hang, workers=1, poll_interval=0.05)
    stop = asyncio.Event()
    running = asyncio.create_task(first.run(stop))
    await asyncio.wait_for(started.wait(), 10)
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    assert await stored() == 1  # the delete of the claim was rolled back

    second = Inbox(brain.db.engine, BOT, handle, workers=1, poll_interval=0.05)
    stop = asyncio.Event()
    running = asyncio.create_task(second.run(stop))
    for _ in range(200):
        if handled:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await running
    assert handled == [7]
    assert await stored() == 0  # handled, and gone with the claim's commit
