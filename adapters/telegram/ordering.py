"""Per-chat order with concurrency across chats. python-telegram-bot hands each update to the update
processor in a task of its own, in the order the updates arrived; `ChatOrderedUpdates` puts each one
behind the previous update of the same lane (a chat's messages; separately, its button presses) before it
waits for one of the `limit` processing slots, so one chat's messages are handled one after another
while other chats go on, and a slow chat holds a slot only while it is actually working."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from telegram.ext import BaseUpdateProcessor

# Above any realistic backlog: PTB's own semaphore must never make a task wait (a waiting task could be
# overtaken by a later update of the same chat); `ChatLanes` limits the concurrency instead.
_UNBOUNDED = 1 << 30


class ChatLanes:
    """Runs awaitables one after another per key, and at most `limit` of them at once overall."""

    def __init__(self, limit: int) -> None:
        self._tails: dict[Hashable, asyncio.Future[None]] = {}
        self._slots = asyncio.Semaphore(limit)

    def busy(self, key: Hashable) -> bool:
        return key in self._tails

    async def run(self, key: Hashable | None, work: Awaitable[Any]) -> None:
        """Awaits `work` after everything queued before under `key` (None: no order needed). The place in
        the lane is taken before the first suspension point, so the call order is the processing order."""
        if key is None:
            async with self._slots:
                await work
            return
        previous = self._tails.get(key)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tails[key] = mine
        started = False
        try:
            if previous is not None:
                # asyncio.wait does not cancel `previous` when this task is cancelled.
                await asyncio.wait([previous])
            async with self._slots:
                started = True
                await work
        finally:
            if not started and asyncio.iscoroutine(work):
                work.close()  # cancelled while queued: the update is dropped, without a never-awaited warning
            mine.set_result(None)
            if self._tails.get(key) is mine:
                del self._tails[key]


class ChatOrderedUpdates(BaseUpdateProcessor):
    """PTB's update processor (`ApplicationBuilder.concurrent_updates`) keeping each chat's order."""

    def __init__(self, limit: int, lane_of: Callable[[object], Hashable | None]) -> None:
        super().__init__(_UNBOUNDED)
        self.lanes = ChatLanes(limit)
        self._lane_of = lane_of

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        await self.lanes.run(self._lane_of(update), coroutine)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to free: the lanes empty when the application stops taking updates."""
