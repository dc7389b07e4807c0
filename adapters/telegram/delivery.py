"""The outbox consumer for Telegram: sends pending outbox rows in order per chat, marks each sent in the
transaction that claimed it, right after Telegram took it.

Which rows: `platform = 'telegram'` (replies, with their chat id), and `platform IS NULL` (pushes such as
nudges) of people with a Telegram identity, sent to their private chat (its id is their user id). When other
chat platforms run too, a push goes here only if the person's latest reply was on Telegram (the Matrix
adapter applies the mirror rule), so someone on two platforms gets it once, where they last talked.

Exactly once, and where it cannot be: a row is claimed with `SELECT ... FOR UPDATE SKIP LOCKED` under a
per-chat advisory lock, sent, and marked sent in that same transaction; a concurrent sender (another task or
process) skips the locked row and the locked chat, so it is never sent twice while it is being sent, and
never out of order. A send whose outcome is unknown may have arrived, so it is *not* repeated: the row is
marked failed with that reason instead. That covers two cases: the connection broke or timed out after the
request was written, and the process died while a request was in flight. For the second, the part about to
be sent is marked `in_flight` and committed (on a connection of its own, in autocommit: one short statement)
before the request; the claiming transaction clears the mark when it settles the row. A sender that claims a
row and finds the mark set knows that the sender before it died mid-request (a live one would still hold the
row's lock), and fails the row instead of sending it again: a reply the person may not get, rather than one
they get twice (the write behind it is done either way). A send that certainly did not arrive (connection
refused, pool timeout, an error answer from Telegram) is retried with backoff and marked failed after
MAX_ATTEMPTS. A long reply is sent as several
parts; a retry continues after the last part that arrived (`telegram_deliveries.parts_sent`).

Flood control: a 429's `retry_after` holds that chat's head row (`telegram_deliveries.not_before`) and with
it the chat, while every other chat goes on; it is flow control, not a failed attempt. An overall rate
(TELEGRAM_MAX_MESSAGES_PER_SECOND) and Telegram's 20 per minute in a group are kept by leaky buckets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from aiolimiter import AsyncLimiter
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    Select,
    String,
    any_,
    bindparam,
    cast,
    delete,
    func,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased
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
from adapters.telegram.render import Part, render
from bot.models import DeliveryState as TelegramDelivery
from brain.core import Brain
from brain.outbox.models import FAILED, PENDING, SENT, Button, Outbound, OutboxMessage
from brain.outbox.service import MAX_ATTEMPTS, fail_attempt
from brain.people.models import Identity
from brain.store.base import constant
from brain.store.lean import Lean

log = logging.getLogger(__name__)

GROUP_MESSAGES_PER_MINUTE = 20
BACKOFF_BASE_S = 5.0
BACKOFF_CAP_S = 600.0
SEND_READ_TIMEOUT_S = 15.0  # generous: a timed-out send is not retried (it may have arrived)
DUE_CHATS_PER_PASS = 200
# Errors of the HTTP layer under PTB (httpx, PTB's own, or aiohttp, ours: `request`), and among them those that
# prove the request never reached Telegram: safe to send again.
_TRANSPORT: tuple[type[BaseException], ...] = (httpx.TransportError, *request.TRANSPORT)
_NOT_SENT: tuple[type[BaseException], ...] = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout,
                                              *request.NOT_SENT)
# Telegram refused the request for good (blocked by the person, chat gone, bad request, bad token; a bad token
# comes as EndPointNotFound through `do_api_request`).
_REFUSED = (BadRequest, Forbidden, ChatMigrated, InvalidToken, EndPointNotFound)
# A text message goes through `Bot.do_api_request`, which hands back Telegram's JSON instead of building a
# `Message` we would not read (see `_call`); PTB warns that `send_message` exists, on every call.
warnings.filterwarnings("ignore", message=r"Please use 'Bot\.sendMessage'", category=PTBUserWarning)

# Built once and run lean (`Lean`: they run for every message sent, as does the claim); the values are bound.
# A sent row: marked sent and its delivery state (the in-flight mark) dropped, in one statement.
_SETTLE_SENT = Lean(
    update(OutboxMessage)
    .where(OutboxMessage.user_id == bindparam("owner"), OutboxMessage.id == bindparam("row", type_=BigInteger),
           OutboxMessage.status == PENDING)
    .values(status=SENT, sent_at=bindparam("at"), attempts=OutboxMessage.attempts + 1)
    .add_cte(delete(TelegramDelivery)
             .where(TelegramDelivery.user_id == bindparam("owner"),
                    TelegramDelivery.outbox_id == bindparam("row", type_=BigInteger))
             .cte("forgotten"))
)
_MARK_IN_FLIGHT = Lean(
    insert(TelegramDelivery)
    .values(user_id=bindparam("owner"), outbox_id=bindparam("row", type_=BigInteger),
            parts_sent=bindparam("part", type_=Integer), not_before=bindparam("now"), updated_at=bindparam("now"),
            in_flight=True)
    .on_conflict_do_update(index_elements=["user_id", "outbox_id"],
                           set_={"parts_sent": bindparam("part", type_=Integer), "updated_at": bindparam("now"),
                                 "in_flight": True})
)


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1)))


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


@dataclass(frozen=True)
class Claimed:
    """A claimed outbox row (plain values: the claim reads columns, not ORM objects) with its delivery state
    (`parts_sent`, `not_before`, `in_flight`; None, None, False when it has none) and whether another row of
    the chat follows."""

    id: int
    user_id: uuid.UUID
    attempts: int
    message: Outbound
    parts_sent: int | None
    not_before: datetime | None
    in_flight: bool
    more: bool

    @classmethod
    def of(cls, row: Row[Any], more: bool) -> Claimed:
        message = Outbound(text=row.text, buttons=[[Button(**b) for b in line] for line in row.buttons or ()],
                           image_png=row.image_png, document=row.document, document_name=row.document_name)
        return cls(id=row.id, user_id=row.user_id, attempts=row.attempts, message=message, parts_sent=row.parts_sent,
                   not_before=row.not_before, in_flight=bool(row.in_flight), more=more)


@dataclass
class Held:
    """Why a chat stopped: until when it waits (a 429, a backoff), or None when it simply has nothing."""

    until: datetime | None = None


class TelegramSender:
    """Drains the Telegram part of the outbox. `deliver(chat)` sends one chat's pending rows now (called
    right after the dialog answered); `run(stop)` is the background pass for pushes, retries and rows left
    by another process or a crash."""

    def __init__(self, brain: Brain, bot: Bot, *, max_rate: float = 30.0, concurrency: int = 8,
                 poll_interval: float = 2.0, max_attempts: int = MAX_ATTEMPTS, other_platforms: tuple[str, ...] = (),
                 wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.brain = brain
        self.bot = bot
        self.other_platforms = other_platforms
        self.max_attempts = max_attempts
        self.poll_interval = poll_interval
        # Backoff times are real time, not the brain's clock (which tests fix): Telegram counts in real seconds.
        self.wall_clock = wall_clock
        self._overall = AsyncLimiter(max_rate, 1) if max_rate > 0 else None
        self._groups: dict[str, AsyncLimiter] = {}
        self._chat_locks: dict[str, asyncio.Lock] = {}
        self._chat_users: dict[str, int] = {}  # deliveries holding or waiting for a chat's lock
        # One connection and one row lock per chat being sent: bounded so the pool serves the dialog too.
        self._slots = asyncio.Semaphore(concurrency)
        self._background = asyncio.Semaphore(max(1, concurrency // 2))
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._claim = self._head_of_chat()
        self._lean_claim = Lean(self._claim)

    # ---- entry points --------------------------------------------------------------------------------
    def wake(self) -> None:
        """Something new may be due (a pulse tick queued nudges): run a background pass now."""
        self._wake.set()

    async def deliver(self, chat_id: str) -> None:
        """Sends this chat's pending rows in order until none is left or the chat must wait."""
        await self._deliver(chat_id, background=False)

    async def _deliver(self, chat_id: str, *, background: bool) -> None:
        lock = self._chat_locks.setdefault(chat_id, asyncio.Lock())
        self._chat_users[chat_id] = self._chat_users.get(chat_id, 0) + 1
        # A background pass may start deliveries for 200 chats at once (a minute of morning summaries). They
        # queue for a share of the send slots first, so a reply to someone who just wrote waits behind at most
        # that share of pushes, not behind the whole burst (reply p95 went from 0.2 s to 10 s in that minute).
        queue: contextlib.AbstractAsyncContextManager[Any] = self._background if background \
            else contextlib.nullcontext()
        if self._slots.locked() or lock.locked():
            await self.brain.db.release()  # no connection of a `sharing` scope held idle while this waits
        try:
            async with queue, lock, self._slots:
                while True:
                    outcome = await self._send_next(chat_id)
                    if isinstance(outcome, Held):
                        if outcome.until is not None:
                            delay = (outcome.until - self.wall_clock()).total_seconds()
                            asyncio.get_running_loop().call_later(max(0.0, delay), self.wake)
                        return
        finally:
            self._chat_users[chat_id] -= 1
            if not self._chat_users[chat_id]:
                del self._chat_users[chat_id], self._chat_locks[chat_id]

    def busy(self, chat_id: str) -> bool:
        return chat_id in self._chat_locks

    async def run(self, stop: asyncio.Event, handling: Callable[[str], bool] = lambda chat_id: False) -> None:
        """Background passes every `poll_interval` seconds (or when woken) until `stop` is set. Chats whose
        updates are `handling` are left to the delivery that follows each update."""
        while not stop.is_set():
            self._wake.clear()
            try:
                for chat_id in await self.due_chats():
                    if not self.busy(chat_id) and not handling(chat_id):
                        task = asyncio.create_task(self._deliver(chat_id, background=True))
                        self._tasks.add(task)
                        task.add_done_callback(self._tasks.discard)
            except Exception:
                log.exception("telegram outbox pass failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_first(stop, self._wake), timeout=self.poll_interval)
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ---- claiming --------------------------------------------------------------------------------------
    def _push_is_ours(self) -> ColumnElement[bool]:
        """For a row without a platform: no other platform runs, or the person last talked here."""
        if not self.other_platforms:
            return OutboxMessage.platform.is_(None)
        earlier = aliased(OutboxMessage)
        last_platform = (
            select(earlier.platform)
            .where(earlier.user_id == OutboxMessage.user_id, earlier.kind == "reply",
                   earlier.platform.in_((PLATFORM, *self.other_platforms)))
            .order_by(earlier.id.desc()).limit(1).correlate(OutboxMessage).scalar_subquery()
        )
        return OutboxMessage.platform.is_(None) & (func.coalesce(last_platform, PLATFORM) == PLATFORM)

    async def due_chats(self) -> list[str]:
        """Chats with a pending row that may be sent now, oldest first."""
        identity_chat = (select(Identity.platform_id)
                         .where(Identity.user_id == OutboxMessage.user_id, Identity.platform == PLATFORM)
                         .order_by(Identity.created_at).limit(1).scalar_subquery())
        rows = (
            select(func.coalesce(OutboxMessage.chat_id, identity_chat).label("chat"), OutboxMessage.id)
            .outerjoin(TelegramDelivery, (TelegramDelivery.user_id == OutboxMessage.user_id)
                       & (TelegramDelivery.outbox_id == OutboxMessage.id))
            .where(OutboxMessage.status == constant(PENDING),
                   (OutboxMessage.platform == PLATFORM) | self._push_is_ours(),
                   or_(TelegramDelivery.not_before.is_(None), TelegramDelivery.not_before <= self.wall_clock()))
            .subquery()
        )
        stmt = (select(rows.c.chat).where(rows.c.chat.is_not(None)).group_by(rows.c.chat)
                .order_by(func.min(rows.c.id)).limit(DUE_CHATS_PER_PASS))
        async with self.brain.transactions.read() as session:
            return [str(chat) for chat in (await session.scalars(stmt)).all()]

    def _head_of_chat(self) -> Select[Any]:
        """The statement behind `_claim_head` (built once; the chat is a bound parameter). The chat's advisory
        lock is an uncorrelated subquery, taken once before any row is read: held by another sender, no row
        comes back. The second row only says whether to go on.

        The candidates are found per kind, each through an index in id order: the chat's replies (by chat,
        `ix_outbox_pending_chat`) and the pushes of the person whose private chat it is. One condition with
        an OR over both made the planner read every pending row of the platform and the index entries of rows
        sent moments before (about 50 heap pages per claim in a burst of 1,000 chats, for two rows)."""
        chat = bindparam("chat", type_=String)
        pending = constant(PENDING)  # a literal, so the plan is made once (see `constant`)
        chat_locked = select(func.pg_try_advisory_xact_lock(func.hashtextextended(PLATFORM + ":" + chat, 0)))
        # At most one person has this chat as their private chat (identities are unique per platform id).
        chat_user = (select(Identity.user_id).where(Identity.platform == PLATFORM, Identity.platform_id == chat)
                     .scalar_subquery())
        replies = (select(OutboxMessage.id)
                   .where(OutboxMessage.status == pending, OutboxMessage.platform == PLATFORM,
                          OutboxMessage.chat_id == chat)
                   .order_by(OutboxMessage.id).limit(3).correlate(None))
        pushes = (select(OutboxMessage.id)
                  .where(OutboxMessage.status == pending, OutboxMessage.user_id == chat_user, self._push_is_ours())
                  .order_by(OutboxMessage.id).limit(3).correlate(None))
        # Three of each, for two: the candidates are read in the statement's snapshot, taken a moment before the
        # chat's lock. A sender that let go of the lock in that moment has sent one of them; the row after the one
        # claimed must still be seen, or this sender stops while the other gave up on the held chat.
        # An array, computed once before the rows are read: the rows are then found by their key. (An IN over
        # the union let the planner, misled by statistics that lag in a burst, read every pending row to join.)
        candidates = union_all(replies, pushes).subquery("candidates")
        return (
            select(OutboxMessage.id, OutboxMessage.user_id, OutboxMessage.attempts, OutboxMessage.text,
                   OutboxMessage.buttons, OutboxMessage.image_png, OutboxMessage.document,
                   OutboxMessage.document_name, TelegramDelivery.parts_sent, TelegramDelivery.not_before,
                   TelegramDelivery.in_flight)
            .outerjoin(TelegramDelivery, (TelegramDelivery.user_id == OutboxMessage.user_id)
                       & (TelegramDelivery.outbox_id == OutboxMessage.id))
            .where(chat_locked.scalar_subquery(), OutboxMessage.status == pending,
                   OutboxMessage.id == any_(cast(select(func.array_agg(candidates.c.id)).scalar_subquery(),
                                                                ARRAY(BigInteger))))
            .order_by(OutboxMessage.id).limit(2)
            # FOR NO KEY UPDATE: it excludes other senders as well, and lets the in-flight mark (whose foreign key
            # takes a KEY SHARE lock on this row) be written from another connection while the row is held.
            .with_for_update(of=OutboxMessage, skip_locked=True, key_share=True)
        )

    async def _claim_head(self, connection: AsyncConnection, chat_id: str) -> Claimed | None:
        """The chat's oldest pending row, locked, with its delivery state and whether another row follows;
        None when another sender holds the chat or nothing is pending."""
        found = await self._lean_claim.rows(connection, {"chat": chat_id})
        return None if not found else Claimed.of(found[0], more=len(found) > 1)

    # ---- sending ---------------------------------------------------------------------------------------
    async def _send_next(self, chat_id: str) -> Held | None:
        """Claims, sends and settles the chat's head row; None when the next row may follow at once. One Core
        transaction: no ORM object is loaded or flushed on the way (none is needed, and no event is emitted)."""
        async with self.brain.db.engine.begin() as connection:
            row = await self._claim_head(connection, chat_id)
            if row is None:
                return Held()
            if row.in_flight:
                await _fail(connection, row, "outcome unknown: the process stopped while sending it; not resent",
                            max_attempts=1)
                await connection.execute(self._forget_state(row))
                log.warning("telegram outbox row %s for %s was in flight when a process stopped; not resent",
                            row.id, chat_id)
                return None
            if row.not_before is not None and row.not_before > self.wall_clock():
                return Held(row.not_before)
            parts = render(row.message)
            for index in range(row.parts_sent or 0, len(parts)):
                await self._throttle(chat_id)  # before the mark: a kill while waiting here costs nothing
                await self._mark_in_flight(row, index)
                try:
                    await self._send_part(chat_id, parts[index])
                except RetryAfter as flood:
                    until = self.wall_clock() + timedelta(seconds=retry_after_seconds(flood))
                    log.info("telegram flood control for chat %s: retry after %s", chat_id, until)
                    await self._hold(connection, row, parts_sent=index, until=until)
                    return Held(until)
                except TelegramError as error:
                    return await self._failed(connection, chat_id, row, index, error)
            await _SETTLE_SENT.run(connection, {"owner": row.user_id, "row": row.id, "at": self.brain.clock.now()})
            return None if row.more else Held()

    async def _failed(self, connection: AsyncConnection, chat_id: str, row: Claimed, index: int,
                      error: TelegramError) -> Held | None:
        cause = error.__cause__
        if isinstance(cause, _TRANSPORT) and not isinstance(cause, _NOT_SENT):
            # The request was written and the answer lost: it may have arrived. Sending it again could show
            # it twice, so the row ends here, with the reason.
            status, attempts = await _fail(connection, row, f"outcome unknown, not resent: {error}", max_attempts=1)
            log.warning("telegram send to %s of outbox row %s may or may not have arrived: %s", chat_id, row.id,
                        error)
        elif isinstance(error, _REFUSED):
            # Telegram refused this request for good (blocked by the person, chat gone, bad request).
            status, attempts = await _fail(connection, row, f"{type(error).__name__}: {error}", max_attempts=1)
            log.warning("telegram refused outbox row %s for %s: %s", row.id, chat_id, error)
        else:
            status, attempts = await _fail(connection, row, f"{type(error).__name__}: {error}", self.max_attempts)
        if status == FAILED:
            await connection.execute(self._forget_state(row))
            return None  # the chat goes on with its next row
        until = self.wall_clock() + backoff(attempts)
        await self._hold(connection, row, parts_sent=index, until=until)
        return Held(until)

    async def _hold(self, connection: AsyncConnection, row: Claimed, *, parts_sent: int, until: datetime) -> None:
        # A statement, not the state read by the claim: the in-flight mark was written by another connection since.
        now = self.wall_clock()
        await connection.execute(
            insert(TelegramDelivery)
            .values(user_id=row.user_id, outbox_id=row.id, parts_sent=parts_sent, not_before=until, updated_at=now,
                    in_flight=False)
            .on_conflict_do_update(index_elements=["user_id", "outbox_id"],
                                   set_={"parts_sent": parts_sent, "not_before": until, "updated_at": now,
                                         "in_flight": False}))

    @staticmethod
    def _forget_state(row: Claimed) -> Any:
        return delete(TelegramDelivery).where(TelegramDelivery.user_id == row.user_id,
                                              TelegramDelivery.outbox_id == row.id)

    async def _mark_in_flight(self, row: Claimed, index: int) -> None:
        """Commits "part `index` of this row is being sent" before the request goes out (see the module
        docstring), on a connection of its own: the claiming transaction stays open until the row is settled."""
        async with self.brain.db.autocommit() as connection:  # in the handler's `sharing` scope, its connection
            await _MARK_IN_FLIGHT.run(connection,
                                     {"owner": row.user_id, "row": row.id, "part": index, "now": self.wall_clock()})
        await self.brain.db.release()  # not held idle while the request is out

    async def _send_part(self, chat_id: str, part: Part) -> None:
        try:
            await self._call(chat_id, part, html=True)
        except BadRequest as refused:
            if "parse" not in str(refused).lower():
                raise
            # Our escaping should make this impossible; if Telegram still rejects the markup, the words matter
            # more than the formatting.
            log.warning("telegram rejected the HTML of a message to %s (%s); sending plain text", chat_id, refused)
            await self._call(chat_id, part, html=False)

    async def _call(self, chat_id: str, part: Part, *, html: bool) -> None:
        text = part.html if html else part.plain
        parse_mode = ParseMode.HTML if html else None
        if part.photo is not None:
            await self.bot.send_photo(chat_id, photo=part.photo, caption=text or None, parse_mode=parse_mode,
                                      reply_markup=markup(part.keyboard), read_timeout=SEND_READ_TIMEOUT_S)
        elif part.document is not None:
            await self.bot.send_document(chat_id, document=part.document, filename=part.document_name,
                                         caption=text or None, parse_mode=parse_mode,
                                         reply_markup=markup(part.keyboard), read_timeout=SEND_READ_TIMEOUT_S)
        else:
            # What `send_message` sends, without the `Message` it builds from the answer (nothing reads it):
            # the same request layer, so errors (429 with retry_after, refusals, network) raise as they do there.
            params: dict[str, Any] = {"chat_id": chat_id, "text": text}
            if parse_mode is not None:
                params["parse_mode"] = parse_mode
            keyboard = markup_json(part.keyboard)
            if keyboard is not None:
                params["reply_markup"] = keyboard
            await self.bot.do_api_request("sendMessage", api_kwargs=params, read_timeout=SEND_READ_TIMEOUT_S)

    async def _throttle(self, chat_id: str) -> None:
        if self._overall is not None:
            await self._overall.acquire()
        if chat_id.startswith("-"):  # groups and supergroups have negative ids
            limiter = self._groups.setdefault(chat_id, AsyncLimiter(GROUP_MESSAGES_PER_MINUTE, 60))
            await limiter.acquire()


async def _fail(connection: AsyncConnection, row: Claimed, error: str, max_attempts: int) -> tuple[str, int]:
    return await fail_attempt(connection, row.user_id, row.id, error, max_attempts)


async def _first(*events: asyncio.Event) -> None:
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
