"""Morning summary at 08:00 local: tasks due and overdue, today's appointments and the water goal. If
08:00 falls in the person's quiet hours it comes at the first minute after them, up to two hours late."""

from __future__ import annotations

from datetime import timedelta

from brain.i18n import N_, Text, ntr, tr
from brain.pulse.nudges import LOW, MEDIUM, NudgeAction, NudgeDraft
from rules import DailyAt, Rule, RuleContext


def decide(ctx: RuleContext) -> NudgeDraft | None:
    s = ctx.snapshot
    details: list[Text] = []
    if s.tasks_due_today:
        details.append(tr("Due today: {titles}", titles=", ".join(t.title for t in s.tasks_due_today)))
    if s.tasks_overdue:
        details.append(ntr("{count} overdue task", "{count} overdue tasks", s.tasks_overdue))
    if s.events_today:
        details.append(ntr("{count} appointment today", "{count} appointments today", s.events_today))
    if s.next_event is not None:
        if s.next_event.is_all_day:
            details.append(tr("Next: {title} (all day)", title=s.next_event.title))
        else:
            start = s.next_event.start.astimezone(ctx.local_now.tzinfo).time()
            details.append(tr("Next: {title} at {time}", title=s.next_event.title, time=start))
    free = not (s.tasks_due_today or s.tasks_overdue or s.events_today)
    details.append(tr("Water goal: {goal} ml", goal=s.water_goal_ml))
    return NudgeDraft(
        type="morning_summary",
        priority=MEDIUM if s.tasks_overdue else LOW,
        title=tr("Good morning!"),
        body=tr("No tasks or appointments today: a free day.") if free else tr("Here is your day."),
        slot=ctx.slot,
        details=tuple(details),
        actions=(NudgeAction(tr("Show today"), command="/today"),),
        expires_after=timedelta(hours=4),
    )


MORNING_SUMMARY = Rule(name="morning_summary", label=N_("Morning summary"), trigger=DailyAt(8), priority=2,
                       decide=decide, grace=timedelta(hours=2), quiet_defer=timedelta(hours=2))
