"""The Matrix side of the outbox delivery (`bot.delivery`): an outbox row as the events that carry it (one
`m.text` with its choices numbered, its picture or file, the reactions that stand for its choices), what the
homeserver's answers mean for the row, and the edits of messages whose choices were decided or expired. The
protocol around it (claiming, settling, retries, pauses) is `bot.delivery.sender`'s, the same for every platform.

The transaction id of every event is derived from the outbox row id, so a retry after a crash or an error is
answered by the homeserver with the event it already has: Matrix needs no in-flight mark (`idempotent`).

What an answer means: a refusal (not in the room, a bad event) counts an attempt and is tried again at the next
pass until the attempts are used up; a rate limit pauses the whole delivery for as long as the homeserver asks; a
homeserver out of reach pauses it for a while that grows with each failure in a row."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from typing import Any

import aiohttp
from nio import AsyncClient, LocalProtocolError, RoomSendResponse, SendRetryError, UploadResponse

from adapters.matrix.choices import reaction_keys
from adapters.matrix.render import (
    closed_content,
    image_content,
    message_content,
    png_size,
    reaction_content,
    replacement,
    with_bang_commands,
)
from bot.commands.table import command_table
from bot.delivery.choices import choices_for, pressed_message, sent_with_choices, settled_choices
from bot.delivery.pushes import DirectRoom
from bot.delivery.sender import OutboxSender
from bot.delivery.transport import (
    ChatHeld,
    NotDelivered,
    OutcomeUnknown,
    Outgoing,
    Refused,
    SenderPaused,
)
from bot.rooms import PLATFORM
from brain.core import Brain
from brain.i18n import Renderer, tr
from brain.outbox.models import Outbound
from brain.outbox.service import MAX_ATTEMPTS

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 60.0
# A question sent this soon after a press replies to the message pressed (Reject's "Why? (optional)").
PRESS_REPLY_WINDOW = timedelta(minutes=5)


class SendFailed(Exception):
    """The homeserver refused this event; the row's attempt counts."""


class Unreachable(Exception):
    """The homeserver could not be reached or failed on its side; nobody's fault, try later."""


class RateLimited(Exception):
    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"rate limited for {retry_after_s:.1f} s")
        self.retry_after_s = retry_after_s


def no_backoff(attempts: int) -> timedelta:
    """A refused event is tried again at the next pass (the delivery's poll interval), as often as attempts allow."""
    return timedelta(0)


