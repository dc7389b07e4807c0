"""The Telegram side of the outbox delivery (`bot.delivery`): an `Outbound` as the Telegram calls that carry it
(`render`), how one is sent through python-telegram-bot, what Telegram's errors mean for the row, and Telegram's rate
limits. The protocol around it (claiming a chat's head row, the in-flight mark, settling, retries and holds) is
`bot.delivery.sender`'s, the same for every platform.

What an error means: Telegram's 429 (`RetryAfter`) holds the chat for its retry_after (`ChatHeld`); a refusal for
good (blocked by the person, chat gone, bad request, bad token) fails the row at once (`Refused`); a request that
was written and whose answer was lost may have arrived, so it is not repeated (`OutcomeUnknown`); anything else
certainly did not arrive and is retried with backoff (`NotDelivered`). Rates: an overall one
(TELEGRAM_MAX_MESSAGES_PER_SECOND) and Telegram's 20 per minute in a group, kept by leaky buckets."""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from aiolimiter import AsyncLimiter
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    RetryAfter,
    TelegramError,
)
from telegram.warnings import PTBUserWarning

from adapters.telegram import request
from adapters.telegram.inbound import PLATFORM
from adapters.telegram.render import Part, render, split_text
from bot.delivery.pushes import PrivateChat
from bot.delivery.sender import OutboxSender
from bot.delivery.transport import ChatHeld, NotDelivered, OutcomeUnknown, Outgoing, Refused, SendFailure
from brain.core import Brain
from brain.outbox.models import Button, Outbound
from brain.outbox.service import MAX_ATTEMPTS

log = logging.getLogger(__name__)

GROUP_MESSAGES_PER_MINUTE = 20
SEND_READ_TIMEOUT_S = 15.0  # generous: a timed-out send is not retried (it may have arrived)
# Errors of the HTTP layer under PTB (httpx, PTB's own, or aiohttp, ours: `request`), and among them those that
# prove the request never reached Telegram: safe to send again.
_TRANSPORT: tuple[type[BaseException], ...] = (httpx.TransportError, *request.TRANSPORT)
_NOT_SENT: tuple[type[BaseException], ...] = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout,
                                              *request.NOT_SENT)
# Telegram refused the request for good (blocked by the person, chat gone, bad request, bad token; a bad token
# comes as EndPointNotFound through `do_api_request`).
_REFUSED = (BadRequest, Forbidden, ChatMigrated, InvalidToken, EndPointNotFound)
# A text message (and an edit, and taking a keyboard off) goes through `Bot.do_api_request`, which hands back
# Telegram's JSON instead of building a `Message` we would not read (see `_call`); PTB warns on every call.
warnings.filterwarnings("ignore",
                        message=r"Please use 'Bot\.(sendMessage|editMessageText|editMessageReplyMarkup|deleteMessage)'",
                        category=PTBUserWarning)


def retry_after_seconds(flood: RetryAfter) -> float:
    # `_retry_after` is always a timedelta; the public property warns while it may still be an int (PTB 22).
    value = getattr(flood, "_retry_after", None)
    return value.total_seconds() if isinstance(value, timedelta) else float(flood.retry_after)  # type: ignore[arg-type]


def markup(rows: list[list[Button]]) -> InlineKeyboardMarkup | None:
    if not rows:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=b.token) for b in row]
                                 for row in rows])


def markup_json(rows: list[list[Button]]) -> dict[str, Any] | None:
    """`markup` as the Bot API's JSON (for `do_api_request`: no PTB objects built and serialised again)."""
    if not rows:
        return None
    return {"inline_keyboard": [[{"text": b.label, "callback_data": b.token} for b in row] for row in rows]}


