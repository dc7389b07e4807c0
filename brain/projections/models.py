"""Tables of the streak projection: one state row per (person, streak), updated incrementally by the
bus subscriber, and the skip (freeze) days a person chose, which bridge a gap without growing the streak."""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, false, func
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class StreakState(Base):
    __tablename__ = "streak_states"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    streak: Mapped[str] = mapped_column(String(32), primary_key=True)
    current: Mapped[int] = mapped_column(Integer, default=0)
    longest: Mapped[int] = mapped_column(Integer, default=0)
    # The person's local date of the last qualifying event; NULL until the first one.
    last_active: Mapped[date | None] = mapped_column()
    # The time zone `last_active` was counted in (the person's then): a take-back reads that day in it, not in a
    # zone set since. Set with every advance; NULL for a state last advanced before migration 0028.
    last_active_zone: Mapped[str | None] = mapped_column(String(64))
    # Habit strength as of the end of `strength_date` (a local date); later days decay it when read.
    strength: Mapped[float] = mapped_column(Float, default=0.0)
    strength_date: Mapped[date | None] = mapped_column()
    # The state before `last_active` was counted (set with every advance), so that taking back that day's only
    # activity can restore it; `prev_current` NULL when it is not known (migration 0024).
    prev_current: Mapped[int | None] = mapped_column(Integer)
    prev_longest: Mapped[int | None] = mapped_column(Integer)
    prev_last_active: Mapped[date | None] = mapped_column()
    prev_strength: Mapped[float | None] = mapped_column(Float)
    prev_strength_date: Mapped[date | None] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())


class StreakSkip(Base):
    __tablename__ = "streak_skips"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    streak: Mapped[str] = mapped_column(String(32), primary_key=True)
    day: Mapped[date] = mapped_column(primary_key=True)
    # A day of a vacation (/pause, /vacation), not chosen one by one: it bridges a gap like any skip day but does
    # not count toward the limit of skip days.
    vacation: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
