"""Tables of the calendar module: one row per appointment, with start and end as instants (timestamptz); all-day
events run from local midnight to local midnight. A repeating appointment is a series (its RRULE, first start,
length and zone) whose occurrences are rows of their own, made a year ahead and kept a year ahead by a daily job:
every reader (the agenda, /today, the day snapshot) sees them as appointments."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String, Text, UniqueConstraint, func
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
    # An occurrence of a series: which one (the series' wall time of its start, "2026-11-30T09:00"); a series
    # deleted leaves its past occurrences as they were.
    series_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("calendar_series.id", ondelete="SET NULL"))
    occurrence_key: Mapped[str | None] = mapped_column(String(16))
    # clock_timestamp, not now(): events created in one transaction keep a stable tie-break order.
    created_at: Mapped[datetime] = mapped_column(server_default=func.clock_timestamp())
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        CheckConstraint("end_time > start_time", name="end_after_start"),
        # The agenda is every event that ends after the start of the local day.
        Index("ix_calendar_events_user_end", "user_id", "end_time"),
        UniqueConstraint("series_id", "occurrence_key"),
    )
    __mapper_args__ = {"eager_defaults": True}


class CalendarSeries(Base):
    __tablename__ = "calendar_series"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    calendar_id: Mapped[str] = mapped_column(String(64), default="default")
    title: Mapped[str] = mapped_column(String(500))
    description: Mapped[str | None] = mapped_column(Text)
    location: Mapped[str | None] = mapped_column(String(500))
    rrule: Mapped[str] = mapped_column(Text)
    # The zone its wall times are in, and the first start: its wall time there anchors the rule.
    timezone: Mapped[str] = mapped_column(String(64))
    starts_at: Mapped[datetime] = mapped_column()
    # The length of each occurrence: minutes, or whole local days for an all-day series.
    length_minutes: Mapped[int] = mapped_column(Integer)
    is_all_day: Mapped[bool] = mapped_column(default=False)
    # Occurrences up to this instant exist as rows.
    made_until: Mapped[datetime] = mapped_column()
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (Index("ix_calendar_series_made_until", "made_until"),)
