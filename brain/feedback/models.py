"""Tables of the feedback loop: every nudge outcome with its latency and local hour, and the adaptations
the engine applied per person and rule (each can be undone)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

OUTCOMES = ("acted", "dismissed", "snoozed", "expired", "auto_resolved")
MOVED_LATER, BACKED_OFF = "moved_later", "backed_off"


class NudgeOutcome(Base):
    __tablename__ = "nudge_outcomes"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # Indexed alone (not by user first) because the cascade from a deleted nudge looks rows up by it.
    nudge_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("nudges.id", ondelete="CASCADE"), index=True)
    rule: Mapped[str] = mapped_column(String(32))
    outcome: Mapped[str] = mapped_column(String(16))
    # Seconds from sending to the outcome; NULL when the person never saw the nudge (resolved or expired
    # while it was still waiting), so such outcomes do not count as their reaction.
    latency_s: Mapped[int | None] = mapped_column(Integer)
    local_hour: Mapped[int] = mapped_column(SmallInteger)
    recorded_at: Mapped[datetime] = mapped_column()

    __table_args__ = (Index("ix_nudge_outcomes_user_recorded", "user_id", "recorded_at"),)


class RuleAdaptation(Base):
    """One change the engine made to a rule for a person. The effect of the active rows adds up:
    offsets are summed (at most +180 min), back-off factors multiplied (at most 4)."""

    __tablename__ = "rule_adaptations"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(32))
    change: Mapped[str] = mapped_column(String(16))
    offset_minutes: Mapped[int] = mapped_column(Integer, default=0)
    backoff_factor: Mapped[int] = mapped_column(SmallInteger, default=1)
    local_hour: Mapped[int | None] = mapped_column(SmallInteger)  # the hour whose dismissals moved the rule
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column()
    undone_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (Index("ix_rule_adaptations_user_rule", "user_id", "rule"),)
