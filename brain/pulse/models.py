"""Tables of the pulse: one row per nudge, unique per (user, rule, slot), and each person's pulse state
(paused, last message received) that decides whether a nudge may go out now."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, SmallInteger, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

# A nudge waits (pending) until it is due and the person can be reached, is then sent, and ends in one
# of the decided states. A snooze puts a sent nudge back to pending with a later due time.
PENDING, SENT = "pending", "sent"
ACTED, DISMISSED, EXPIRED, AUTO_RESOLVED = "acted", "dismissed", "expired", "auto_resolved"
OPEN_STATES = (PENDING, SENT)


class Nudge(Base):
    __tablename__ = "nudges"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(32))
    slot: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(32))
    priority: Mapped[int] = mapped_column(SmallInteger)
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    # The latest draft (title, body, details, actions) as JSON Text, rendered in the person's locale on sending.
    content: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # What the rule needs to decide again later: the trigger time, the triggering event, the insight key.
    data: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    due_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    sent_at: Mapped[datetime | None] = mapped_column()
    decided_at: Mapped[datetime | None] = mapped_column()
    # The person's local hour when it was (last) sent or due: what the feedback loop groups by.
    local_hour: Mapped[int] = mapped_column(SmallInteger)
    snoozes: Mapped[int] = mapped_column(SmallInteger, default=0)
    created_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        UniqueConstraint("user_id", "rule", "slot"),
        Index("ix_nudges_user_status_due", "user_id", "status", "due_at"),
    )


class PulseState(Base):
    __tablename__ = "pulse_states"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    # A pause (vacation) from `paused_from` (None: from when it was set) to `paused_until` (None: until /resume).
    paused_from: Mapped[datetime | None] = mapped_column()
    paused_until: Mapped[datetime | None] = mapped_column()  # None while paused: until /resume
    last_inbound_at: Mapped[datetime | None] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
