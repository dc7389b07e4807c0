"""Keyboards of settled questions, on platforms that show buttons under a message (Telegram). The outbox sender
records each message it sent with buttons by the platform's id of it (`record_keyboard`). When a question is
settled without a press (approved by command, a step answered by typing, a proposal expired), `take_off_keyboards`
writes an outbox row that edits the message that asked (`Outbound.edits`): its keyboard goes, and a note such as
"expired" may be added to its words. A press takes its keyboard off itself (the adapter).

A record is taken (deleted) by the transaction that writes its edit, so a message is edited once; the edit row goes
through the outbox like any reply, in order with the chat's other rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, any_, delete, exists, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.models import KeyboardMessage
from brain.actions.models import ActionToken
from brain.outbox.models import EDIT_KIND, Outbound, OutboxMessage
from brain.outbox.service import enqueue

KEPT_FOR = timedelta(days=7)  # longer than any button's token lives: an older keyboard cannot act anyway


async def record_keyboard(connection: AsyncConnection, user_id: uuid.UUID, platform: str, chat_id: str,
                          message_id: str, outbox_id: int, tokens: Sequence[str], now: datetime) -> None:
    """Notes a sent message with buttons; the person's records older than `KEPT_FOR` go."""
    await connection.execute(delete(KeyboardMessage).where(KeyboardMessage.user_id == user_id,
                                                           KeyboardMessage.sent_at < now - KEPT_FOR))
    await connection.execute(
        insert(KeyboardMessage)
        .values(user_id=user_id, platform=platform, chat_id=chat_id, message_id=message_id, outbox_id=outbox_id,
                tokens=list(tokens), sent_at=now)
        .on_conflict_do_nothing())


async def take_off_keyboards(connection: AsyncConnection, user_id: uuid.UUID, question: ColumnElement[bool], *,
                             note: str | None = None) -> int:
    """Edits every recorded message of the person with a button whose action token matches `question` (a
    condition on `ActionToken`): its keyboard goes, and `note` (rendered already), when given, is added under its
    words. Returns how many messages get an edit."""
    taken = (await connection.execute(
        delete(KeyboardMessage)
        .where(KeyboardMessage.user_id == user_id,
               exists().where(ActionToken.user_id == user_id, ActionToken.token == any_(KeyboardMessage.tokens),
                              question))
        .returning(KeyboardMessage.platform, KeyboardMessage.chat_id, KeyboardMessage.message_id,
                   KeyboardMessage.outbox_id))).all()
    for platform, chat_id, message_id, outbox_id in taken:
        text = ""
        if note is not None:
            said = await connection.scalar(select(OutboxMessage.text).where(OutboxMessage.user_id == user_id,
                                                                            OutboxMessage.id == outbox_id))
            text = f"{said}\n\n{note}" if said else note
        await enqueue(connection, user_id, Outbound(text=text, edits=message_id), kind=EDIT_KIND,
                      slot=f"{platform}:{chat_id}:{message_id}", platform=platform, chat_id=chat_id)
    return len(taken)
