"""The Telegram adapter's own tables: processed update ids (a replayed update has no second effect) and the
delivery state of outbox rows that Telegram has not fully taken yet (parts already sent, next try). Both are
bookkeeping of the transport, not the person's data, so `/link` may drop them for an absorbed user."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, func
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class TelegramUpdate(Base):
    """One update that was taken for processing. Telegram numbers updates per bot, hence `bot_id`; the key
    starts with `user_id` like every personal table (a replay always comes from the same person)."""

    __tablename__ = "telegram_updates"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    received_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (Index("ix_telegram_updates_received_at", "received_at"), {"info": {"bookkeeping": True}})


class TelegramDelivery(Base):
    """An outbox row Telegram has not fully taken: a long reply goes out as several messages, and a retry
    continues after the last part that arrived; `not_before` holds a 429's retry_after or the backoff after
    an error. Only rows that needed a second try have one."""

    __tablename__ = "telegram_deliveries"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    outbox_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("outbox.id", ondelete="CASCADE"),
                                           primary_key=True)
    parts_sent: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = ({"info": {"bookkeeping": True}},)
