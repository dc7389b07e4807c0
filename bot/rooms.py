"""Which Matrix rooms reach which person: registered when a person writes in a room, closed when the bot leaves;
the person's direct room is where their pushes go (never a group room, `bot.delivery.pushes.DirectRoom`). The
adapter calls the functions that take a `Brain`; those that take a session join a transaction of the caller's."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.models import MatrixRoom, MatrixUnreadableRoom
from brain.core import Brain
from brain.people.models import Identity, User

PLATFORM = "matrix"


async def user_of(session: AsyncSession, mxid: str) -> User | None:
    """The person behind a Matrix id, without creating one (for reactions and refusals: a stranger's
    reaction must not create a user)."""
    return await session.scalar(select(User).join(Identity, Identity.user_id == User.id).where(
        Identity.platform == PLATFORM, Identity.platform_id == mxid))


async def register_room(session: AsyncSession, user_id: uuid.UUID, room_id: str, mxid: str, *, direct: bool,
                        now: datetime) -> None:
    """Note that `mxid` (person `user_id`) wrote in `room_id` just now."""
    await session.execute(
        insert(MatrixRoom)
        .values(user_id=user_id, room_id=room_id, mxid=mxid, direct=direct, last_inbound_at=now, left_at=None)
        .on_conflict_do_update(index_elements=["user_id", "room_id"],
                               set_={"mxid": mxid, "direct": direct, "last_inbound_at": now, "left_at": None})
    )


async def close_room(session: AsyncSession, room_id: str, *, now: datetime) -> None:
    """The bot left `room_id`: nothing is delivered there any more."""
    await session.execute(update(MatrixRoom).where(MatrixRoom.room_id == room_id, MatrixRoom.left_at.is_(None))
                          .values(left_at=now))


async def wrote_in_room(brain: Brain, mxid: str, room_id: str, *, direct: bool) -> None:
    """After a handled message: the room reaches the person now behind `mxid` (a /link in that message may have
    moved the Matrix id to another person, so it is looked up afresh)."""
    async with brain.transactions.begin() as uow:
        user = await user_of(uow.session, mxid)
        if user is not None:
            await register_room(uow.session, user.id, room_id, mxid, direct=direct, now=uow.now)


async def room_left(brain: Brain, room_id: str) -> None:
    """`close_room` in a transaction of its own."""
    async with brain.transactions.begin() as uow:
        await close_room(uow.session, room_id, now=uow.now)


async def unreadable_rooms(brain: Brain) -> set[str]:
    """The encrypted rooms the bot said it cannot read (`note_unreadable`): it says nothing else there."""
    async with brain.db.autocommit() as connection:
        return set((await connection.scalars(select(MatrixUnreadableRoom.room_id))).all())


async def note_unreadable(brain: Brain, room_id: str) -> bool:
    """Notes that the bot tells `room_id` it cannot read it; False when it was told so before (by this process or
    an earlier one), and must not be told again."""
    async with brain.transactions.begin() as uow:
        noted = await uow.session.scalar(insert(MatrixUnreadableRoom).values(room_id=room_id, told_at=uow.now)
                                         .on_conflict_do_nothing().returning(MatrixUnreadableRoom.room_id))
    return noted is not None


async def language_of(brain: Brain, mxid: str) -> tuple[str, str] | None:
    """The locale and time zone of the person behind a Matrix id; None for someone the bot does not know."""
    async with brain.transactions.read() as session:
        user = await user_of(session, mxid)
    return None if user is None else (user.locale, user.timezone)
