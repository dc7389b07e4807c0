"""Per-chat order with concurrency across chats. An adapter runs each update as a task of its own, in the order the
updates arrived; `ChatLanes` puts each one behind the previous update of the same lane before it waits for one of
the `limit` processing slots, so one chat's messages are handled one after another while other chats go on, and a
slow chat holds a slot only while it is actually working.

A chat has two lanes (`lane_of`): its messages ("queued"), and the updates the dialog must take at once (button
presses, /stop, /approve, /reject, text that steers a running companion turn: "now"), so those are never stuck
behind a long turn of the same chat."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Hashable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.dialog import Dialog
    from bot.inbound import Inbound

QUEUED, NOW = "queued", "now"


def lane_kind(dialog: Dialog, inbound: Inbound) -> str:
    """"now" for the updates the dialog takes at once (`Dialog.bypasses_queue`), "queued" for the rest."""
    return NOW if dialog.bypasses_queue(inbound) else QUEUED


def lane_of(dialog: Dialog, inbound: Inbound) -> tuple[str, str]:
    """The lane an update waits in: its kind (`lane_kind`) in its chat."""
    return lane_kind(dialog, inbound), inbound.chat_id


class ChatLanes:
    """Runs awaitables one after another per key, and at most `limit` of them at once overall."""

    def __init__(self, limit: int) -> None:
        self._tails: dict[Hashable, asyncio.Future[None]] = {}
        self._slots = asyncio.Semaphore(limit)

    def busy(self, key: Hashable) -> bool:
        return key in self._tails

    def chat_busy(self, chat_id: str) -> bool:
        """Whether an update of the chat is handled or waits, in either of its lanes."""
        return self.busy((QUEUED, chat_id)) or self.busy((NOW, chat_id))

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