class TelegramTransport:
    """Sends the parts of outbox rows to Telegram (`bot.delivery.transport.Transport`), and shows an answer while
    it is written by editing its messages (`bot.delivery.stream.Editing`)."""

    platform = PLATFORM
    idempotent = False  # Telegram has no request ids: a repeated sendMessage shows the message twice

    def __init__(self, bot: Bot, *, max_rate: float = 30.0) -> None:
        self.bot = bot
        self._overall = AsyncLimiter(max_rate, 1) if max_rate > 0 else None
        self._groups: dict[str, AsyncLimiter] = {}

    def parts(self, message: Outbound) -> list[Part]:
        return render(message)

    async def throttle(self, chat_id: str) -> None:
        if self._overall is not None:
            await self._overall.acquire()
        if chat_id.startswith("-"):  # groups and supergroups have negative ids
            limiter = self._groups.setdefault(chat_id, AsyncLimiter(GROUP_MESSAGES_PER_MINUTE, 60))
            await limiter.acquire()

    async def send(self, outgoing: Outgoing, part: Part) -> str | None:
        if part.edits is not None:
            await self._settle(outgoing.chat_id, part)
            return None
        try:
            return await self._send_part(outgoing.chat_id, part)
        except RetryAfter as flood:
            raise ChatHeld(retry_after_seconds(flood), str(flood)) from flood
        except TelegramError as error:
            raise failure_of(error) from error

    # ---- an answer shown while it is written (`bot.delivery.stream.Editing`) ---------------------------------
    def drafts(self, text: str) -> list[str]:
        return split_text(text)

    async def show(self, chat_id: str, text: str) -> str:
        await self.throttle(chat_id)  # drafts count against the bot's overall rate as messages do
        async with _failures():
            sent = await self.bot.do_api_request("sendMessage", api_kwargs={"chat_id": chat_id, "text": text},
                                                 read_timeout=SEND_READ_TIMEOUT_S)
        return str(sent["message_id"])

    async def revise(self, chat_id: str, message_id: str, text: str) -> None:
        await self.throttle(chat_id)
        await self._edit(chat_id, message_id, {"text": text})

    async def finish(self, outgoing: Outgoing, message_id: str, part: Part) -> None:
        if part.photo is not None or part.document is not None:
            raise Refused("a text message cannot become a photo or a file")
        params: dict[str, Any] = {"text": part.html, "parse_mode": ParseMode.HTML}
        keyboard = markup_json(part.keyboard)
        if keyboard is not None:
            params["reply_markup"] = keyboard
        try:
            await self._edit(outgoing.chat_id, message_id, params)
        except Refused as refused:
            if "parse" not in str(refused).lower():
                raise
            log.warning("telegram rejected the HTML of an edit in %s (%s); plain text", outgoing.chat_id, refused)
            await self._edit(outgoing.chat_id, message_id, {**params, "text": part.plain, "parse_mode": None})

    async def retract(self, chat_id: str, message_id: str) -> None:
        async with _failures():
            await self.bot.do_api_request("deleteMessage", api_kwargs={"chat_id": chat_id, "message_id": message_id})

    async def _edit(self, chat_id: str, message_id: str, params: dict[str, Any]) -> None:
        """editMessageText; an edit to what the message shows already (a repeated one) is no change, and fine."""
        kwargs = {k: v for k, v in params.items() if v is not None}
        try:
            async with _failures():
                await self.bot.do_api_request("editMessageText",
                                              api_kwargs={"chat_id": chat_id, "message_id": message_id, **kwargs},
                                              read_timeout=SEND_READ_TIMEOUT_S)
        except Refused as refused:
            if "not modified" not in str(refused).lower():
                raise

    async def _settle(self, chat_id: str, part: Part) -> None:
        """An edit of a message sent before (`render.Part.edits`): its keyboard goes, and with a text its words are
        replaced. A message already without it (pressed a moment ago), or deleted by the person, needs nothing."""
        assert part.edits is not None
        try:
            if part.plain:
                await self._edit(chat_id, part.edits, {"text": part.html, "parse_mode": ParseMode.HTML})
            else:
                async with _failures():
                    await self.bot.do_api_request("editMessageReplyMarkup",
                                                  api_kwargs={"chat_id": chat_id, "message_id": part.edits},
                                                  read_timeout=SEND_READ_TIMEOUT_S)
        except Refused as refused:
            if not any(gone in str(refused).lower() for gone in ("not modified", "not found")):
                raise
            log.info("telegram: nothing to take off message %s in %s (%s)", part.edits, chat_id, refused)

    async def _send_part(self, chat_id: str, part: Part) -> str | None:
        try:
            return await self._call(chat_id, part, html=True)
        except BadRequest as refused:
            if "parse" not in str(refused).lower():
                raise
            # Our escaping should make this impossible; if Telegram still rejects the markup, the words matter
            # more than the formatting.
            log.warning("telegram rejected the HTML of a message to %s (%s); sending plain text", chat_id, refused)
            return await self._call(chat_id, part, html=False)

    async def _call(self, chat_id: str, part: Part, *, html: bool) -> str | None:
        """Sends the part; the id of the message that carries it."""
        text = part.html if html else part.plain
        parse_mode = ParseMode.HTML if html else None
        if part.photo is not None:
            message = await self.bot.send_photo(chat_id, photo=part.photo, caption=text or None,
                                                parse_mode=parse_mode, reply_markup=markup(part.keyboard),
                                                read_timeout=SEND_READ_TIMEOUT_S)
        elif part.document is not None:
            message = await self.bot.send_document(chat_id, document=part.document, filename=part.document_name,
                                                   caption=text or None, parse_mode=parse_mode,
                                                   reply_markup=markup(part.keyboard),
                                                   read_timeout=SEND_READ_TIMEOUT_S)
        else:
            # What `send_message` sends, without the `Message` it builds from the answer (nothing reads it):
            # the same request layer, so errors (429 with retry_after, refusals, network) raise as they do there.
            params: dict[str, Any] = {"chat_id": chat_id, "text": text}
            if parse_mode is not None:
                params["parse_mode"] = parse_mode
            keyboard = markup_json(part.keyboard)
            if keyboard is not None:
                params["reply_markup"] = keyboard
            elif part.force_reply:
                params["reply_markup"] = {"force_reply": True}
            sent = await self.bot.do_api_request("sendMessage", api_kwargs=params, read_timeout=SEND_READ_TIMEOUT_S)
            return str(sent["message_id"]) if isinstance(sent, dict) and "message_id" in sent else None
        return str(message.message_id)