class MatrixTransport:
    """Sends outbox rows to Matrix rooms (`bot.delivery.transport.Transport`), and any other event the adapter
    sends (`send`); shows an answer while it is written and finishes it with edits (`m.replace`,
    `bot.delivery.stream.Editing`)."""

    platform = PLATFORM
    idempotent = True

    def __init__(self, brain: Brain, client: AsyncClient) -> None:
        self.brain = brain
        self.client = client
        self.commands = frozenset(command_table())  # written with '!' in what the bot sends
        self._unreachable = 0  # failures to reach the homeserver in a row

    def parts(self, message: Outbound) -> Sequence[Outbound]:
        return [message]  # its events are one part: each is sent again safely (transaction ids)

    async def throttle(self, chat_id: str) -> None:
        """The homeserver says when it is too much (`RateLimited`)."""

    async def send(self, outgoing: Outgoing, part: Outbound) -> None:
        try:
            await self._send_row(outgoing, part)
        except SendFailed as error:
            raise NotDelivered(str(error)) from error
        except RateLimited as limited:
            raise SenderPaused(limited.retry_after_s, str(limited)) from limited
        except Unreachable as error:
            self._unreachable += 1
            delay = min(MAX_BACKOFF_S, 2.0 ** (self._unreachable - 1))
            log.warning("Matrix delivery failed (%s); next try in %.0f s", error, delay)
            raise SenderPaused(delay, str(error)) from error
        self._unreachable = 0

    # ---- an answer shown while it is written (`bot.delivery.stream.Editing`) ---------------------------------
    def drafts(self, text: str) -> list[str]:
        return [text]  # an event holds far more than an answer

    async def show(self, chat_id: str, text: str) -> str:
        async with _draft_failures():
            return await self.send_event(chat_id, "m.room.message", message_content(text), _draft_txn())

    async def revise(self, chat_id: str, message_id: str, text: str) -> None:
        async with _draft_failures():
            await self.send_event(chat_id, "m.room.message", replacement(message_id, message_content(text)),
                                  _draft_txn())

    async def finish(self, outgoing: Outgoing, message_id: str, part: Outbound) -> None:
        """The shown event edited into the row's message, with its choices (their reactions go on the shown
        event, which a reaction or a number then answers). Its transaction ids are the row's, as in `send`."""
        try:
            await self._send_row(outgoing, part, shown=message_id)
        except SendFailed as error:
            raise Refused(str(error)) from error  # e.g. the event is gone: the sender sends the row anew
        except RateLimited as limited:
            raise SenderPaused(limited.retry_after_s, str(limited)) from limited
        except Unreachable as error:
            raise SenderPaused(min(MAX_BACKOFF_S, 2.0), str(error)) from error

    async def retract(self, chat_id: str, message_id: str) -> None:
        try:
            await self.client.room_redact(chat_id, message_id)
        except (OSError, TimeoutError, aiohttp.ClientError) as error:
            raise NotDelivered(str(error) or type(error).__name__) from error

    async def _send_row(self, outgoing: Outgoing, outbound: Outbound, *, shown: str | None = None) -> None:
        room_id = outgoing.chat_id
        choices, expires_at = await choices_for(self.brain, outbound)
        txn = f"companion-{outgoing.id}"
        content = message_content(with_bang_commands(outbound.text, self.commands), choices,
                                  markdown=outbound.markdown)
        if outbound.asks_reply and shown is None:
            pressed = await pressed_message(self.brain, outgoing.user_id, room_id,
                                            self.brain.clock.now() - PRESS_REPLY_WINDOW)
            if pressed is not None:  # a reply to the message pressed, which a reply to this question answers
                content["m.relates_to"] = {"m.in_reply_to": {"event_id": pressed}}
        if shown is None:
            event_id = await self.send_event(room_id, "m.room.message", content, txn)
        else:
            await self.send_event(room_id, "m.room.message", replacement(shown, content), f"{txn}-finished")
            event_id = shown
        if choices:
            await sent_with_choices(self.brain, user_id=outgoing.user_id, event_id=event_id, room_id=room_id,
                                    outbox_id=outgoing.id, text=outbound.text, choices=choices,
                                    expires_at=expires_at)
        if outbound.image_png is not None:
            await self._send_picture(room_id, outbound.image_png, f"{txn}-picture")
        if outbound.document is not None:
            await self._send_file(room_id, outbound.document, outbound.document_name or "file", f"{txn}-file")
        for index, key in enumerate(reaction_keys(choices)):
            await self.send_event(room_id, "m.reaction", reaction_content(event_id, key), f"{txn}-r{index}")

    async def _send_picture(self, room_id: str, png: bytes, txn: str) -> None:
        room = self.client.rooms.get(room_id)
        encrypt = bool(room is not None and room.encrypted)  # an encrypted room gets an encrypted file
        try:
            uploaded, keys = await self.client.upload(io.BytesIO(png), content_type="image/png",
                                                      filename="picture.png", encrypt=encrypt, filesize=len(png))
        except (OSError, TimeoutError, aiohttp.ClientError) as error:
            raise Unreachable(str(error) or type(error).__name__) from error
        if not isinstance(uploaded, UploadResponse):
            raise _failure(uploaded)
        content = image_content(uploaded.content_uri, len(png), keys=keys, dimensions=png_size(png))
        await self.send_event(room_id, "m.room.message", content, txn)

    async def _send_file(self, room_id: str, data: bytes, name: str, txn: str) -> None:
        """A file (e.g. the /export JSON) as an `m.file`, encrypted in an encrypted room like a picture."""
        room = self.client.rooms.get(room_id)
        encrypt = bool(room is not None and room.encrypted)
        mimetype = "application/json" if name.endswith(".json") else "application/octet-stream"
        try:
            uploaded, keys = await self.client.upload(io.BytesIO(data), content_type=mimetype, filename=name,
                                                      encrypt=encrypt, filesize=len(data))
        except (OSError, TimeoutError, aiohttp.ClientError) as error:
            raise Unreachable(str(error) or type(error).__name__) from error
        if not isinstance(uploaded, UploadResponse):
            raise _failure(uploaded)
        content: dict[str, Any] = {"msgtype": "m.file", "body": name, "filename": name,
                                   "info": {"mimetype": mimetype, "size": len(data)}}
        if keys:
            content["file"] = {**keys, "url": uploaded.content_uri}
        else:
            content["url"] = uploaded.content_uri
        await self.send_event(room_id, "m.room.message", content, txn)

    async def close_settled(self) -> None:
        """Edit messages whose choices were used or expired to say so (the choices list goes away)."""
        async with settled_choices(self.brain) as closed:
            for settled in closed:
                message = settled.message
                render = Renderer(settled.locale, settled.timezone)
                note = render(tr("Chosen: {choice}", choice=settled.chosen.label) if settled.chosen
                              else tr("These choices have expired."))
                try:
                    await self.send_event(message.room_id, "m.room.message",
                                          closed_content(message.event_id,
                                                         with_bang_commands(message.text, self.commands), note),
                                          f"companion-close-{message.event_id}")
                except SendFailed as error:  # e.g. the room was left: the message stays as it is
                    log.info("could not edit %s: %s", message.event_id, error)

    async def send_event(self, room_id: str, event_type: str, content: dict[str, Any], txn: str) -> str:
        """Send one event; its event id, or SendFailed / Unreachable / RateLimited."""
        try:
            response = await self.client.room_send(room_id, event_type, content, tx_id=txn,
                                                   ignore_unverified_devices=True)
        except (OSError, TimeoutError, aiohttp.ClientError) as error:
            raise Unreachable(str(error) or type(error).__name__) from error
        except (LocalProtocolError, SendRetryError) as error:  # e.g. an encrypted room nio does not know yet
            raise SendFailed(str(error) or type(error).__name__) from error
        if isinstance(response, RoomSendResponse):
            return response.event_id
        raise _failure(response)


