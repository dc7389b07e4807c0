"""Enqueue, claim and settle outbox rows. Claiming uses `FOR UPDATE SKIP LOCKED`, so several
senders (or processes) can drain one outbox without sending a row twice."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import bindparam, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.outbox.models import FAILED, PENDING, SENT, Outbound, OutboxMessage

MAX_ATTEMPTS = 5

# Built once (every reply and push is enqueued); the values are bound parameters.
_ENQUEUE = (
    insert(OutboxMessage)
    .values(user_id=bindparam("p_user"), kind=bindparam("p_kind"), slot=bindparam("p_slot"),
            platform=bindparam("p_platform"), chat_id=bindparam("p_chat"), text=bindparam("p_text"),
            buttons=bindparam("p_buttons"), image_png=bindparam("p_image"), document=bindparam("p_document"),
            document_name=bindparam("p_document_name"), status=PENDING, attempts=0)
    .on_conflict_do_nothing(index_elements=["user_id", "kind", "slot"])
    .returning(OutboxMessage.id)
)


async def enqueue(
    session: AsyncSession,
    user_id: uuid.UUID,
    message: Outbound,
    *,
    kind: str,
    slot: str,
    platform: str | None = None,
    chat_id: str | None = None,
) -> int | None:
    """Add a message; returns its id, or None when (user, kind, slot) was already enqueued."""
    connection = await session.connection()  # Core in the session's transaction: nothing of the ORM is needed
    return await connection.scalar(_ENQUEUE, {
        "p_user": user_id, "p_kind": kind, "p_slot": slot, "p_platform": platform, "p_chat": chat_id,
        "p_text": message.text, "p_buttons": [[b.model_dump() for b in row] for row in message.buttons],
        "p_image": message.image_png, "p_document": message.document, "p_document_name": message.document_name,
    })


async def claim_pending(
    session: AsyncSession,
    *,
    platform: str | None = None,
    user_id: uuid.UUID | None = None,
    limit: int = 50,
) -> Sequence[OutboxMessage]:
    """Lock up to `limit` pending rows (oldest first) for this transaction; others skip them."""
    stmt = select(OutboxMessage).where(OutboxMessage.status == PENDING)
    if platform is not None:
        stmt = stmt.where((OutboxMessage.platform == platform) | (OutboxMessage.platform.is_(None)))
    if user_id is not None:
        stmt = stmt.where(OutboxMessage.user_id == user_id)
    stmt = stmt.order_by(OutboxMessage.id).limit(limit).with_for_update(skip_locked=True)
    return (await session.scalars(stmt)).all()


async def mark_sent(session: AsyncSession, row_id: int, at: datetime) -> None:
    await session.execute(
        update(OutboxMessage).where(OutboxMessage.id == row_id, OutboxMessage.status == PENDING)
        .values(status=SENT, sent_at=at, attempts=OutboxMessage.attempts + 1)
    )


async def mark_attempt_failed(
    session: AsyncSession, row: OutboxMessage, error: str, max_attempts: int = MAX_ATTEMPTS
) -> None:
    row.attempts += 1
    row.last_error = error[:2000]
    if row.attempts >= max_attempts:
        row.status = FAILED
