"""Taking an update for processing exactly once: its id is stored in the session that resolves its sender,
committed before the dialog handles it (in the statement that notes the message for the idle hold), so a replayed
update (a webhook retry, a restart before the offset was confirmed, a second process) finds the row and has
no second effect. Storing first makes processing at-most-once: an update taken just before a crash is not
processed again; a chat reply is better lost (the person writes again) than doubled (two drinks logged).

For platforms that number their updates per bot (Telegram): the adapter hands the dialog an `UpdateClaim` with
the update's bot and update id (`Dialog.handle(inbound, take=claim)`).

Also the state of a pressed button's token before the press, which decides whether the pressed message's
keyboard is edited away afterwards."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg
from sqlalchemy import BigInteger, bindparam, delete, exists, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.inbound import Inbound
from bot.models import ProcessedUpdate
from brain.actions.models import ActionToken
from brain.core import Brain
from brain.people.models import Identity, User
from brain.people.service import IDENTITY_LOOKUP, detached_user
from brain.pulse.activity import note_inbound_of
from brain.store.lean import Lean

# Telegram keeps an unconfirmed update for 24 hours; a week of ids is plenty to recognise any replay.
KEEP_UPDATES = timedelta(days=7)
# The database is unreachable (down, restarting, the pool exhausted): an update can be neither claimed nor answered
# through the outbox, so an adapter tells the person directly.
DATABASE_DOWN = (OperationalError, InterfaceError, PoolTimeout, psycopg.OperationalError)


@dataclass(frozen=True)
class TokenState:
    """A pressed token as it was before the press: whose it is, and whether it could still act."""

    exists: bool
    owned: bool = False
    open: bool = False  # unused (or reusable) and not expired
    single_use: bool = True


# Built once (taking an update runs for every update); the values are bound parameters.
_CLAIM = (
    insert(ProcessedUpdate)
    .values(user_id=bindparam("user_id"), bot_id=bindparam("bot_id", type_=BigInteger),
            update_id=bindparam("update_id", type_=BigInteger))
    .on_conflict_do_nothing()
    .returning(ProcessedUpdate.user_id, ProcessedUpdate.update_id)
)


def _claim_and_note() -> Any:
    """`_CLAIM`, and the message noted (`note_inbound_of`, at the bound `now`) only if the update is new: one
    statement, so one commit, and a replay notes nothing."""
    taken = _CLAIM.cte("taken")
    return select(taken.c.update_id).add_cte(note_inbound_of(taken))


def _found_and_claimed(noting: bool) -> Any:
    """A known sender's update in one statement: the sender looked up (`IDENTITY_LOOKUP`, by the bound
    `platform` and `platform_id`), the update taken for them, and with `noting` the message noted if it was taken.
    The row is the sender's, with `kept` (False: a replay); no row: an unknown sender, nothing taken."""
    found = IDENTITY_LOOKUP.cte("found")
    taken = (insert(ProcessedUpdate)
             .from_select(["user_id", "bot_id", "update_id"],
                          select(found.c.id, bindparam("bot_id", type_=BigInteger),
                                 bindparam("update_id", type_=BigInteger)))
             .on_conflict_do_nothing()
             .returning(ProcessedUpdate.user_id)
             .cte("taken"))
    stmt = select(found, exists(select(taken.c.user_id)).label("kept"))
    return stmt.add_cte(note_inbound_of(taken)) if noting else stmt


# All run lean (`Lean`): every update is claimed.
_CLAIM_LEAN = Lean(_CLAIM)
_CLAIM_AND_NOTE = Lean(_claim_and_note())
_FOUND_AND_CLAIMED = {noting: Lean(_found_and_claimed(noting)) for noting in (False, True)}


class UpdateClaim:
    """Claims one update for the dialog (`Dialog.handle(inbound, take=claim)`): records its id on the connection
    that resolves the sender (in the transaction that creates them on first contact), before the dialog handles
    it, noting the message in the same statement when the dialog asks. Each statement commits on its own for a
    known person, so the claim costs no round trip of its own. `taken` then says whether the update was new
    (False: a replay, which the dialog drops); `decided` is set once that is known."""

    def __init__(self, brain: Brain, bot_id: int, update_id: int, inbound: Inbound) -> None:
        self.brain = brain
        self.bot_id = bot_id
        self.update_id = update_id
        self.inbound = inbound
        self.taken = False
        self.decided = asyncio.Event()
        self.token_before = TokenState(exists=False)  # a pressed button's token, read before the press is handled

    async def __call__(self, connection: AsyncConnection, user: User, noting: datetime | None) -> bool:
        """The claim for a person just created (a first contact, in the transaction that creates them). `noting`,
        when not None, is the time to note the message at (`note_inbound_in`), only for an update that is new."""
        try:
            params: dict[str, Any] = {"user_id": user.id, "bot_id": self.bot_id, "update_id": self.update_id}
            if noting is None:
                found = await _CLAIM_LEAN.scalar(connection, params)
            else:
                found = await _CLAIM_AND_NOTE.scalar(connection, {**params, "now": noting})
            await self._decide(connection, found is not None)
        finally:
            self.decided.set()
        return self.taken

    async def known(self, connection: AsyncConnection, noting: datetime | None) -> tuple[User, bool] | None:
        """The claim of a known sender: looked up (`IDENTITY_LOOKUP`), claimed and noted in one statement (one round
        trip, one commit): the person and whether the update was new; None when the sender is unknown (nothing
        claimed: the first contact follows, `__call__`)."""
        try:
            params: dict[str, Any] = {"platform": self.inbound.platform, "platform_id": self.inbound.platform_user_id,
                                      "bot_id": self.bot_id, "update_id": self.update_id}
            if noting is not None:
                params["now"] = noting
            row = await _FOUND_AND_CLAIMED[noting is not None].first(connection, params)
            if row is None:
                return None  # unknown: the first contact takes the update (`__call__`), and decides then
            await self._decide(connection, bool(row.kept))
        except BaseException:
            self.decided.set()
            raise
        self.decided.set()
        return detached_user(row), self.taken

    async def _decide(self, connection: AsyncConnection, taken: bool) -> None:
        self.taken = taken
        if taken and self.inbound.action is not None:
            self.token_before = await token_state(connection, self.inbound, self.brain.clock.now())


async def token_state(connection: AsyncConnection, inbound: Inbound, now: datetime) -> TokenState:
    if inbound.action is None:
        return TokenState(exists=False)
    row = (await connection.execute(
        select(ActionToken.user_id, ActionToken.single_use, ActionToken.used_at, ActionToken.expires_at,
               Identity.user_id.label("presser"))
        .outerjoin(Identity, (Identity.platform == inbound.platform)
                   & (Identity.platform_id == inbound.platform_user_id))
        .where(ActionToken.token == inbound.action)
    )).first()
    if row is None:
        return TokenState(exists=False)
    owner, single_use, used_at, expires_at, presser = row
    return TokenState(exists=True, owned=presser is not None and presser == owner,
                      open=(used_at is None or not single_use) and expires_at > now, single_use=single_use)


async def forget_old_updates(brain: Brain) -> int:
    """Drops update ids older than KEEP_UPDATES (by the database's clock, which wrote them); returns how many."""
    async with brain.transactions.begin() as uow:
        result = await uow.session.execute(
            delete(ProcessedUpdate).where(ProcessedUpdate.received_at < func.now() - KEEP_UPDATES)
            .returning(ProcessedUpdate.update_id))
        return len(result.all())
