"""The table of the todo module: tasks (a subtask is a task with a parent). A task is open while `completed_at` is
NULL; due dates are the person's local calendar days, with an optional local time of day. A task's reminders are
reminders (brain.reminders) that name the task."""

from __future__ import annotations

import uuid
from datetime import date, datetime, time

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, SmallInteger, String, Text, Time, func
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class Task(Base):
    __tablename__ = "tasks"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    parent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(500))
    description: Mapped[str | None] = mapped_column(Text)
    due_date: Mapped[date | None] = mapped_column()
    # The local time of day on `due_date` it is due at, when one was said ("Report at 3pm"): what a reminder counts
    # back from.
    due_time: Mapped[time | None] = mapped_column(Time)
    # A repeating task: its RRULE over due days from `series_start`. Each occurrence is a task of its own, made when
    # the one before is done (or skipped); they share `series_id` (the first one's id).
    recurrence: Mapped[str | None] = mapped_column(Text)
    series_id: Mapped[uuid.UUID | None] = mapped_column()
    series_start: Mapped[date | None] = mapped_column()
    priority: Mapped[int] = mapped_column(SmallInteger, default=0)
    completed_at: Mapped[datetime | None] = mapped_column()
    # clock_timestamp, not now(): tasks created in one transaction still keep their order in lists.
    created_at: Mapped[datetime] = mapped_column(server_default=func.clock_timestamp())
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        CheckConstraint("priority BETWEEN 0 AND 3", name="priority_range"),
        # Open lists (completed_at IS NULL, by due date) and "done today" (completed_at range).
        Index("ix_tasks_user_completed_due", "user_id", "completed_at", "due_date"),
        # The parent FK's cascade and the subtask counts look rows up by parent alone.
        Index("ix_tasks_parent_id", "parent_id"),
    )
    # created_at comes back with the INSERT, so a fresh task can be read without a lazy load.
    __mapper_args__ = {"eager_defaults": True}


class ShownTaskList(Base):
    """The numbers of the task list last shown to a person (/tasks), one row per person: "/done 3" means the task
    that was number 3 there until the next list is shown, even when a task added since sorts before it."""

    __tablename__ = "shown_task_lists"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    positions: Mapped[list[int]] = mapped_column(ARRAY(Integer))
    task_ids: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(UUID(as_uuid=True)))  # the task at each position
    shown_at: Mapped[datetime] = mapped_column()
