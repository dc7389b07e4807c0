"""The bot's messages with choices: recorded when sent, looked up for a reaction or a typed number, and
closed once a choice was used (here or through any other way to the same token) or all of them expired."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, any_, exists, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.matrix.choices import Choice
from adapters.matrix.models import DECIDED, EXPIRED, OPEN, MatrixMessage
from brain.actions.models import ActionToken
from brain.store.base import constant


async def record_sent(session: AsyncSession, *, user_id: uuid.UUID, event_id: str, room_id: str, outbox_id: int,
                      text: str, choices: Sequence[Choice], sent_at: datetime, expires_at: datetime) -> None:
    await session.execute(
        insert(MatrixMessage).values(
            user_id=user_id, event_id=event_id, room_id=room_id, outbox_id=outbox_id, text=text,
            choices=[c.to_json() for c in choices], tokens=[c.token for c in choices], state=OPEN,
            sent_at=sent_at, expires_at=expires_at,
        ).on_conflict_do_nothing(index_elements=["user_id", "event_id"])
    )


def choices_of(message: MatrixMessage) -> list[Choice]:
    return [Choice.from_json(c) for c in message.choices]


async def latest_in_room(session: AsyncSession, user_id: uuid.UUID, room_id: str) -> MatrixMessage | None:
    """The person's latest message with choices in this room: a typed number answers that one."""
    return await session.scalar(
        select(MatrixMessage).where(MatrixMessage.user_id == user_id, MatrixMessage.room_id == room_id)
        .order_by(MatrixMessage.sent_at.desc(), MatrixMessage.outbox_id.desc()).limit(1)
    )


async def reacted_message(session: AsyncSession, user_id: uuid.UUID, event_id: str) -> MatrixMessage | None:
    """The message a reaction is on, if it is this person's: a reaction on someone else's is nobody's."""
    return await session.get(MatrixMessage, (user_id, event_id))


@dataclass(frozen=True)
class Closed:
    """A message whose choices just closed: `chosen` is the used choice, or None when they expired."""

    message: MatrixMessage
    chosen: Choice | None


async def close_settled(session: AsyncSession, now: datetime, *, limit: int = 50) -> list[Closed]:
    """Lock open messages whose choices are settled (a single-use token of theirs was used, or all expired),
    mark them closed and return them; the caller edits them in the chat within the same transaction."""
    used = exists().where(ActionToken.token == any_(MatrixMessage.tokens), ActionToken.used_at.is_not(None),
                          ActionToken.single_use)
    messages = (await session.scalars(
        select(MatrixMessage).where(MatrixMessage.state == constant(OPEN), or_(MatrixMessage.expires_at <= now, used))
        .order_by(MatrixMessage.sent_at).limit(limit).with_for_update(skip_locked=True)
    )).all()
    closed: list[Closed] = []
    for message in messages:
        used_tokens = set((await session.scalars(select(ActionToken.token).where(and_(
            ActionToken.token.in_(message.tokens), ActionToken.used_at.is_not(None), ActionToken.single_use,
        )))).all())
        chosen = next((c for c in choices_of(message) if c.token in used_tokens), None)
        message.state = DECIDED if chosen is not None else EXPIRED
        message.decided_at = now
        closed.append(Closed(message, chosen))
    return closed
