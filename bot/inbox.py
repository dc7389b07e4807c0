"""Webhook mode across processes: a durable inbox in PostgreSQL that keeps each chat's order whichever process
an update was posted to. Several bot processes serve one webhook URL behind a load balancer; a chat's next
update may land in another process than its previous one, and a platform's retry in a second one. The
in-process lanes of `bot.ordering` cannot order that (and a webhook server that answers before anything is
stored could lose an update), so in webhook mode the adapter takes updates this way instead:

1. Receive: the adapter's webhook endpoint checks the secret header, stores the update here (`Inbox.store`,
   table `telegram_inbox`) under its sender and (bot, update id) with `ON CONFLICT DO NOTHING` (a retry, or the
   same update posted to another process, is the same row; a first message creates its sender first), and only
   then answers 200. A failed store answers 500 and the platform posts it again, so an acknowledged update
   survives a crash of the process that took it.
2. Claim: every process runs `workers` tasks that each take the oldest *head* of a lane (the lowest update id
   of one chat's lane) with `FOR UPDATE SKIP LOCKED`, in a transaction that stays open while the update is
   handled. A head held by a worker of any process is skipped, and the rows behind it are not heads, so a
   chat's next update waits until the previous one is finished, wherever that runs, while other chats go on.
3. Finish: the handled row is deleted in that same transaction. A crash rolls the transaction back and frees
   the row: a surviving (or restarted) process claims it again. The update id stays the dedupe key:
   `bot.updates.UpdateClaim` records it before the dialog handles the update, so an update re-claimed after its
   handling had begun, or a retry arriving after its row was deleted, has no second effect.

Lanes are those of `bot.ordering`: a chat's messages ("queued") one after another; its button presses and the
commands that steer a running turn ("now") apart, so they never wait behind a long turn (the process that
receives an update picks its lane; free text that would steer a turn running in another process is queued
like any message there). A claim holds a connection of its own (a small pool, one per worker), so handling
never waits for a connection it holds itself. Long polling needs none of this: one process takes the updates
and `bot.ordering` orders them."""

from __future__ import annotations

import asyncio
import collections
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, String, bindparam, delete, exists, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.orm import aliased

from bot.inbound import Inbound
from bot.models import InboxUpdate as Row
from brain.people.models import Identity
from brain.store.database import autocommit, ping_when_idle

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 1.0  # one watcher per process: a stored update wakes a worker at once, a finished one claims the next

# The next update to handle: the oldest lane head (no earlier row in its lane) that no worker of any process holds.
# Walked in claim order (ix_telegram_inbox_claim_order), each row's lane checked through ix_telegram_inbox_lane: a
# claim reads the rows up to the first free head, not the whole inbox.
_EARLIER = aliased(Row)
_HEAD = (select(Row.user_id, Row.bot_id, Row.update_id)
         .where(Row.bot_id == bindparam("bot", type_=BigInteger),
                ~exists().where(_EARLIER.bot_id == Row.bot_id, _EARLIER.chat_id == Row.chat_id,
                                _EARLIER.lane == Row.lane, _EARLIER.update_id < Row.update_id))
         .order_by(Row.received_at, Row.update_id).limit(1)
         .with_for_update(of=Row, skip_locked=True)
         .cte("head"))
# Claim and finish in one: the head is deleted at once in the transaction that stays open while it is handled, so
# finishing is the commit alone. Until then the row is still there for every other transaction, locked: it is
# skipped, and the rows behind it in its lane are no heads. A crash rolls the delete back. `more`: the inbox held
# other rows too, so another idle worker may find one (read in the statement's snapshot, this row included).
_CLAIM = (delete(Row)
          .where(Row.user_id == _HEAD.c.user_id, Row.bot_id == _HEAD.c.bot_id, Row.update_id == _HEAD.c.update_id)
          .returning(Row.user_id, Row.update_id, Row.chat_id, Row.payload,
                     (select(func.count()).select_from(
                         select(Row.update_id).where(Row.bot_id == bindparam("bot", type_=BigInteger)).limit(2)
                         .subquery()).scalar_subquery() > 1).label("more")))
# Storing for a sender who is known already: one statement (the common case).
_STORE_FOR_KNOWN = (
    insert(Row)
    .from_select(["user_id", "bot_id", "update_id", "chat_id", "lane", "payload"],
                 select(Identity.user_id, bindparam("bot", type_=BigInteger), bindparam("update", type_=BigInteger),
                        bindparam("chat", type_=String), bindparam("lane", type_=String),
                        bindparam("payload", type_=Row.payload.type))
                 .where(Identity.platform == bindparam("platform", type_=String),
                        Identity.platform_id == bindparam("person", type_=String)))
    .on_conflict_do_nothing()
    .returning(Row.update_id)
)
_KNOWN = select(Identity.user_id).where(Identity.platform == bindparam("platform", type_=String),
                                        Identity.platform_id == bindparam("person", type_=String))

