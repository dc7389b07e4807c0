"""Morning summary at 08:00 local: tasks due and overdue, today's appointments and the water goal. If
08:00 falls in the person's quiet hours it comes at the first minute after them, up to two hours late."""

from __future__ import annotations

from datetime import timedelta

from brain.i18n import N_, tr
from brain.pulse.nudges import LOW, MEDIUM, NudgeAction, NudgeDraft
from brain.summaries import day_lines, day_opening
from rules import DailyAt, Rule, RuleContext


def decide(ctx: RuleContext) -> NudgeDraft | None:
    s = ctx.snapshot
    return NudgeDraft(
        type="morning_summary",
        priority=MEDIUM if s.tasks_overdue else LOW,
        title=tr("Good morning!"),
        body=day_opening(s),
        slot=ctx.slot,
        details=tuple(day_lines(s, ctx.local_now.tzinfo)),
        actions=(NudgeAction(tr("Show today"), command="/today"),),
        expires_after=timedelta(hours=4),
    )


MORNING_SUMMARY = Rule(name="morning_summary", label=N_("Morning summary"), trigger=DailyAt(8), priority=2,
                       decide=decide, grace=timedelta(hours=2), quiet_defer=timedelta(hours=2))
