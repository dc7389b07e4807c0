"""Tables of the drink module: entries, a person's presets and daily goals per drink type."""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class DrinkEntry(Base):
    __tablename__ = "drink_entries"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    drink_type: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(100))
    quantity_ml: Mapped[int] = mapped_column(Integer)
    preset_id: Mapped[uuid.UUID | None] = mapped_column()
    logged_at: Mapped[datetime] = mapped_column()
    # The person's local calendar day at logging time, so "today" needs no time-zone maths in SQL.
    local_date: Mapped[date] = mapped_column()
    # clock_timestamp, not now(): entries of one transaction still get a stable order for "undo last".
    created_at: Mapped[datetime] = mapped_column(server_default=func.clock_timestamp())

    __table_args__ = (Index("ix_drink_entries_user_date", "user_id", "local_date"),)


class DrinkPreset(Base):
    __tablename__ = "drink_presets"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    drink_type: Mapped[str] = mapped_column(String(16))
    quantity_ml: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (UniqueConstraint("user_id", "name"),)


class DrinkGoal(Base):
    __tablename__ = "drink_goals"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    drink_type: Mapped[str] = mapped_column(String(16), primary_key=True)
    daily_ml: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())
