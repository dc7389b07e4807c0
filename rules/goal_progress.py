"""Goal progress: at 17:00 local, a goal that is half-way or more but not reached while most of its period (two
thirds) is gone: how far it is and what is left, with a button to the goals. The one closest to done; `<=` goals
(limits) and streak goals (the streak warning speaks for those) are left out."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from brain.i18n import N_, tr
from brain.pulse.nudges import MEDIUM, NudgeAction, NudgeDraft
from rules import DailyAt, Rule, RuleContext

HALF_WAY = 0.5
MOST_OF_THE_PERIOD = 2 / 3


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 1)


def period_gone(local_now: datetime, start: datetime, end: datetime) -> float:
    return (local_now - start) / (end - start)


def decide(ctx: RuleContext) -> NudgeDraft | None:
    zone = ctx.local_now.tzinfo
    candidates = []
    for goal in ctx.goals:
        if goal.status != "active" or goal.reached or goal.comparison not in (">=", "=") \
                or goal.metric == "streak_days" or goal.target <= 0:
            continue
        share = goal.value / goal.target
        start = datetime.combine(goal.period_start, time(0), tzinfo=zone)
        end = datetime.combine(goal.period_end, time(0), tzinfo=zone)
        if HALF_WAY <= share < 1 and period_gone(ctx.local_now, start, end) >= MOST_OF_THE_PERIOD:
            candidates.append((share, goal))
    if not candidates:
        return None
    share, goal = max(candidates, key=lambda c: (c[0], c[1].title))
    left = goal.target - goal.value
    return NudgeDraft(
        type="goal_progress",
        priority=MEDIUM,
        title=tr("Half-way there: {title}", title=goal.title),
        body=tr("{value} of {target} so far; {left} to go before the period ends.", value=_number(goal.value),
                target=_number(goal.target), left=_number(left)),
        slot=ctx.slot,
        actions=(NudgeAction(tr("Show goals"), command="/goal"),),
        expires_after=timedelta(hours=4),
        data={"goal_id": str(goal.goal_id)},
    )


GOAL_PROGRESS = Rule(name="goal_progress", label=N_("Goal progress"), trigger=DailyAt(17), priority=4,
                     decide=decide, needs_goals=True)
