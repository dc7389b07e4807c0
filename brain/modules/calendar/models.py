"""Table of the calendar module: one row per appointment, with start and end as instants
(timestamptz); all-day events run from local midnight to local midnight."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, func
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class CalendarEvent(Base):
    __tablename__ = "calendar_events"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    calendar_id: Mapped[str] = mapped_column(String(64), default="default")
    title: Mapped[str] = mapped_column(String(500))
    description: Mapped[str | None] = mapped_column(Text)
    location: Mapped[str | None] = mapped_column(String(500))
    start_time: Mapped[datetime] = mapped_column()
    end_time: Mapped[datetime] = mapped_column()
    is_all_day: Mapped[bool] = mapped_column(default=False)
    is_recurring: Mapped[bool] = mapped_column(default=False)
    # clock_timestamp, not now(): events created in one transaction keep a stable tie-break order.
    created_at: Mapped[datetime] = mapped_column(server_default=func.clock_timestamp())
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        CheckConstraint("end_time > start_time", name="end_after_start"),
        # The agenda is every event that ends after the start of the local day.
        Index("ix_calendar_events_user_end", "user_id", "end_time"),
    )
    __mapper_args__ = {"eager_defaults": True}
