"""The outbox consumer for Matrix: claims the rows meant for Matrix, sends each as one `m.text` (plus its
picture or file, plus the reactions that stand for its choices), marks it sent, and edits messages whose choices
were decided or expired. The transaction id of every event is derived from the outbox row id, so a
retry after a crash or an error is answered by the homeserver with the event it already has.

Which rows: `platform = 'matrix'` (answers in a room), and rows without a platform (reminders) for people
with a direct Matrix room, unless they last talked to the companion on another running platform."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import aiohttp
from nio import AsyncClient, LocalProtocolError, RoomSendResponse, SendRetryError, UploadResponse
from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from adapters.matrix.choices import Choice, reaction_keys, role_of
from adapters.matrix.messages import close_settled, record_sent
from adapters.matrix.models import MatrixRoom
from adapters.matrix.render import closed_content, image_content, message_content, reaction_content
from adapters.matrix.rooms import PLATFORM, direct_room_of
from brain.actions.models import ActionToken
from brain.actions.service import DEFAULT_TTL
from brain.core import Brain
from brain.i18n import Renderer, tr
from brain.outbox.models import PENDING, Outbound, OutboxMessage
from brain.outbox.service import MAX_ATTEMPTS, mark_attempt_failed, mark_sent
from brain.people.models import User
from brain.store.base import constant

log = logging.getLogger(__name__)

BATCH = 20
MAX_BACKOFF_S = 60.0


class SendFailed(Exception):
    """The homeserver refused this event; the row's attempt counts."""


class Unreachable(Exception):
    """The homeserver could not be reached or failed on its side; nobody's fault, try later."""


class RateLimited(Exception):
    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"rate limited for {retry_after_s:.1f} s")
        self.retry_after_s = retry_after_s


async def claim_rows(session: AsyncSession, *, other_platforms: Sequence[str] = (),
                     limit: int = BATCH) -> Sequence[OutboxMessage]:
    """Lock the pending rows Matrix should send (oldest first); other senders skip them.

    A row without a platform goes to a person's direct Matrix room. When another platform is running too
    (`other_platforms`), it goes here only if the person's latest answer was on Matrix, so a person on two
    platforms gets each reminder once, where they last talked."""
    has_room = exists().where(MatrixRoom.user_id == OutboxMessage.user_id, MatrixRoom.direct,
                              MatrixRoom.left_at.is_(None))
    unaddressed = and_(OutboxMessage.platform.is_(None), has_room)
    if other_platforms:
        earlier = aliased(OutboxMessage)
        last_platform = (
            select(earlier.platform)
            .where(earlier.user_id == OutboxMessage.user_id, earlier.kind == "reply",
                   earlier.platform.in_((PLATFORM, *other_platforms)))
            .order_by(earlier.id.desc()).limit(1).correlate(OutboxMessage).scalar_subquery()
        )
        unaddressed = and_(unaddressed, func.coalesce(last_platform, PLATFORM) == PLATFORM)
    stmt = (
        select(OutboxMessage)
        .where(OutboxMessage.status == constant(PENDING), or_(OutboxMessage.platform == PLATFORM, unaddressed))
        .order_by(OutboxMessage.id).limit(limit).with_for_update(skip_locked=True, of=OutboxMessage)
    )
    return (await session.scalars(stmt)).all()


