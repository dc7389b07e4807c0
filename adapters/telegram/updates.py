"""Taking an update for processing exactly once: its id is stored before the dialog sees it, so a replayed
update (a webhook retry, a restart before the offset was confirmed, a second process) finds the row and has
no second effect. Storing first makes processing at-most-once: an update taken just before a crash is not
processed again; a chat reply is better lost (the person writes again) than doubled (two drinks logged).

Also the state of a pressed button's token before the press, which decides whether the pressed message's
keyboard is edited away afterwards."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import BigInteger, String, bindparam, delete, func, select
from sqlalchemy.dialects.postgresql import insert

from adapters.telegram.inbound import PLATFORM
from adapters.telegram.models import TelegramUpdate
from bot.dialog import Dialog
from bot.inbound import Inbound
from brain.actions.models import ActionToken
from brain.core import Brain
from brain.people.models import Identity

# Telegram keeps an unconfirmed update for 24 hours; a week of ids is plenty to recognise any replay.
KEEP_UPDATES = timedelta(days=7)


@dataclass(frozen=True)
class TokenState:
    """A pressed token as it was before the press: whose it is, and whether it could still act."""

    exists: bool
    owned: bool = False
    open: bool = False  # unused (or reusable) and not expired
    single_use: bool = True


# Built once (taking an update runs for every update); the values are bound parameters.
_TAKE_FOR_KNOWN_PERSON = (
    insert(TelegramUpdate)
    .from_select(
        ["user_id", "bot_id", "update_id"],
        select(Identity.user_id, bindparam("bot_id", type_=BigInteger), bindparam("update_id", type_=BigInteger))
        .where(Identity.platform == PLATFORM, Identity.platform_id == bindparam("person", type_=String)),
    )
    .on_conflict_do_nothing()
    .returning(TelegramUpdate.update_id)
)
_PERSON = select(Identity.user_id).where(Identity.platform == PLATFORM,
                                         Identity.platform_id == bindparam("person", type_=String))


async def take_update(brain: Brain, dialog: Dialog, inbound: Inbound, bot_id: int, update_id: int) -> bool:
    """Records the update as taken; False when it was taken before (a replay)."""
    values = {"bot_id": bot_id, "update_id": update_id, "person": inbound.platform_user_id}
    # Core on a plain connection: this runs for every update, and needs no ORM session.
    async with brain.db.engine.begin() as connection:
        if await connection.scalar(_TAKE_FOR_KNOWN_PERSON, values) is not None:
            return True
        known = await connection.scalar(_PERSON, values)
    if known is not None:
        return False  # the insert met its own row: a replay
    user = await dialog.user_for(inbound)  # first contact: the person is created as the dialog would
    async with brain.db.engine.begin() as connection:
        taken = await connection.scalar(
            insert(TelegramUpdate).values(user_id=user.id, bot_id=bot_id, update_id=update_id)
            .on_conflict_do_nothing().returning(TelegramUpdate.update_id))
    return taken is not None


async def token_state(brain: Brain, inbound: Inbound) -> TokenState:
    if inbound.action is None:
        return TokenState(exists=False)
    async with brain.transactions.read() as session:
        row = (await session.execute(
            select(ActionToken.user_id, ActionToken.single_use, ActionToken.used_at, ActionToken.expires_at,
                   Identity.user_id.label("presser"))
            .outerjoin(Identity, (Identity.platform == PLATFORM)
                       & (Identity.platform_id == inbound.platform_user_id))
            .where(ActionToken.token == inbound.action)
        )).first()
    if row is None:
        return TokenState(exists=False)
    owner, single_use, used_at, expires_at, presser = row
    now = brain.clock.now()
    return TokenState(exists=True, owned=presser is not None and presser == owner,
                      open=(used_at is None or not single_use) and expires_at > now, single_use=single_use)


async def forget_old_updates(brain: Brain) -> int:
    """Drops update ids older than KEEP_UPDATES (by the database's clock, which wrote them); returns how many."""
    async with brain.transactions.begin() as uow:
        result = await uow.session.execute(
            delete(TelegramUpdate).where(TelegramUpdate.received_at < func.now() - KEEP_UPDATES)
            .returning(TelegramUpdate.update_id))
        return len(result.all())