class MatrixDelivery:
    """Drains the Matrix part of the outbox (`bot.delivery.sender.OutboxSender` with the `MatrixTransport`, pushes
    to the person's direct room) whenever woken (after each handled message) and every `poll_seconds` (for pushes
    written by the scheduler), and edits the messages whose choices were settled."""

    def __init__(self, brain: Brain, client: AsyncClient, *, other_platforms: Sequence[str] = (),
                 poll_seconds: float = 2.0, max_attempts: int = MAX_ATTEMPTS) -> None:
        self.transport = MatrixTransport(brain, client)
        self.sender = OutboxSender(brain, self.transport, DirectRoom(), poll_interval=poll_seconds,
                                   max_attempts=max_attempts, retry_backoff=no_backoff,
                                   other_platforms=tuple(other_platforms))
        self.poll_seconds = poll_seconds
        self._failures = 0

    def wake(self) -> None:
        self.sender.wake()

    async def send(self, room_id: str, event_type: str, content: dict[str, Any], txn: str) -> str:
        """One event outside the outbox (a refusal, a note on encryption): `MatrixTransport.send_event`."""
        return await self.transport.send_event(room_id, event_type, content, txn)

    async def run(self, stop: asyncio.Event) -> None:
        """The outbox's background passes, and the sweep of settled choices after each poll, until `stop`."""
        await asyncio.gather(self.sender.run(stop), self._sweep(stop))

    async def _sweep(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            delay = await self._close_settled()
            try:
                await asyncio.wait_for(stop.wait(), timeout=max(self.poll_seconds, delay))
            except TimeoutError:
                pass

    async def pass_once(self) -> float:
        """Send what is pending, then close settled choices. Returns how long to wait before the next
        pass: 0 normally, the homeserver's `retry_after_ms` on a rate limit, growing pauses on errors."""
        delay = await self.sender.pass_once()
        if delay:
            return delay
        return await self._close_settled()

    async def _close_settled(self) -> float:
        try:
            await self.transport.close_settled()
        except RateLimited as limited:
            log.info("Matrix rate limit: pausing delivery for %.1f s", limited.retry_after_s)
            return limited.retry_after_s
        except Exception as error:  # the homeserver is down, the database hiccups: keep the loop alive
            self._failures += 1
            delay = min(MAX_BACKOFF_S, 2.0 ** (self._failures - 1))
            log.warning("Matrix: editing settled choices failed (%s); next try in %.0f s", error, delay)
            return delay
        self._failures = 0
        return 0.0


def _draft_txn() -> str:
    """A draft's transaction id: drafts are not repeated, each is new."""
    return f"companion-draft-{uuid.uuid4().hex}"


@contextlib.asynccontextmanager
async def _draft_failures() -> AsyncIterator[None]:
    """What a failed draft means for the live answer: a rate limit holds the drafts, a homeserver out of reach
    leaves it unknown whether the event arrived, a refusal ends them."""
    try:
        yield
    except RateLimited as limited:
        raise ChatHeld(limited.retry_after_s, str(limited)) from limited
    except Unreachable as error:
        raise OutcomeUnknown(str(error)) from error
    except SendFailed as error:
        raise Refused(str(error)) from error


def _failure(response: Any) -> Exception:
    """A nio error response as one of the three kinds of failure."""
    code = getattr(response, "status_code", None)
    transport = getattr(response, "transport_response", None)
    status = getattr(transport, "status", None)
    if code == "M_LIMIT_EXCEEDED" or status == 429:
        retry_ms = getattr(response, "retry_after_ms", None) or 5000
        return RateLimited(retry_ms / 1000)
    if status is not None and status >= 500:
        return Unreachable(f"{status} {getattr(response, 'message', '')}")
    return SendFailed(f"{code or status} {getattr(response, 'message', '')}".strip())
