"""The reminders table: one row per reminder a person asked for. `due_at` is when it goes out next (its time, or
later while quiet hours or a pause hold it); `occurrence_at` is the time it is for, which the message names and
the outbox key counts once."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, SmallInteger, String, Text
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

# waiting: due_at says when it goes out; sent: out, no answer yet (a one-off reminder); done: the person pressed
# Done (or the task it belongs to is done); cancelled: deleted, or its task was.
WAITING, SENT, DONE, CANCELLED = "waiting", "sent", "done", "cancelled"
# Why due_at lies after occurrence_at: the message says so.
HELD_QUIET, HELD_PAUSED, SNOOZED = "quiet", "paused", "snoozed"


class Reminder(Base):
    __tablename__ = "reminders"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(String(500))
    # The zone the person meant its time in (theirs when they asked): its occurrences keep their wall time there.
    timezone: Mapped[str] = mapped_column(String(64))
    occurrence_at: Mapped[datetime] = mapped_column()
    # A repeating reminder: its RRULE (brain.recurrence), expanded in `timezone` from the wall time of `starts_at`.
    rrule: Mapped[str | None] = mapped_column(Text)
    starts_at: Mapped[datetime | None] = mapped_column()
    # The last occurrence the person answered (Done or Snooze) of a repeating one: its buttons then count no more.
    answered_key: Mapped[str | None] = mapped_column(String(16))
    due_at: Mapped[datetime | None] = mapped_column()
    held: Mapped[str | None] = mapped_column(String(8))
    # Deliveries of the current occurrence so far: a snoozed one goes out again under a new outbox key.
    deliveries: Mapped[int] = mapped_column(SmallInteger, default=0)
    status: Mapped[str] = mapped_column(String(10), default=WAITING)
    # A reminder for a task: it ends when the task is done, and goes with the task.
    task_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    # For a task's reminder: how long before the task's due time it goes out (it moves with the task).
    minutes_before: Mapped[int | None] = mapped_column(Integer)
    sent_at: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        # The scheduler's minute: every reminder due by now, oldest first.
        Index("ix_reminders_due", "due_at", postgresql_where=sql_text("status = 'waiting'")),
        # /remind and the model's list: a person's waiting reminders by time.
        Index("ix_reminders_user_status", "user_id", "status", "due_at"),
        Index("ix_reminders_task_id", "task_id"),
    )
