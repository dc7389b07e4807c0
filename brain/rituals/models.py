"""Tables of the rituals: the person's rituals (steps as validated JSON), their runs (the step state machine,
one active run per person at a time, so a restart resumes it) and one log row per ritual and local day."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import Date, ForeignKey, Index, SmallInteger, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

ACTIVE, ARCHIVED = "active", "archived"
# A run is active until it reaches its end (finished), the person stops it, or it sits untouched too long.
RUNNING, FINISHED, STOPPED, ABANDONED = "running", "finished", "stopped", "abandoned"


class Ritual(Base):
    __tablename__ = "rituals"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(120))
    template: Mapped[str | None] = mapped_column(String(32))  # the template it was made from, if any
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(String(16), default=ACTIVE)
    source: Mapped[str] = mapped_column(String(8), default="user")  # user | ai | system: who made it
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (Index("ix_rituals_user_status", "user_id", "status"),)


class RitualRun(Base):
    __tablename__ = "ritual_runs"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    ritual_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rituals.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), default=RUNNING)
    step_index: Mapped[int] = mapped_column(SmallInteger, default=0)  # the step waiting for the person
    completed_steps: Mapped[int] = mapped_column(SmallInteger, default=0)
    skipped_steps: Mapped[int] = mapped_column(SmallInteger, default=0)
    # Per step (by index, as a string): the answer given, or the checklist items ticked so far.
    answers: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    local_date: Mapped[date] = mapped_column(Date)  # the person's day it started on: the log's day
    started_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (
        Index("uq_ritual_runs_user_running", "user_id", unique=True, postgresql_where=text("status = 'running'")),
        Index("ix_ritual_runs_running_updated", "updated_at", postgresql_where=text("status = 'running'")),
    )


class RitualLog(Base):
    """How far a ritual got on a local day: the best run of that day (completed_at once every step was done)."""

    __tablename__ = "ritual_logs"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    ritual_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rituals.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    completed_steps: Mapped[int] = mapped_column(SmallInteger)
    total_steps: Mapped[int] = mapped_column(SmallInteger)
    completed_at: Mapped[datetime | None] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
