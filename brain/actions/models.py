"""Action tokens: what a button refers to. The token is short and opaque (fits Telegram's 64-byte
callback data); the meaning, the owner and the expiry live here."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class ActionToken(Base):
    __tablename__ = "action_tokens"

    token: Mapped[str] = mapped_column(String(24), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    single_use: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (Index("ix_action_tokens_user_expires", "user_id", "expires_at"),)
