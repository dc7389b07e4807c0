"""The outbox consumer, one for every platform: sends pending outbox rows in order per chat, marks each sent in the
transaction that claimed it, right after the platform took it. A platform's adapter supplies the `Transport` (how a
message goes out) and says where its pushes go (`PushAddress`); the protocol is the same everywhere.

Which rows: those of the platform (replies, with their chat id), and rows without a platform (pushes such as
nudges) of people with an address for pushes there: their private chat (Telegram, the terminal) or their direct
room (Matrix). When other chat platforms run too, a push goes here only if the person's latest reply was here
(every platform's sender applies the same rule, `pushes.push_is_for`), so someone on two platforms gets it once,
where they last talked.

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
refused, pool timeout, an error answer from the platform) is retried with backoff and marked failed after
`max_attempts`. A long reply is sent as several parts; a retry continues after the last part that arrived
(`DeliveryState.parts_sent`). An answer shown while the model wrote it (`stream`, `DeliveryState.shown`) is sent
by editing the messages that showed it into their final form: an edit may be repeated, so it needs no in-flight
mark, and a restart after the answer was written finishes those messages instead of sending it again.
A platform that drops repeated requests itself (`Transport.idempotent`: Matrix
derives each event's transaction id from the row) needs no in-flight mark: a request sent again after a crash has
no second effect there.

Flood control: a `ChatHeld` (Telegram's 429 with its retry_after) holds that chat's head row
(`DeliveryState.not_before`) and with it the chat, while every other chat goes on; it is flow control, not a
failed attempt. A `SenderPaused` (a homeserver's rate limit, or the homeserver out of reach) stops this
platform's sending for a while, also without counting an attempt. Rate limits are the transport's
(`Transport.throttle`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

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

from bot.delivery.keyboards import record_keyboard
from bot.delivery.pushes import PushAddress, push_is_for
from bot.delivery.stream import Editing, Finishing
from bot.delivery.transport import (
    ChatHeld,
    OutcomeUnknown,
    Outgoing,
    Refused,
    SenderPaused,
    SendFailure,
    Transport,
)
from bot.metrics import message_sent
from bot.models import DeliveryState
from brain.core import Brain
from brain.outbox.models import ANSWER_KIND, FAILED, PENDING, QUESTION_KIND, SENT, Button, Outbound, OutboxMessage
from brain.outbox.service import MAX_ATTEMPTS, fail_attempt
from brain.store.base import constant
from brain.store.lean import Lean

log = logging.getLogger(__name__)

BACKOFF_BASE_S = 5.0
BACKOFF_CAP_S = 600.0
DUE_CHATS_PER_PASS = 200
MAX_PAUSE_S = 60.0  # the longest pause after passes that failed one after another

# Built once and run lean (`Lean`: they run for every message sent, as does the claim); the values are bound.
# A sent row: marked sent and its delivery state (the in-flight mark) dropped, in one statement.
_SETTLE_SENT = Lean(
    update(OutboxMessage)
    .where(OutboxMessage.user_id == bindparam("owner"), OutboxMessage.id == bindparam("row", type_=BigInteger),
           OutboxMessage.status == PENDING)
    .values(status=SENT, sent_at=bindparam("at"), attempts=OutboxMessage.attempts + 1)
    .add_cte(delete(DeliveryState)
             .where(DeliveryState.user_id == bindparam("owner"),
                    DeliveryState.outbox_id == bindparam("row", type_=BigInteger))
             .cte("forgotten"))
)
_MARK_IN_FLIGHT = Lean(
    insert(DeliveryState)
    .values(user_id=bindparam("owner"), outbox_id=bindparam("row", type_=BigInteger),
            parts_sent=bindparam("part", type_=Integer), not_before=bindparam("now"), updated_at=bindparam("now"),
            in_flight=True)
    .on_conflict_do_update(index_elements=["user_id", "outbox_id"],
                           set_={"parts_sent": bindparam("part", type_=Integer), "updated_at": bindparam("now"),
                                 "in_flight": True})
)


def backoff(attempts: int) -> timedelta:
    """How long a row waits after its `attempts`-th failed attempt: doubling from 5 s, at most 10 minutes."""
    return timedelta(seconds=min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1)))


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
    shown: list[str]


    @classmethod
    def of(cls, row: Row[Any], more: bool) -> Claimed:
        message = Outbound(text=row.text, buttons=[[Button(**b) for b in line] for line in row.buttons or ()],
                           image_png=row.image_png, document=row.document, document_name=row.document_name,
                           markdown=row.kind == ANSWER_KIND, asks_reply=row.kind == QUESTION_KIND, edits=row.edits)
        return cls(id=row.id, user_id=row.user_id, attempts=row.attempts, message=message, parts_sent=row.parts_sent,
                   not_before=row.not_before, in_flight=bool(row.in_flight), more=more, shown=list(row.shown or ()))


@dataclass
class Held:
    """Why a chat stopped: until when it waits (a flood wait, a backoff), or None when it simply has nothing."""

    until: datetime | None = None


@dataclass
class Paused:
    """The platform asked the whole sender to wait this long (`SenderPaused`)."""

    seconds: float


class OutboxSender:
    """Drains one platform's part of the outbox through its `transport`. `deliver(chat)` sends one chat's pending
    rows now (called right after the dialog answered); `run(stop)` is the background pass for pushes, retries and
    rows left by another process or a crash; `pass_once()` is one such pass, chat after chat."""

    def __init__(self, brain: Brain, transport: Transport[Any], pushes: PushAddress, *, concurrency: int = 8,
                 poll_interval: float = 2.0, max_attempts: int = MAX_ATTEMPTS,
                 retry_backoff: Callable[[int], timedelta] = backoff, other_platforms: tuple[str, ...] = (),
                 wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.brain = brain
        self.transport = transport
        self.platform = transport.platform
        self.pushes = pushes
        self.other_platforms = other_platforms
        self.max_attempts = max_attempts
        self.retry_backoff = retry_backoff
        self.poll_interval = poll_interval
        # Backoff times are real time, not the brain's clock (which tests fix): platforms count in real seconds.
        self.wall_clock = wall_clock
        self._chat_locks: dict[str, asyncio.Lock] = {}
        self._chat_users: dict[str, int] = {}  # deliveries holding or waiting for a chat's lock
        # One connection and one row lock per chat being sent: bounded so the pool serves the dialog too.
        self._slots = asyncio.Semaphore(concurrency)
        self._background = asyncio.Semaphore(max(1, concurrency // 2))
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._paused_until: datetime | None = None  # the platform asked to wait until then (`SenderPaused`)
        self._pause_seconds = 0.0
        self._failed_passes = 0  # passes of `pass_once` that failed one after another
        # How the transport finishes an answer shown while it was written (`stream`), on platforms that show them.
        self.finishing: Finishing[Any] | None = transport if isinstance(transport, Finishing) else None
        # How it shows one (`stream.LiveAnswer`), on platforms that can edit what they sent.
        self.editing: Editing[Any] | None = transport if isinstance(transport, Editing) else None
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
        # that share of pushes, not behind the whole burst.
        queue: contextlib.AbstractAsyncContextManager[Any] = self._background if background \
            else contextlib.nullcontext()
        if self._slots.locked() or lock.locked():
            await self.brain.db.release()  # no pooled connection held idle while this waits
        try:
            async with queue, lock, self._slots:
                while not self._paused():
                    outcome = await self._send_next(chat_id)
                    if isinstance(outcome, Paused):
                        self._pause(outcome.seconds)
                        return
                    if isinstance(outcome, Held):
                        if outcome.until is not None:
                            delay = (outcome.until - self.wall_clock()).total_seconds()
                            if delay > 0:  # a row due at once waits for the next pass, not a pass of its own
                                asyncio.get_running_loop().call_later(delay, self.wake)
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
            wait = self.poll_interval
            try:
                if not self._paused():
                    for chat_id in await self.due_chats():
                        if not self.busy(chat_id) and not handling(chat_id):
                            task = asyncio.create_task(self._deliver(chat_id, background=True))
                            self._tasks.add(task)
                            task.add_done_callback(self._tasks.discard)
            except Exception:
                log.exception("%s outbox pass failed", self.platform)
            if self._paused_until is not None:
                wait = max(wait, (self._paused_until - self.wall_clock()).total_seconds())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_first(stop, self._wake), timeout=wait)
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def pass_once(self) -> float:
        """Sends what is due now, chat after chat (whatever pause the platform asked for before). Returns how long
        to wait before the next pass: 0 normally, the platform's pause when it asked for one, growing pauses while
        passes fail (the platform or the database out of reach)."""
        self._paused_until = None
        try:
            for chat_id in await self.due_chats():
                await self._deliver(chat_id, background=True)
                if self._paused_until is not None:
                    return self._pause_seconds
        except Exception as error:  # the platform or the database out of reach: the caller's loop goes on
            self._failed_passes += 1
            delay = min(MAX_PAUSE_S, 2.0 ** (self._failed_passes - 1))
            log.warning("%s delivery failed (%s); next try in %.0f s", self.platform, error, delay)
            return delay
        self._failed_passes = 0
        return 0.0

    def _paused(self) -> bool:
        if self._paused_until is None:
            return False
        if self._paused_until <= self.wall_clock():
            self._paused_until = None
            return False
        return True

    def _pause(self, seconds: float) -> None:
        until = self.wall_clock() + timedelta(seconds=seconds)
        if self._paused_until is None or until > self._paused_until:
            self._paused_until, self._pause_seconds = until, seconds
        log.info("%s asks to wait: pausing its delivery for %.1f s", self.platform, seconds)

    # ---- claiming --------------------------------------------------------------------------------------
    def _push_is_ours(self) -> ColumnElement[bool]:
        """For a row without a platform: no other platform runs, or the person last talked here."""
        return push_is_for(self.platform, self.other_platforms)

    async def due_chats(self) -> list[str]:
        """Chats with a pending row that may be sent now, oldest first."""
        rows = self._due().subquery()
        stmt = (select(rows.c.chat).where(rows.c.chat.is_not(None)).group_by(rows.c.chat)
                .order_by(func.min(rows.c.id)).limit(DUE_CHATS_PER_PASS))
        async with self.brain.transactions.read() as session:
            return [str(chat) for chat in (await session.scalars(stmt)).all()]

    async def due_rows(self) -> list[Row[Any]]:
        """The pending rows this sender would send now, oldest first, each with its `chat`, `id`, `user_id` and
        `platform` (None for a push)."""
        rows = self._due().subquery()
        async with self.brain.transactions.read() as session:
            return list((await session.execute(select(rows).where(rows.c.chat.is_not(None))
                                               .order_by(rows.c.id))).all())

    def _due(self) -> Select[str, int, uuid.UUID, str | None]:
        """Pending rows of this platform, and pushes for it, that may be sent now, each with the chat it goes to
        (NULL: a push for someone without an address here)."""
        return (
            select(func.coalesce(OutboxMessage.chat_id, self.pushes.chat_of()).label("chat"), OutboxMessage.id,
                   OutboxMessage.user_id, OutboxMessage.platform)
            .outerjoin(DeliveryState, (DeliveryState.user_id == OutboxMessage.user_id)
                       & (DeliveryState.outbox_id == OutboxMessage.id))
            .where(OutboxMessage.status == constant(PENDING),
                   (OutboxMessage.platform == self.platform) | self._push_is_ours(),
                   or_(DeliveryState.not_before.is_(None), DeliveryState.not_before <= self.wall_clock()))
        )

    def _head_of_chat(self) -> Select[Any]:
        """The statement behind `_claim_head` (built once; the chat is a bound parameter). The chat's advisory
        lock is an uncorrelated subquery, taken once before any row is read: held by another sender, no row
        comes back. The second row only says whether to go on.

        The candidates are found per kind, each through an index in id order: the chat's replies (by chat,
        `ix_outbox_pending_chat`) and the pushes of the person whose chat it is for pushes (by person,
        `ix_outbox_pending_push`). One condition with an OR over both made the planner read every pending row of
        the platform and the index entries of rows sent moments before, for two rows."""
        chat = bindparam("chat", type_=String)
        pending = constant(PENDING)  # a literal, so the plan is made once (see `constant`)
        chat_locked = select(func.pg_try_advisory_xact_lock(func.hashtextextended(self.platform + ":" + chat, 0)))
        chat_user = self.pushes.person_of(chat)
        replies = (select(OutboxMessage.id)
                   .where(OutboxMessage.status == pending, OutboxMessage.platform == self.platform,
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
            select(OutboxMessage.id, OutboxMessage.user_id, OutboxMessage.attempts, OutboxMessage.kind,
                   OutboxMessage.text, OutboxMessage.buttons, OutboxMessage.image_png, OutboxMessage.document,
                   OutboxMessage.document_name, OutboxMessage.edits, DeliveryState.parts_sent,
                   DeliveryState.not_before,
                   DeliveryState.in_flight, DeliveryState.shown)
            .outerjoin(DeliveryState, (DeliveryState.user_id == OutboxMessage.user_id)
                       & (DeliveryState.outbox_id == OutboxMessage.id))
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
    async def _send_next(self, chat_id: str) -> Held | Paused | None:
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
                log.warning("%s outbox row %s for %s was in flight when a process stopped; not resent",
                            self.platform, row.id, chat_id)
                return None
            if row.not_before is not None and row.not_before > self.wall_clock():
                return Held(row.not_before)
            outgoing = Outgoing(row.id, row.user_id, chat_id, row.message)
            parts = self.transport.parts(row.message)
            shown = row.shown if self.finishing is not None else []
            delivered: str | None = None  # the platform's id of the last part, where it has one
            for index in range(row.parts_sent or 0, len(parts)):
                await self.transport.throttle(chat_id)  # before the mark: a kill while waiting here costs nothing
                try:
                    # A part shown while it was written is finished by an edit: repeating one shows nothing twice.
                    finished = index < len(shown) and await self._finish(outgoing, shown[index], parts[index])
                    if finished:
                        delivered = shown[index]
                    else:
                        if not self.transport.idempotent:
                            await self._mark_in_flight(row, index)
                        delivered = await self.transport.send(outgoing, parts[index])
                except ChatHeld as flood:
                    until = self.wall_clock() + timedelta(seconds=flood.seconds)
                    log.info("%s flood control for chat %s: retry after %s", self.platform, chat_id, until)
                    await self._hold(connection, row, parts_sent=index, until=until)
                    return Held(until)
                except SenderPaused as paused:
                    if not self.transport.idempotent or index > 0:  # the progress kept, the in-flight mark cleared
                        await self._hold(connection, row, parts_sent=index, until=self.wall_clock())
                    return Paused(paused.seconds)
                except SendFailure as failure:
                    return await self._failed(connection, chat_id, row, index, failure)
            for message_id in shown[len(parts):]:  # the finished answer needs fewer messages than its drafts
                await self._retract(chat_id, message_id)
            if delivered is not None and row.message.buttons and row.message.edits is None:
                # Settled in the same transaction as the row: a question settled later finds the message to edit.
                await record_keyboard(connection, row.user_id, self.platform, chat_id, delivered, row.id,
                                      [b.token for b in row.message.flat_buttons()], self.brain.clock.now())
            await _SETTLE_SENT.run(connection, {"owner": row.user_id, "row": row.id, "at": self.brain.clock.now()})
            message_sent(self.platform)
            return None if row.more else Held()

    async def _finish(self, outgoing: Outgoing, message_id: str, part: Any) -> bool:
        """A shown part edited into its final form. False when the platform refuses the edit (the message was
        deleted, or can no longer be edited): the part is then sent as a new message, the words must arrive."""
        assert self.finishing is not None
        try:
            await self.finishing.finish(outgoing, message_id, part)
        except Refused as refused:
            log.info("%s could not finish shown message %s in %s (%s); sending it anew", self.platform, message_id,
                     outgoing.chat_id, refused)
            return False
        return True

    async def _retract(self, chat_id: str, message_id: str) -> None:
        assert self.finishing is not None
        try:
            await self.finishing.retract(chat_id, message_id)
        except SendFailure as failure:  # a draft left on screen is untidy, not wrong
            log.info("%s could not remove draft %s in %s: %s", self.platform, message_id, chat_id, failure)

    async def _failed(self, connection: AsyncConnection, chat_id: str, row: Claimed, index: int,
                      failure: SendFailure) -> Held | None:
        if isinstance(failure, OutcomeUnknown):
            # The request was written and the answer lost: it may have arrived. Sending it again could show
            # it twice, so the row ends here, with the reason.
            status, attempts = await _fail(connection, row, str(failure), max_attempts=1)
            log.warning("%s send to %s of outbox row %s may or may not have arrived: %s", self.platform, chat_id,
                        row.id, failure)
        elif isinstance(failure, Refused):
            # The platform refused this request for good (blocked by the person, chat gone, bad request).
            status, attempts = await _fail(connection, row, str(failure), max_attempts=1)
            log.warning("%s refused outbox row %s for %s: %s", self.platform, row.id, chat_id, failure)
        else:
            status, attempts = await _fail(connection, row, str(failure), self.max_attempts)
            log.info("%s could not deliver outbox row %s to %s: %s", self.platform, row.id, chat_id, failure)
        if status == FAILED:
            await connection.execute(self._forget_state(row))
            return None  # the chat goes on with its next row
        until = self.wall_clock() + self.retry_backoff(attempts)
        await self._hold(connection, row, parts_sent=index, until=until)
        return Held(until)

    async def _hold(self, connection: AsyncConnection, row: Claimed, *, parts_sent: int, until: datetime) -> None:
        # A statement, not the state read by the claim: the in-flight mark was written by another connection since.
        now = self.wall_clock()
        await connection.execute(
            insert(DeliveryState)
            .values(user_id=row.user_id, outbox_id=row.id, parts_sent=parts_sent, not_before=until, updated_at=now,
                    in_flight=False)
            .on_conflict_do_update(index_elements=["user_id", "outbox_id"],
                                   set_={"parts_sent": parts_sent, "not_before": until, "updated_at": now,
                                         "in_flight": False}))

    @staticmethod
    def _forget_state(row: Claimed) -> Any:
        return delete(DeliveryState).where(DeliveryState.user_id == row.user_id, DeliveryState.outbox_id == row.id)

    async def _mark_in_flight(self, row: Claimed, index: int) -> None:
        """Commits "part `index` of this row is being sent" before the request goes out (see the module
        docstring), on a connection of its own: the claiming transaction stays open until the row is settled."""
        async with self.brain.db.autocommit() as connection:  # in the handler's shared scope, its connection
            await _MARK_IN_FLIGHT.run(connection,
                                     {"owner": row.user_id, "row": row.id, "part": index, "now": self.wall_clock()})
        await self.brain.db.release()  # not held idle while the request is out


async def _fail(connection: AsyncConnection, row: Claimed, error: str, max_attempts: int) -> tuple[str, int]:
    return await fail_attempt(connection, row.user_id, row.id, error, max_attempts)


async def _first(*events: asyncio.Event) -> None:
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