class Delivery:
    """Drains the Matrix part of the outbox whenever woken (after each handled message) and every
    `poll_seconds` (for reminders written by the pulse)."""

    def __init__(self, brain: Brain, client: AsyncClient, *, other_platforms: Sequence[str] = (),
                 poll_seconds: float = 2.0, max_attempts: int = MAX_ATTEMPTS) -> None:
        self.brain = brain
        self.client = client
        self.other_platforms = tuple(other_platforms)
        self.poll_seconds = poll_seconds
        self.max_attempts = max_attempts
        self._wake = asyncio.Event()
        self._failures = 0

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_seconds)
            except TimeoutError:
                pass
            self._wake.clear()
            delay = await self.pass_once()
            if delay:
                await asyncio.sleep(delay)

    async def pass_once(self) -> float:
        """Send what is pending, then close settled choices. Returns how long to wait before the next
        pass: 0 normally, the homeserver's `retry_after_ms` on a rate limit, growing pauses on errors."""
        try:
            while await self._send_batch():
                pass
            await self._close_settled()
        except RateLimited as limited:
            log.info("Matrix rate limit: pausing delivery for %.1f s", limited.retry_after_s)
            return limited.retry_after_s
        except Exception as error:  # the homeserver is down, the database hiccups: keep the loop alive
            self._failures += 1
            delay = min(MAX_BACKOFF_S, 2.0 ** (self._failures - 1))
            log.warning("Matrix delivery failed (%s); next try in %.0f s", error, delay)
            return delay
        self._failures = 0
        return 0.0

    async def _send_batch(self) -> bool:
        """One transaction over up to BATCH rows; True when the batch was full (more may be waiting)."""
        limited: RateLimited | None = None
        async with self.brain.transactions.begin() as uow:
            rows = await claim_rows(uow.session, other_platforms=self.other_platforms)
            for row in rows:
                room_id = row.chat_id if row.platform == PLATFORM and row.chat_id else \
                    await direct_room_of(uow.session, row.user_id)
                if room_id is None:
                    await mark_attempt_failed(uow.session, row, "no Matrix room for this person", self.max_attempts)
                    continue
                try:
                    await self._send_row(uow.session, row, room_id, uow.now)
                except RateLimited as error:
                    limited = error  # keep what was sent so far; this row and the rest wait
                    break
                except SendFailed as error:
                    log.warning("Matrix refused outbox row %s: %s", row.id, error)
                    await mark_attempt_failed(uow.session, row, str(error), self.max_attempts)
                    continue
                await mark_sent(uow.session, row.id, uow.now)
        if limited is not None:
            raise limited
        return len(rows) == BATCH

    async def _send_row(self, session: AsyncSession, row: OutboxMessage, room_id: str, now: datetime) -> None:
        outbound = row.outbound()
        choices, expires_at = await self._choices(session, outbound, now)
        txn = f"companion-{row.id}"
        event_id = await self.send(room_id, "m.room.message", message_content(outbound.text, choices), txn)
        if choices:
            # Committed at once (not with the batch), so a reaction that comes quickly finds its choices.
            async with self.brain.transactions.begin() as own:
                await record_sent(own.session, user_id=row.user_id, event_id=event_id, room_id=room_id,
                                  outbox_id=row.id, text=outbound.text, choices=choices, sent_at=now,
                                  expires_at=expires_at)
        if outbound.image_png is not None:
            await self._send_picture(room_id, outbound.image_png, f"{txn}-picture")
        if outbound.document is not None:
            await self._send_file(room_id, outbound.document, outbound.document_name or "file", f"{txn}-file")
        for index, key in enumerate(reaction_keys(choices)):
            await self.send(room_id, "m.reaction", reaction_content(event_id, key), f"{txn}-r{index}")

    async def _choices(self, session: AsyncSession, outbound: Outbound,
                       now: datetime) -> tuple[list[Choice], datetime]:
        buttons = outbound.flat_buttons()
        if not buttons:
            return [], now
        tokens = {t.token: t for t in (await session.scalars(
            select(ActionToken).where(ActionToken.token.in_([b.token for b in buttons])))).all()}
        choices = [Choice(b.label, b.token, role_of(tokens[b.token].kind, tokens[b.token].payload)
                          if b.token in tokens else None) for b in buttons]
        expires_at = max((t.expires_at for t in tokens.values()), default=now + DEFAULT_TTL)
        return choices, expires_at

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
        await self.send(room_id, "m.room.message", image_content(uploaded.content_uri, len(png), keys=keys), txn)

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
        await self.send(room_id, "m.room.message", content, txn)

    async def _close_settled(self) -> None:
        """Edit messages whose choices were used or expired to say so (the choices list goes away)."""
        async with self.brain.transactions.begin() as uow:
            for closed in await close_settled(uow.session, uow.now):
                message = closed.message
                user = await uow.session.get(User, message.user_id)
                render = Renderer(user.locale if user else "en", user.timezone if user else "UTC")
                note = render(tr("Chosen: {choice}", choice=closed.chosen.label) if closed.chosen
                              else tr("These choices have expired."))
                try:
                    await self.send(message.room_id, "m.room.message",
                                    closed_content(message.event_id, message.text, note),
                                    f"companion-close-{message.event_id}")
                except SendFailed as error:  # e.g. the room was left: the message stays as it is
                    log.info("could not edit %s: %s", message.event_id, error)

    async def send(self, room_id: str, event_type: str, content: dict[str, Any], txn: str) -> str:
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
