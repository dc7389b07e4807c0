"""Weekly insight: Sunday 18:00 local (or the first tick after, the same evening), a strong correlation
(|r| >= 0.5) from the person's own data that they were not told before; nothing when there is none."""

from __future__ import annotations

from datetime import timedelta

from brain.i18n import N_, tr
from brain.pulse.nudges import LOW, NudgeAction, NudgeDraft
from rules import Rule, RuleContext, Weekly

MIN_ABS_R = 0.5


def insight_key(metric_a: str, metric_b: str) -> str:
    return "|".join(sorted((metric_a, metric_b)))


def decide(ctx: RuleContext) -> NudgeDraft | None:
    fresh = [c for c in ctx.correlations
             if abs(c.r) >= MIN_ABS_R and insight_key(c.metric_a, c.metric_b) not in ctx.told_insights]
    if not fresh:
        return None
    best = max(fresh, key=lambda c: abs(c.r))
    return NudgeDraft(
        type="correlation_insight",
        priority=LOW,
        title=tr("A pattern in your days"),
        body=best.sentence,
        slot=ctx.slot,
        details=(tr("Seen over {days} days (r = {r}).", days=best.n, r=round(best.r, 2)),),
        actions=(NudgeAction(tr("Show my week"), command="/week"),),
        expires_after=timedelta(hours=24),
        data={"insight": insight_key(best.metric_a, best.metric_b)},
    )


WEEKLY_INSIGHT = Rule(name="weekly_insight", label=N_("Weekly insight"), trigger=Weekly(weekday=6, hour=18),
                      priority=1, decide=decide, grace=timedelta(hours=6), recheck=False, needs_correlations=True)