Handle = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Posted:
    """Where a posted update goes: its lane ("queued" or "now", `bot.ordering.lane_kind`) in its chat, and its
    sender (from its `Inbound`, and how to create them on first contact; None: nobody is created, and the update
    is not stored, as for an unknown account's button press)."""

    inbound: Inbound
    lane: str
    # None: the sender may not talk to the companion (`bot.access`); the adapter answered them without the inbox.
    first_contact: Callable[[], Awaitable[uuid.UUID | None]]



class Inbox:
    """The inbox of one bot in one process: `store` (from the webhook endpoint) and the claiming workers
    (`run`), which hand each update's JSON to `handle`."""

    def __init__(self, engine: AsyncEngine, bot_id: int, handle: Handle, *, workers: int = 16,
                 poll_interval: float = POLL_INTERVAL_S) -> None:
        self.engine = engine  # short writes (store)
        self.bot_id = bot_id
        self.handle = handle
        self.workers = workers
        self.poll_interval = poll_interval
        self._claims: AsyncEngine | None = None
        self._signal = asyncio.Semaphore(0)  # one permit per stored update: wakes one idle worker
        self._idle = 0  # workers waiting for a permit
        self._chats: collections.Counter[str] = collections.Counter()

    async def store(self, update_id: int, posted: Posted, payload: dict[str, Any]) -> bool:
        """Stores a received update; False when it was there already (a retry, or a copy sent elsewhere)."""
        inbound = posted.inbound
        values = {"bot": self.bot_id, "update": update_id, "chat": inbound.chat_id, "lane": posted.lane,
                  "payload": payload, "platform": inbound.platform, "person": inbound.platform_user_id}
        # Each statement is one write that commits on its own (autocommit): no BEGIN and COMMIT round trips.
        async with autocommit(self.engine) as connection:
            stored = await connection.scalar(_STORE_FOR_KNOWN, values) is not None
            known = stored or await connection.scalar(_KNOWN, values) is not None
        if not known:
            user_id = await posted.first_contact()
            if user_id is None:
                return False
            async with self.engine.begin() as connection:
                stored = await connection.scalar(
                    insert(Row).values(user_id=user_id, bot_id=self.bot_id, update_id=update_id,
                                       chat_id=inbound.chat_id, lane=posted.lane, payload=payload)
                    .on_conflict_do_nothing().returning(Row.update_id)) is not None
        if stored:
            self._signal.release()
        return stored

    def handling(self, chat_id: str) -> bool:
        """Whether a worker of this process is handling an update of the chat."""
        return self._chats[chat_id] > 0

    async def run(self, stop: asyncio.Event) -> None:
        """The workers, until `stop` is set; each finishes the update it holds before it ends."""
        self._claims = create_async_engine(self.engine.url, pool_size=self.workers, max_overflow=0)
        ping_when_idle(self._claims)
        try:
            await asyncio.gather(*(self._work(stop, watcher=i == 0) for i in range(self.workers)))
        finally:
            await self._claims.dispose()

    async def _work(self, stop: asyncio.Event, *, watcher: bool) -> None:
        while not stop.is_set():
            try:
                if await self._handle_next():
                    continue
            except Exception:
                log.exception("inbox: claiming an update failed")
            # Idle until an update is stored here, a claim elsewhere in this process found work (it wakes one
            # more worker, so a burst spreads), or the adapter stops. Only the watcher also looks again when the
            # poll interval passes (another process stored an update, or a held head was finished there): an
            # idle process asks PostgreSQL once per interval, not once per worker.
            waiting = asyncio.ensure_future(self._signal.acquire())
            stopping = asyncio.ensure_future(stop.wait())
            self._idle += 1
            try:
                await asyncio.wait([waiting, stopping], timeout=self.poll_interval if watcher else None,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._idle -= 1
                stopping.cancel()
                waiting.cancel()  # when done, its permit woke this worker

    async def _handle_next(self) -> bool:
        """Claims, handles and finishes one update; False when none is free."""
        assert self._claims is not None
        async with self._claims.connect() as connection, connection.begin():
            row = (await connection.execute(_CLAIM, {"bot": self.bot_id})).first()
            if row is None:
                return False
            _user_id, update_id, chat_id, payload, more = row
            if more and self._idle and self._signal.locked():
                self._signal.release()  # there may be more: let one idle worker look (it stops the chain if not)
            self._chats[chat_id] += 1
            try:
                await self.handle(payload)
            except Exception:
                # The adapter reports a handler's error itself; this is an update that could not even be read.
                # Kept, it would hold its chat for ever.
                log.exception("update %s could not be handled; dropped", update_id)
            finally:
                self._chats[chat_id] -= 1
                if not self._chats[chat_id]:
                    del self._chats[chat_id]
        return True
