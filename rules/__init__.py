"""Pulse rules (one small file each) and the rule engine that turns projections into nudges.

This module holds what a rule is: a name, a trigger (an event, a local time of day, an interval within
local hours, or a weekly time), a priority, and a pure `decide(ctx) -> NudgeDraft | None` over plain data
(the day snapshot, streaks, goals, the local time and the triggering event), so every decision can be
tested without a database. `rules.engine` runs them."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from brain.events.catalog import EventPayload
from brain.pulse.nudges import NudgeDraft

if TYPE_CHECKING:
    from brain.goals.service import GoalProgress
    from brain.projections.correlations import Correlation
    from brain.projections.day_snapshot import DaySnapshot
    from brain.projections.streaks import StreakView


@dataclass(frozen=True)
class EventTrigger:
    event_types: tuple[str, ...]


@dataclass(frozen=True)
class DailyAt:
    """Every day at this local time."""

    hour: int
    minute: int = 0

    @property
    def at(self) -> time:
        return time(self.hour, self.minute)


@dataclass(frozen=True)
class Every:
    """Every `minutes` from `start_hour`:00 up to `end_hour`:00 local (a grid anchored at the start)."""

    minutes: int
    start_hour: int
    end_hour: int

    @property
    def start(self) -> time:
        return time(self.start_hour)

    @property
    def end(self) -> time:
        return time(self.end_hour)


@dataclass(frozen=True)
class Weekly:
    """Once a week on `weekday` (Monday 0 .. Sunday 6) at this local time."""

    weekday: int
    hour: int
    minute: int = 0

    @property
    def at(self) -> time:
        return time(self.hour, self.minute)


Trigger = EventTrigger | DailyAt | Every | Weekly


@dataclass(frozen=True)
class RuleContext:
    """Everything a decision may look at, as plain data. `trigger` is the trigger that fired (for a rule
    with several times of day), `slot` the key the draft must carry."""

    local_now: datetime
    snapshot: DaySnapshot
    slot: str
    trigger: Trigger | None = None
    streaks: Sequence[StreakView] = ()
    goals: Sequence[GoalProgress] = ()
    correlations: Sequence[Correlation] = ()
    told_insights: frozenset[str] = frozenset()
    event: EventPayload | None = None
    event_id: uuid.UUID | None = None
    # When the person first wrote, in their zone (None when unknown): nothing can be expected of them before it.
    arrived: datetime | None = None

    @property
    def today(self) -> date:
        return self.local_now.date()

    @property
    def hour(self) -> int:
        return self.local_now.hour


@dataclass(frozen=True)
class Rule:
    name: str
    label: str  # an N_() msgid: how the rule is called in /pulse and in the back-off notice
    trigger: Trigger | tuple[Trigger, ...]
    priority: int
    decide: Callable[[RuleContext], NudgeDraft | None]
    # How late a missed slot may still be delivered after downtime; older slots are dropped.
    grace: timedelta = timedelta(hours=1)
    # Decide again with fresh data right before sending ("only if not done yet").
    recheck: bool = True
    # A slot inside quiet hours is dropped; with this set, it is sent at the first minute after them
    # instead, if that is at most this long after the slot (the morning summary: 2 h).
    quiet_defer: timedelta | None = None
    needs_correlations: bool = False
    needs_goals: bool = False  # the context carries the person's goals with their current periods

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        return self.trigger if isinstance(self.trigger, tuple) else (self.trigger,)

    @property
    def time_triggers(self) -> tuple[DailyAt | Every | Weekly, ...]:
        return tuple(t for t in self.triggers if not isinstance(t, EventTrigger))

    @property
    def event_types(self) -> tuple[str, ...]:
        return tuple(e for t in self.triggers if isinstance(t, EventTrigger) for e in t.event_types)
