"""Tables of the learning jobs: when each person's facts were last looked at (per kind of run), and the facts they
deleted, which are not learned again until `until`."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

NIGHTLY, WEEKLY_MODEL = "nightly", "weekly_model"


class LearningRun(Base):
    __tablename__ = "learning_runs"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)  # NIGHTLY or WEEKLY_MODEL
    last_run_at: Mapped[datetime] = mapped_column()


class ForgottenFact(Base):
    """A fact the person deleted (/facts): its key is skipped by every extractor until `until`."""

    __tablename__ = "forgotten_facts"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    statement: Mapped[str] = mapped_column(Text)
    until: Mapped[datetime] = mapped_column()
