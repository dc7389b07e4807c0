"""Tables of the goal system: `goals` (what counts, the target, and the goal's status) and
`goal_periods` (one row per goal and local period: its value, when it was reached, when it closed).
Past periods stay as the goal's history."""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import Boolean, CheckConstraint, Double, ForeignKey, Index, PrimaryKeyConstraint, String, false, func
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base


class Goal(Base):
    __tablename__ = "goals"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    metric: Mapped[str] = mapped_column(String(16))  # event_count | event_sum | streak_days
    # The event that feeds the goal; for streak_days the event that feeds the streak.
    event_type: Mapped[str] = mapped_column(String(64))
    # event_sum: the numeric payload field summed; streak_days: the streak's name.
    field: Mapped[str | None] = mapped_column(String(64))
    filter_field: Mapped[str | None] = mapped_column(String(64))
    filter_value: Mapped[str | None] = mapped_column(String(100))
    target: Mapped[float] = mapped_column(Double)
    period: Mapped[str] = mapped_column(String(8))
    comparison: Mapped[str] = mapped_column(String(2))  # >= | <= | =
    status: Mapped[str] = mapped_column(String(16), default="active")
    template: Mapped[str | None] = mapped_column(String(32))
    # clock_timestamp, not now() or the injected clock: goals made in one transaction or at one test
    # instant still keep their order in the list, and "/goal pause 2" keeps meaning the same goal.
    created_at: Mapped[datetime] = mapped_column(server_default=func.clock_timestamp())
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        CheckConstraint("metric IN ('event_count', 'event_sum', 'streak_days')", name="metric_kind"),
        CheckConstraint("period IN ('day', 'week', 'month')", name="period_kind"),
        CheckConstraint("comparison IN ('>=', '<=', '=')", name="comparison_kind"),
        CheckConstraint("status IN ('active', 'paused', 'abandoned')", name="status_kind"),
        CheckConstraint("target >= 0", name="target_not_negative"),
        # The tracker's lookup for every event: a person's active goals fed by one event type.
        Index("ix_goals_user_status_event", "user_id", "status", "event_type"),
    )
    __mapper_args__ = {"eager_defaults": True}


class GoalPeriod(Base):
    """A goal's value in one local period. The key makes (goal, period start) unique, so concurrent
    events add to one row and `reached_at` can be set exactly once (a goal belongs to one person, so
    the key never spans people; every query still filters by user_id)."""

    __tablename__ = "goal_periods"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    goal_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("goals.id", ondelete="CASCADE"))
    period_start: Mapped[date] = mapped_column()
    period_end: Mapped[date] = mapped_column()  # exclusive: the first day of the next period
    value: Mapped[float] = mapped_column(Double, default=0.0)
    reached_at: Mapped[datetime | None] = mapped_column()
    closed_at: Mapped[datetime | None] = mapped_column()
    # Closed unreached with most of its days on vacation: paused, not failed.
    paused: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        PrimaryKeyConstraint("goal_id", "period_start"),
        # The roll-over job looks only at periods that are still open.
        Index("ix_goal_periods_open", "user_id", "goal_id", postgresql_where="closed_at IS NULL"),
    )
