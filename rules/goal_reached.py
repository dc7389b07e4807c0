"""Goal reached: congratulate when the goal tracker emits GoalReached (once per goal and period)."""

from __future__ import annotations

from datetime import timedelta

from brain.events.catalog import GoalReached
from brain.i18n import N_, tr
from brain.pulse.nudges import MEDIUM, NudgeAction, NudgeDraft
from rules import EventTrigger, Rule, RuleContext


def decide(ctx: RuleContext) -> NudgeDraft | None:
    event = ctx.event
    if not isinstance(event, GoalReached):
        return None
    return NudgeDraft(
        type="goal_reached",
        priority=MEDIUM,
        title=tr("Goal reached!"),
        body=tr("You reached your goal “{title}”: {value} of {target}.", title=event.title, value=event.value,
                target=event.target),
        slot=ctx.slot,
        actions=(NudgeAction(tr("Show goals"), command="/goal"),),
        expires_after=timedelta(hours=12),
    )


# Nothing to re-check before sending: the goal was reached, whatever happened since.
GOAL_REACHED = Rule(name="goal_reached", label=N_("Goal reached"), trigger=EventTrigger((GoalReached.event_type(),)),
                    priority=2, decide=decide, recheck=False)
