"""users and identities: a person's locale, time zone and quiet hours; (platform, platform id) -> user; link codes
that join a second platform identity to the same user."""

from __future__ import annotations

import uuid
from datetime import datetime, time

from sqlalchemy import ForeignKey, String, Time, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

DEFAULT_QUIET_START = time(22, 0)
DEFAULT_QUIET_END = time(7, 0)


class User(Base):
    __tablename__ = "users"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    display_name: Mapped[str | None] = mapped_column(String(128))
    locale: Mapped[str] = mapped_column(String(8))
    # True once the person chose a language; until then they are answered in the one they write (bot.parsing.language)
    locale_chosen: Mapped[bool] = mapped_column(default=False, server_default="false")
    timezone: Mapped[str] = mapped_column(String(64))
    quiet_start: Mapped[time] = mapped_column(Time, default=DEFAULT_QUIET_START)
    quiet_end: Mapped[time] = mapped_column(Time, default=DEFAULT_QUIET_END)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())


class Identity(Base):
    __tablename__ = "identities"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    platform: Mapped[str] = mapped_column(String(16))
    platform_id: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (UniqueConstraint("platform", "platform_id"),)


class LinkCode(Base):
    """A one-time code that joins a second chat app to this person (`/link`). Only a hash is stored: the
    code is a short-lived secret shown once in the chat that asked for it."""

    __tablename__ = "link_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    platform: Mapped[str] = mapped_column(String(16))  # where the code was asked for
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column()
