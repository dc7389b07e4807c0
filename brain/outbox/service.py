"""Enqueue, claim and settle outbox rows. Claiming uses `FOR UPDATE SKIP LOCKED`, so several
senders (or processes) can drain one outbox without sending a row twice."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, Integer, bindparam, case, func, select, update
from sqlalchemy.dialects.postgresql import JSONB, insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql import column

from brain.actions.models import ActionToken
from brain.outbox.models import FAILED, PENDING, SENT, Outbound, OutboxMessage
from brain.store.base import constant
from brain.store.lean import Lean

MAX_ATTEMPTS = 5

# Built once (every reply and push is enqueued); the values are bound parameters.
_ENQUEUE = (
    insert(OutboxMessage)
    .values(user_id=bindparam("p_user"), kind=bindparam("p_kind"), slot=bindparam("p_slot"),
            platform=bindparam("p_platform"), chat_id=bindparam("p_chat"), text=bindparam("p_text"),
            buttons=bindparam("p_buttons"), image_png=bindparam("p_image"), document=bindparam("p_document"),
            document_name=bindparam("p_document_name"), edits=bindparam("p_edits"), status=PENDING, attempts=0)
    .on_conflict_do_nothing(index_elements=["user_id", "kind", "slot"])
    .returning(OutboxMessage.id)
)


def _with_tokens() -> Any:
    """`_ENQUEUE` that also stores the action tokens of the message's buttons (a JSON array of objects with
    token, kind, payload and single_use; one owner and expiry for all), in the same statement: on an autocommit
    connection a reply and its tokens are stored together without a transaction around them."""
    t = func.jsonb_array_elements(bindparam("p_tokens", type_=JSONB)).table_valued(
        column("value", JSONB)).render_derived(name="t")
    rows = select(t.c.value["token"].astext, bindparam("p_user"), t.c.value["kind"].astext, t.c.value["payload"],
                  t.c.value["single_use"].astext.cast(Boolean), bindparam("p_expires", type_=DateTime(timezone=True)))
    tokens = insert(ActionToken).from_select(
        ["token", "user_id", "kind", "payload", "single_use", "expires_at"], rows).cte("tokens")
    return _ENQUEUE.add_cte(tokens)


# Run lean (`Lean`): every reply goes through one of them.
_ENQUEUE_LEAN = Lean(_ENQUEUE)
_ENQUEUE_WITH_TOKENS = Lean(_with_tokens())


async def enqueue(
    target: AsyncSession | AsyncConnection,
    user_id: uuid.UUID,
    message: Outbound,
    *,
    kind: str,
    slot: str,
    platform: str | None = None,
    chat_id: str | None = None,
    tokens: Sequence[Mapping[str, Any]] = (),
    expires_at: datetime | None = None,
) -> int | None:
    """Add a message; returns its id, or None when (user, kind, slot) was already enqueued. On a session, in its
    transaction (Core on its connection: nothing of the ORM is needed); on a connection, in its transaction or
    committed at once on an autocommit one. `tokens`: action tokens to store in the same statement (see
    `_with_tokens`), owned by `user_id`, valid until `expires_at`."""
    connection = await target.connection() if isinstance(target, AsyncSession) else target
    params: dict[str, Any] = {
        "p_user": user_id, "p_kind": kind, "p_slot": slot, "p_platform": platform, "p_chat": chat_id,
        "p_text": message.text, "p_buttons": [[b.model_dump() for b in row] for row in message.buttons],
        "p_image": message.image_png, "p_document": message.document, "p_document_name": message.document_name,
        "p_edits": message.edits,
    }
    if not tokens:
        return await _ENQUEUE_LEAN.scalar(connection, params)
    return await _ENQUEUE_WITH_TOKENS.scalar(connection, {**params, "p_tokens": tokens, "p_expires": expires_at})


async def claim_pending(
    session: AsyncSession,
    *,
    platform: str | None = None,
    user_id: uuid.UUID | None = None,
    limit: int = 50,
) -> Sequence[OutboxMessage]:
    """Lock up to `limit` pending rows (oldest first) for this transaction; others skip them."""
    stmt = select(OutboxMessage).where(OutboxMessage.status == constant(PENDING))
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
    """`fail_attempt` for a row loaded in `session`: the loaded row shows the result, without a second write."""
    status, attempts = await fail_attempt(await session.connection(), row.user_id, row.id, error, max_attempts)
    for name, value in (("status", status), ("attempts", attempts), ("last_error", error[:2000])):
        set_committed_value(row, name, value)


# Built once; see `fail_attempt`.
_FAIL_ATTEMPT = (
    update(OutboxMessage)
    .where(OutboxMessage.user_id == bindparam("owner"), OutboxMessage.id == bindparam("row", type_=BigInteger))
    .values(attempts=OutboxMessage.attempts + 1, last_error=bindparam("error"),
            status=case((OutboxMessage.attempts + 1 >= bindparam("max_attempts", type_=Integer), FAILED),
                        else_=OutboxMessage.status))
    .returning(OutboxMessage.status, OutboxMessage.attempts)
)


async def fail_attempt(connection: AsyncConnection, user_id: uuid.UUID, row_id: int, error: str,
                       max_attempts: int = MAX_ATTEMPTS) -> tuple[str, int]:
    """One more failed attempt of an outbox row, as one statement on a connection: the attempt counted, its error
    kept, the row failed once `max_attempts` are used. `user_id` owns the row. Returns the row's status and
    attempts after it."""
    found = (await connection.execute(_FAIL_ATTEMPT, {"owner": user_id, "row": row_id, "error": error[:2000],
                                                      "max_attempts": max_attempts})).one()
    return str(found.status), int(found.attempts)
