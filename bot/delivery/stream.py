"""An answer shown while the model writes it, on a platform that can edit a sent message (`Editing`). The dialog
hands the model's text to a `LiveAnswer` piece by piece; it shows the text after `Pace.first_after` seconds and
edits it as it grows, at most once every `Pace.every` seconds, one message per part as the platform splits it.

When the answer is complete the dialog closes it and writes the outbox row as always, with the ids of the messages
that showed it (`DeliveryState.shown`, in the same transaction). The sender then delivers that row by editing
those messages into the finished answer (its formatting and buttons) instead of sending it again, so a restart
between the two sends no duplicate. A short answer, complete before `first_after`, is never shown early: it goes out
as an ordinary message."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from bot.delivery.transport import ChatHeld, OutcomeUnknown, Outgoing, SendFailure

log = logging.getLogger(__name__)

# While an answer is not shown yet the model's stream is read in steps of a fifth of `Pace.first_after`, at most this
# long: a short answer goes out at most this much later than it is complete, and pieces come a few at a time.
STEP_S = 0.1
# A draft due within this (at most; a twentieth of `Pace.every` when that is less) goes with the read that found it:
# the read after a draft wakes a little early when that draft took longer than the one before.
EARLY_S = 0.01
# The writer of a paced answer waits this long past a draft's due time (at most; a fifth of `Pace.every` when that is
# less) for the stream's read before it shows what it has: the model may have paused.
GRACE_S = 0.05

Part = TypeVar("Part", contravariant=True)


@runtime_checkable
class Finishing(Protocol[Part]):
    """What the sender needs of a platform to deliver an answer that was shown while it was written: each call
    raises a `SendFailure` when it did not go through, as `Transport.send` does."""

    async def finish(self, outgoing: Outgoing, message_id: str, part: Part) -> None:
        """Makes a shown message this part of the finished row (text, formatting, buttons). Repeating it has no
        further effect (an edit to what is shown already is no change)."""

    async def retract(self, chat_id: str, message_id: str) -> None:
        """Removes a shown message that the finished answer no longer needs."""


@runtime_checkable
class Editing(Finishing[Part], Protocol[Part]):
    """What a platform that edits sent messages supplies, besides its `Transport`, for `LiveAnswer`."""

    def drafts(self, text: str) -> Sequence[str]:
        """An answer being written as the texts of the messages that show it (the platform's split)."""
        ...

    async def show(self, chat_id: str, text: str) -> str:
        """Sends `text` as a new plain message; its id."""
        ...

    async def revise(self, chat_id: str, message_id: str, text: str) -> None:
        """Replaces the text of a shown message with a longer draft."""


class AnswerStream(Protocol):
    """What the dialog streams a companion answer into (`LiveAnswer`, or the terminal's printer)."""

    async def piece(self, text: str) -> None:
        """The next piece of the answer, as the model wrote it."""

    async def close(self) -> Shown | None:
        """The answer is complete: the messages that show it so far (None: none, or unknown)."""
        ...


@dataclass(frozen=True)
class Pace:
    """How soon an answer is first shown (seconds after the model's first words) and how often it is edited."""

    first_after: float = 1.0
    every: float = 1.0


@dataclass
class Shown:
    """What a live answer put on screen: the message ids, one per part, and their texts."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


class LiveAnswer:
    """One answer shown in one chat while it is written (see the module docstring). `piece` is the brain's text
    sink; `close` ends the showing and says which messages show the answer (None: none, or unknown). `clock` and
    `sleep` are injected so that tests pace it without waiting."""

    def __init__(self, editing: Editing[Any], chat_id: str, *, pace: Pace = Pace(),
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.editing = editing
        self.chat_id = chat_id
        self.pace = pace
        self.clock = clock
        self.sleep = sleep
        self.text = ""
        self.shown = Shown()
        self.requests = 0  # shows and edits sent
        self._grown = asyncio.Event()
        self._closed = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._last_request: float | None = None
        self._due = 0.0  # when the next draft may go
        self._held = False  # the platform held the last draft (flood control)
        self._lost = False  # a show whose outcome is unknown: the message may or may not be there
        self._stopped = False  # no more drafts (the platform refused one)
        self._result: Shown | None = None
        self._paced = False  # the model's stream rests as `rest` says, and its reads hand drafts over
        self._caught_up = asyncio.Event()  # a read at the due time found new text: the draft may go
        self._syncing = False  # a draft is on its way
        self._sync_started = 0.0
        self._sync_s = 0.0  # how long the last draft took

    async def __call__(self, text: str) -> None:
        """The brain's text sink (`brain.companion.llm.PacedSink`): `piece`."""
        await self.piece(text)

    def rest(self) -> float:
        """How long the model's stream may rest before it is read again (seconds), asked after every read; while it
        rests, its lines wait in the socket and come in one read. Each wake-up of the process costs CPU of its own
        (on a virtual machine a quarter of a millisecond and more), so the stream is read when a draft needs text,
        not piece by piece: before the answer is shown (also while the model writes no words yet, as a thinking
        model does), in short steps (`STEP_S`), so that a short answer goes out nearly as soon as it is complete;
        once it is shown, at the next edit's due time, and the read that finds new text then hands the draft to the
        writer (no wake-up of its own for it). No rest while flood control holds the chat (the finished answer waits
        for it anyway), once closed, or when the draft is due and nothing new is written yet (the writer waits for
        text)."""
        self._paced = True
        if self._writer is None and not self._closed.is_set():  # no words yet (a thinking model): short steps too
            return min(self.pace.first_after / 5, STEP_S)
        if self._held or self._closed.is_set() or self._writer is None or self._writer.done():
            return 0.0
        now = self.clock()
        if self._syncing:  # the next draft may go `every` after this one, as far as the last one's time tells
            return max(0.0, self._sync_started + self._sync_s + self.pace.every - now)
        wait = self._due - now
        if wait <= min(self.pace.every / 20, EARLY_S):
            if not self._grown.is_set():
                return 0.0
            self._caught_up.set()  # the writer goes with all that was read, and the next draft is this far off
            return self._sync_s + self.pace.every
        if not self.shown.ids:
            return min(wait, self.pace.first_after / 5, STEP_S)
        return wait

    async def piece(self, text: str) -> None:
        """The next piece of the answer, as the model wrote it."""
        if self._closed.is_set():
            return
        self.text += text
        self._grown.set()
        if self._writer is None:
            self._due = self.clock() + self.pace.first_after
            self._writer = asyncio.get_running_loop().create_task(self._write(self._due))

    async def close(self) -> Shown | None:
        """Stops showing drafts (the request on its way is waited for), then waits until one more edit is allowed:
        the finished answer follows at once. The messages that show the answer, or None when nothing was shown or
        a show's outcome is unknown (the finished answer then goes as a new message)."""
        if self._closed.is_set():
            return self._result
        self._closed.set()
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)
        if self._lost or not self.shown.ids:
            return None
        if self._last_request is not None:
            rest = self._last_request + self.pace.every - self.clock()
            if rest > 0:
                await self.sleep(rest)
        self._result = self.shown
        return self.shown

    async def _write(self, due: float) -> None:
        while not self._stopped:
            self._due = due
            if not await self._wait(due) or not await self._wait_for_text():
                return
            self._caught_up.clear()
            self._syncing, self._sync_started = True, self.clock()
            try:
                await self._sync()
            except ChatHeld as flood:  # the chat must wait: the next draft comes after that
                self._held = True
                due = self.clock() + max(flood.seconds, self.pace.every)
                continue
            except OutcomeUnknown as unknown:
                log.info("a draft to %s may or may not have arrived (%s); no more drafts", self.chat_id, unknown)
                return
            except SendFailure as failure:
                log.info("a draft to %s did not go through (%s); no more drafts", self.chat_id, failure)
                return
            finally:
                self._syncing, self._sync_s = False, self.clock() - self._sync_started
            self._held = False
            due = self.clock() + self.pace.every

    async def _wait(self, due: float) -> bool:
        """Until `due` (False when closed first); for a paced stream, until its read at `due` hands the draft over,
        or a grace time later if no read comes (the model paused)."""
        delay = due - self.clock()
        if delay > 0:
            if self._paced:
                grace = min(self.pace.every / 5, GRACE_S)
                await _first(self.sleep(delay + grace), self._closed.wait(), self._caught_up.wait())
            else:
                await _first(self.sleep(delay), self._closed.wait())
        return not self._closed.is_set()

    async def _wait_for_text(self) -> bool:
        """Until there is text not shown yet (False when closed first)."""
        if not self._grown.is_set():  # while the model writes, it mostly is: no waiting tasks then
            await _first(self._grown.wait(), self._closed.wait())
        return not self._closed.is_set()

    async def _sync(self) -> None:
        """Brings the shown messages up to the text written so far: a finished part gets its full text once, the
        growing one is edited, a new part is shown as a new message."""
        self._grown.clear()
        if not self.text.strip():
            return
        drafts = list(self.editing.drafts(self.text))
        shown = self.shown
        for index, draft in enumerate(drafts):
            if index < len(shown.ids):
                if shown.texts[index] != draft:
                    self._last_request = self.clock()
                    self.requests += 1
                    await self.editing.revise(self.chat_id, shown.ids[index], draft)
                    shown.texts[index] = draft
                continue
            self._last_request = self.clock()
            self.requests += 1
            try:
                message_id = await self.editing.show(self.chat_id, draft)
            except OutcomeUnknown:
                self._lost = True
                raise
            except ChatHeld:
                raise
            except SendFailure:
                self._stopped = True
                raise
            shown.ids.append(message_id)
            shown.texts.append(draft)


async def _first(*waits: Awaitable[object]) -> None:
    """Until the first of `waits` is done; the others are cancelled."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
