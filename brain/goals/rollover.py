"""The goal roll-over job (the scheduler runs it every minute): closes the periods that ended, judges `<=` goals,
and opens the next period of each active goal."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select

from brain.goals.models import Goal, GoalPeriod
from brain.goals.periods import local_date_at, period_bounds
from brain.goals.tracker import is_met, open_period, reach
from brain.people.models import User
from brain.pulse.vacation import vacation_days_between

if TYPE_CHECKING:
    from brain.core import Brain

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RollOver:
    """What one run of `close_periods` did."""

    closed: int
    reached: int
    opened: int


async def close_periods(brain: Brain, now: datetime) -> RollOver:
    """The roll-over job (run it every few minutes, or at least hourly, from the scheduler): for each
    person with goals, closes every period that ended before `now` in their zone, emits GoalReached
    for a closed period whose comparison held (this is where `<=` goals are judged), and opens the
    current period of each active goal. Safe to run repeatedly and concurrently."""
    async with brain.transactions.read() as session:
        # The one look across people: who has goals at all. Everything after is per person.
        user_ids = list((await session.scalars(
            select(Goal.user_id).where(Goal.status.in_(("active", "paused"))).distinct()
        )).all())
    closed = reached = opened = 0
    for user_id in user_ids:
        try:
            c, r, o = await _roll_over(brain, user_id, now)
        except Exception:
            # One person's broken data must not stop everyone else's roll-over.
            log.exception("goal roll-over failed for user %s", user_id)
            continue
        closed, reached, opened = closed + c, reached + r, opened + o
    return RollOver(closed=closed, reached=reached, opened=opened)


async def _roll_over(brain: Brain, user_id: uuid.UUID, now: datetime) -> tuple[int, int, int]:
    async with brain.transactions.begin() as uow:
        user = await uow.session.get(User, user_id)
        if user is None:
            return 0, 0, 0
        goals = {g.id: g for g in (await uow.session.scalars(
            select(Goal).where(Goal.user_id == user_id, Goal.status.in_(("active", "paused")))
        )).all()}
        today = local_date_at(now, user.timezone)
        current = {goal_id: period_bounds(goal.period, today) for goal_id, goal in goals.items()}
        open_rows = (await uow.session.scalars(
            select(GoalPeriod)
            .where(GoalPeriod.user_id == user_id, GoalPeriod.closed_at.is_(None),
                   GoalPeriod.goal_id.in_(list(goals)))
            .order_by(GoalPeriod.period_start)
            .with_for_update().execution_options(populate_existing=True)
        )).all()
        closed = reached = 0
        has_current: set[uuid.UUID] = set()
        for row in open_rows:
            goal = goals[row.goal_id]
            if row.period_start >= current[goal.id][0]:
                has_current.add(goal.id)
                continue
            row.closed_at = now
            closed += 1
            if goal.status == "active" and row.reached_at is None and is_met(goal.comparison, row.value, goal.target):
                await uow.session.flush()
                reached += await reach(uow, user, goal, row.period_start, None)
            elif row.reached_at is None:
                # Mostly on vacation: paused, not failed.
                away = await vacation_days_between(uow, user_id, row.period_start, row.period_end)
                row.paused = away * 2 >= (row.period_end - row.period_start).days
        opened = 0
        for goal in goals.values():
            if goal.status == "active" and goal.id not in has_current:
                opened += await open_period(uow, user, goal, today)
        return closed, reached, opened
