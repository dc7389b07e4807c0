"""Streak at risk: at 18:00 local, the longest streak that was active yesterday but not yet today, with
its logging action and a "skip today" button (a skip day keeps the streak without breaking it)."""

from __future__ import annotations

from datetime import timedelta

from brain.i18n import N_, ntr, tr
from brain.projections.streaks import streak_label
from brain.pulse.nudges import HIGH, MEDIUM, NudgeAction, NudgeDraft
from rules import DailyAt, Rule, RuleContext

LOG_ACTIONS: dict[str, NudgeAction] = {
    "water": NudgeAction(tr("Log 250 ml water"), tool="log_drink", args={"drink_type": "water", "quantity_ml": 250}),
    "tasks": NudgeAction(tr("Show tasks"), command="/tasks"),
    "meals": NudgeAction(tr("Log a meal"), command="/meal"),
}


def decide(ctx: RuleContext) -> NudgeDraft | None:
    at_risk = [s for s in ctx.streaks if s.status == "at_risk" and not s.skipped_today and s.current > 0]
    if not at_risk:
        return None
    best = max(at_risk, key=lambda s: (s.current, s.streak))
    actions = tuple(a for a in (LOG_ACTIONS.get(best.streak),) if a is not None)
    return NudgeDraft(
        type="streak_warning",
        priority=HIGH if best.current > 7 else MEDIUM,
        title=tr("Your {streak} streak is at risk", streak=streak_label(best.streak)),
        body=ntr("{count} day in a row so far. Log something today to keep it.",
                 "{count} days in a row so far. Log something today to keep it.", best.current),
        slot=ctx.slot,
        actions=(*actions, NudgeAction(tr("Skip today"), tool="skip_streak_day", args={"streak": best.streak})),
        expires_after=timedelta(hours=5),
    )


STREAK_AT_RISK = Rule(name="streak_at_risk", label=N_("Streak at risk"), trigger=DailyAt(18), priority=3,
                      decide=decide)
