"""users and identities: a person's locale, time zone and quiet hours; (platform, platform id) -> user."""

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
