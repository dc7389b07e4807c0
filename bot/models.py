"""The bot's own tables: bookkeeping of taking updates and of delivering the outbox, not the person's data, so
`/link` may drop them for an absorbed user.

They keep the table names they were created with (the first platform that needed each one is in its name):
renaming a table takes a migration and gains nothing."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, false, func
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

OPEN, DECIDED, EXPIRED = "open", "decided", "expired"  # the states of a `MatrixMessage`'s choices


class ProcessedUpdate(Base):
    """One update that was taken for processing (`bot.updates`): a replay finds it and has no second effect. A
    platform numbers updates per bot, hence `bot_id`; the key starts with `user_id` like every personal table (a
    replay always comes from the same person)."""

    __tablename__ = "telegram_updates"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    received_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (Index("ix_telegram_updates_received_at", "received_at"), {"info": {"bookkeeping": True}})


class DeliveryState(Base):
    """An outbox row its platform has not fully taken (`bot.delivery`): a long reply goes out as several messages,
    and a retry continues after the last part that arrived; `not_before` holds a flood wait or the backoff after
    an error. Only rows that needed a second try, or whose part is being sent, have one."""

    __tablename__ = "telegram_deliveries"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    outbox_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("outbox.id", ondelete="CASCADE"),
                                           primary_key=True)
    parts_sent: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())
    # Part `parts_sent` is being sent: committed before the request, cleared in the transaction that settles
    # it. Found set by the next sender, it means the process died with the request in flight.
    in_flight: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    __table_args__ = ({"info": {"bookkeeping": True}},)


class InboxUpdate(Base):
    """A webhook update stored before it was acknowledged and not handled yet (`bot.inbox`). `lane` is "queued"
    (a chat's messages, one after another) or "now" (its button presses and steering commands); within a lane the
    update id is the platform's order. The row is deleted in the transaction that held it while it was handled.
    `user_id` is the sender's (created on first contact, as the dialog would)."""

    __tablename__ = "telegram_inbox"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    chat_id: Mapped[str] = mapped_column(String(64))
    lane: Mapped[str] = mapped_column(String(8))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    received_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (Index("ix_telegram_inbox_lane", "bot_id", "chat_id", "lane", "update_id"),
                      # Claims walk the rows in this order and stop at the first free lane head.
                      Index("ix_telegram_inbox_claim_order", "bot_id", "received_at", "update_id"),
                      {"info": {"bookkeeping": True}})


class MatrixRoom(Base):
    """A Matrix room where the bot talks with this person (`bot.rooms`). `direct` rooms (the person and the bot
    only) may also receive the person's pushes; group rooms (when allowed) get only answers to what was said there.
    Registered again on the next message after `/link` dropped it."""

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
    """A sent message whose buttons went out as numbered choices (`bot.delivery.choices`): its event, the choices
    in order ({label, token, role}) and whether they are still open, so a reaction or a number reply after a
    restart still finds its action token, and a decided or expired choice can be edited to say so. `tokens`
    repeats the choices' tokens for the sweep that finds used ones in SQL."""

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