@contextlib.asynccontextmanager
async def _failures() -> AsyncIterator[None]:
    """Telegram's errors as the `SendFailure` they mean (429: `ChatHeld`)."""
    try:
        yield
    except RetryAfter as flood:
        raise ChatHeld(retry_after_seconds(flood), str(flood)) from flood
    except TelegramError as error:
        raise failure_of(error) from error


def failure_of(error: TelegramError) -> SendFailure:
    """What a Telegram error means for the row being sent (see the module docstring)."""
    cause = error.__cause__
    if isinstance(cause, _TRANSPORT) and not isinstance(cause, _NOT_SENT):
        return OutcomeUnknown(f"outcome unknown, not resent: {error}")
    if isinstance(error, _REFUSED):
        return Refused(f"{type(error).__name__}: {error}")
    return NotDelivered(f"{type(error).__name__}: {error}")


def telegram_sender(brain: Brain, bot: Bot, *, max_rate: float = 30.0, concurrency: int = 8,
                    poll_interval: float = 2.0, max_attempts: int = MAX_ATTEMPTS, other_platforms: tuple[str, ...] = (),
                    wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> OutboxSender:
    """The outbox sender for Telegram: pushes go to the person's private chat (whose id is their user id)."""
    return OutboxSender(brain, TelegramTransport(bot, max_rate=max_rate), PrivateChat(PLATFORM),
                        concurrency=concurrency, poll_interval=poll_interval, max_attempts=max_attempts,
                        other_platforms=other_platforms, wall_clock=wall_clock)
