"""Meals: at 12:00 local if no meal is logged yet today, at 19:00 if fewer than two."""

from __future__ import annotations

from datetime import timedelta

from brain.i18n import N_, Text, ntr, tr
from brain.pulse.nudges import LOW, NudgeAction, NudgeDraft
from rules import DailyAt, Rule, RuleContext

LUNCH, DINNER = DailyAt(12), DailyAt(19)


def decide(ctx: RuleContext) -> NudgeDraft | None:
    meals = ctx.snapshot.meals
    lunch = ctx.trigger == LUNCH if isinstance(ctx.trigger, DailyAt) else ctx.hour < 16
    title: Text
    if lunch:
        if meals >= 1:
            return None
        title, body = tr("Lunch logged?"), tr("No meal logged today yet.")
    else:
        if meals >= 2:
            return None
        title = tr("Dinner logged?")
        body = (ntr("Only {count} meal logged today ({kcal} kcal).", "Only {count} meals logged today ({kcal} kcal).",
                    meals, kcal=ctx.snapshot.kcal) if meals else tr("No meal logged today yet."))
    return NudgeDraft(
        type="meal_reminder",
        priority=LOW,
        title=title,
        body=body,
        slot=ctx.slot,
        actions=(NudgeAction(tr("Log a meal"), command="/meal"),),
        expires_after=timedelta(hours=3),
    )


MEALS = Rule(name="meals", label=N_("Meal reminder"), trigger=(LUNCH, DINNER), priority=1, decide=decide)
