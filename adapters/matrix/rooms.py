"""Which Matrix rooms reach which person: registered when a person writes in a room, closed when the bot
leaves; the person's direct room is where their reminders go (never a group room)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.matrix.models import MatrixRoom
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


async def direct_room_of(session: AsyncSession, user_id: uuid.UUID) -> str | None:
    """The person's direct room the bot is still in, the most recently used first."""
    return await session.scalar(
        select(MatrixRoom.room_id).where(MatrixRoom.user_id == user_id, MatrixRoom.direct,
                                         MatrixRoom.left_at.is_(None))
        .order_by(MatrixRoom.last_inbound_at.desc().nulls_last(), MatrixRoom.created_at.desc()).limit(1)
    )
