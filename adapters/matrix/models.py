"""The Matrix adapter's own tables: which rooms reach which person, and the bot's messages that carry
choices (so a reaction or a number reply after a restart still finds its action token, and a decided or
expired choice can be edited to say so). Both are bookkeeping of the delivery, not the person's data:
`/link` may drop them for an absorbed user; the rooms are registered again on the next message."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text, func
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

OPEN, DECIDED, EXPIRED = "open", "decided", "expired"


class MatrixRoom(Base):
    """A room where the bot talks with this person. `direct` rooms (the person and the bot only) may also
    receive the person's reminders; group rooms (when allowed) get only answers to what was said there."""

    __tablename__ = "matrix_rooms"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    room_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    mxid: Mapped[str] = mapped_column(String(255))  # the person's Matrix id, e.g. @alice:example.org
    direct: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    last_inbound_at: Mapped[datetime | None] = mapped_column()
    left_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (Index("ix_matrix_rooms_room", "room_id"), {"info": {"bookkeeping": True}})


class MatrixMessage(Base):
    """A sent message with choices: its event, the choices in order ({label, token, role}) and whether they
    are still open. `tokens` repeats the choices' tokens for the sweep that finds used ones in SQL."""

    __tablename__ = "matrix_messages"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    event_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    room_id: Mapped[str] = mapped_column(String(255))
    outbox_id: Mapped[int] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(Text)  # the message without its numbered list, for the edit
    choices: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    tokens: Mapped[list[str]] = mapped_column(ARRAY(String(24)))
    state: Mapped[str] = mapped_column(String(8), default=OPEN)
    sent_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    decided_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (
        Index("ix_matrix_messages_room", "user_id", "room_id", "sent_at"),
        Index("ix_matrix_messages_open", "expires_at", postgresql_where="state = 'open'"),
        {"info": {"bookkeeping": True}},
    )
