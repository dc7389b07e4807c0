"""What a platform supplies to the outbox delivery (`bot.delivery.sender`): how an `Outbound` is split into the
requests that carry it (`parts`), how one part is sent (`send`), and how fast (`throttle`). A send that did not go
through raises a `SendFailure` whose kind tells the sender what to do with the row."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from brain.outbox.models import Outbound

Part = TypeVar("Part")


@dataclass(frozen=True)
class Outgoing:
    """An outbox row being sent: which row (a transport may derive a request id from it), whose, to which chat."""

    id: int
    user_id: uuid.UUID
    chat_id: str
    message: Outbound


class Transport(Protocol[Part]):
    """One platform's way of sending. `idempotent`: the platform itself drops a repeated request (Matrix, whose
    event transaction ids are derived from the row), so a send whose outcome is unknown may simply be repeated and
    needs no in-flight mark (see `bot.delivery.sender`)."""

    platform: str
    idempotent: bool

    def parts(self, message: Outbound) -> Sequence[Part]:
        """The requests that carry the message, in sending order (at least one)."""
        ...

    async def throttle(self, chat_id: str) -> None:
        """Waits until the platform's rate limits allow one more request to this chat."""

    async def send(self, outgoing: Outgoing, part: Part) -> str | None:
        """Sends one part; raises a `SendFailure` when it did not go through. Returns the platform's id of the
        message when the platform can edit it later (the keyboard of a settled question goes), else None."""


class SendFailure(Exception):
    """A part that did not go through. Its text is what the outbox row keeps as its last error."""


class NotDelivered(SendFailure):
    """It certainly did not arrive (no connection, an error answer): the attempt counts, and the row is tried
    again after a backoff until its attempts are used up."""


class Refused(SendFailure):
    """The platform refused it for good (the person blocked the bot, the chat is gone, a bad request): the row
    fails at once."""


class OutcomeUnknown(SendFailure):
    """The request went out and its answer was lost: it may have arrived. Sending it again could show it twice,
    so the row fails with this reason."""


class ChatHeld(SendFailure):
    """Flood control for one chat (Telegram's 429): the chat waits `seconds` while other chats go on. Flow
    control, not a failed attempt."""

    def __init__(self, seconds: float, reason: str = "") -> None:
        super().__init__(reason or f"flood control: retry after {seconds:.1f} s")
        self.seconds = seconds


class SenderPaused(SendFailure):
    """The platform asks the whole bot to wait `seconds` (a homeserver's rate limit, or the homeserver out of
    reach): nothing more is sent there until then. Not a failed attempt of the row."""

    def __init__(self, seconds: float, reason: str = "") -> None:
        super().__init__(reason or f"paused for {seconds:.1f} s")
        self.seconds = seconds
