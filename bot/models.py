"""The bot's own tables: bookkeeping of taking updates and of delivering the outbox, not the person's data, so
`/link` may drop them for an absorbed user.

They keep the table names they were created with (the first platform that needed each one is in its name):
renaming a table takes a migration and gains nothing."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, false, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


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
