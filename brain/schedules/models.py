"""One row per scheduled push of a person: the morning summary, the evening reflection, or a ritual (`ref` is
its id). The row holds the local time and weekdays, and the scheduler's bookkeeping: the zone it planned in,
the last slot decided (sent or dropped) and when to look again."""

from __future__ import annotations

import uuid
from datetime import datetime, time

from sqlalchemy import Boolean, ForeignKey, Index, SmallInteger, String, Time, text
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

MORNING_SUMMARY, EVENING_REFLECTION, RITUAL = "morning_summary", "evening_reflection", "ritual"
PUSH_KINDS: tuple[str, ...] = (MORNING_SUMMARY, EVENING_REFLECTION, RITUAL)


class PushSchedule(Base):
    __tablename__ = "push_schedules"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32), primary_key=True)  # one of PUSH_KINDS
    ref: Mapped[str] = mapped_column(String(64), primary_key=True, default="")  # a ritual's id, else ""
    at: Mapped[time] = mapped_column(Time)  # local time of day
    weekdays: Mapped[int] = mapped_column(SmallInteger, default=0b1111111)  # bit 0 Monday .. bit 6 Sunday
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    timezone: Mapped[str] = mapped_column(String(64))  # the zone `next_due_at` was planned in
    last_slot_at: Mapped[datetime] = mapped_column()  # every slot at or before it is decided
    last_sent_slot: Mapped[str | None] = mapped_column(String(32))  # e.g. "2026-11-30T08:00"
    next_due_at: Mapped[datetime | None] = mapped_column()  # None: plan at the next run
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        Index("ix_push_schedules_due", "next_due_at", postgresql_where=text("enabled")),
    )
