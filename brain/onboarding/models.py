"""Where a person is in the onboarding, so a half-finished setup resumes after a restart (and a city
name typed at the time zone step is read as one)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

LANGUAGE, TIMEZONE, QUIET, WATER, DONE = "language", "timezone", "quiet", "water", "done"
STEPS: tuple[str, ...] = (LANGUAGE, TIMEZONE, QUIET, WATER)


class OnboardingState(Base):
    __tablename__ = "onboarding_states"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    step: Mapped[str] = mapped_column(String(16), default=LANGUAGE)  # one of STEPS, or DONE
    started_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()

    # Setup progress, not the person's entries: `/link` may drop it for an absorbed user.
    __table_args__ = ({"info": {"bookkeeping": True}},)
