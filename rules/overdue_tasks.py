"""Overdue tasks at 10:00 and 15:00 local, only while there are any."""

from __future__ import annotations

from datetime import timedelta

from brain.i18n import N_, ntr, tr
from brain.pulse.nudges import HIGH, MEDIUM, NudgeAction, NudgeDraft
from rules import DailyAt, Rule, RuleContext


def decide(ctx: RuleContext) -> NudgeDraft | None:
    overdue = ctx.snapshot.tasks_overdue
    if overdue <= 0:
        return None
    return NudgeDraft(
        type="overdue_tasks",
        priority=HIGH if overdue > 3 else MEDIUM,
        title=ntr("{count} overdue task", "{count} overdue tasks", overdue),
        body=tr("Complete them or give them a new date?"),
        slot=ctx.slot,
        actions=(NudgeAction(tr("Show tasks"), command="/tasks"),),
        expires_after=timedelta(hours=4),
    )


OVERDUE_TASKS = Rule(name="overdue_tasks", label=N_("Overdue tasks"), trigger=(DailyAt(10), DailyAt(15)),
                     priority=2, decide=decide)
