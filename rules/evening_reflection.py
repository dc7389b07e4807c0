"""Evening reflection at 21:00 local: what went well today, with the day's numbers to look back on."""

from __future__ import annotations

from datetime import timedelta

from brain.i18n import N_, Text, ntr, tr
from brain.pulse.nudges import LOW, NudgeAction, NudgeDraft
from rules import DailyAt, Rule, RuleContext


def decide(ctx: RuleContext) -> NudgeDraft | None:
    s = ctx.snapshot
    details: list[Text] = []
    if s.tasks_done_today:
        details.append(ntr("{count} task done", "{count} tasks done", s.tasks_done_today))
    details.append(tr("Water: {ml} of {goal} ml", ml=s.water_ml, goal=s.water_goal_ml))
    if s.meals:
        details.append(ntr("{count} meal logged", "{count} meals logged", s.meals))
    return NudgeDraft(
        type="evening_reflection",
        priority=LOW,
        title=tr("How was your day?"),
        body=tr("What went well today?"),
        slot=ctx.slot,
        details=tuple(details),
        actions=(NudgeAction(tr("Show today"), command="/today"),),
        expires_after=timedelta(hours=3),
    )


EVENING_REFLECTION = Rule(name="evening_reflection", label=N_("Evening reflection"), trigger=DailyAt(21),
                          priority=1, decide=decide)
