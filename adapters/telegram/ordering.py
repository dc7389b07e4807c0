"""python-telegram-bot hands each update to its update processor in a task of its own, in the order the updates
arrived; `ChatOrderedUpdates` runs each in its chat's lane (`bot.ordering`), so one chat's updates keep their
order while other chats go on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from telegram.ext import BaseUpdateProcessor

from bot.ordering import ChatLanes

# Above any realistic backlog: PTB's own semaphore must never make a task wait (a waiting task could be
# overtaken by a later update of the same chat); `ChatLanes` limits the concurrency instead.
_UNBOUNDED = 1 << 30


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
