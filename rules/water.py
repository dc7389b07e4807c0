"""Water: every 90 minutes between 08:00 and 21:00 local, when the day's water is behind the pro-rata
goal (the goal spread evenly over that window), with the ml still to go and per remaining hour; never more than a
comfortable pace per hour: when the rest is out of reach today, it says so and asks only for a glass. On the day a
person arrives the pace starts when they first wrote (what they drank before is not known), and nothing is asked
until a glass is due by it: nobody is told to drink seconds after saying hello."""

from __future__ import annotations

import math
from datetime import timedelta

from brain.i18n import N_, tr
from brain.pulse.nudges import LOW, MEDIUM, NudgeAction, NudgeDraft
from rules import Every, Rule, RuleContext

WINDOW = Every(minutes=90, start_hour=8, end_hour=21)
GLASS_ML = 250
# What a person drinks comfortably in an hour, kept up over the rest of the day; asking for more is no advice.
MAX_ML_PER_HOUR = 500


def decide(ctx: RuleContext) -> NudgeDraft | None:
    s = ctx.snapshot
    goal = s.water_goal_ml
    if goal <= 0 or s.water_ml >= goal or not WINDOW.start_hour <= ctx.hour <= WINDOW.end_hour:
        return None
    window_minutes = (WINDOW.end_hour - WINDOW.start_hour) * 60
    start = WINDOW.start_hour * 60
    arrived = ctx.arrived.hour * 60 + ctx.arrived.minute if ctx.arrived and ctx.arrived.date() == ctx.today else 0
    first_day = arrived > start  # the person came today, after the window opened
    start = max(start, arrived)
    elapsed = ctx.local_now.hour * 60 + ctx.local_now.minute - start
    expected = goal * min(max(elapsed / window_minutes, 0.0), 1.0)
    if s.water_ml >= expected or (first_day and expected - s.water_ml < GLASS_ML):
        return None  # on track for the day (on the first day, not yet a glass behind since the person came)
    remaining = goal - s.water_ml
    hours_left = max(WINDOW.end_hour * 60 - (ctx.local_now.hour * 60 + ctx.local_now.minute), 30) / 60
    per_hour = math.ceil(remaining / hours_left / 50) * 50  # in steps of 50 ml, as people pour
    if per_hour > MAX_ML_PER_HOUR:
        # (the window ends at 21:00: "before the evening" read oddly at 20:00)
        body = tr("Still {remaining} ml to your goal today: more than you can comfortably drink in the hours left. "
                  "A glass now still helps.", remaining=remaining)
    else:
        body = tr("Still {remaining} ml to your goal today, about {per_hour} ml per hour.", remaining=remaining,
                  per_hour=per_hour)
    return NudgeDraft(
        type="water_reminder",
        priority=MEDIUM if s.water_percent < 50 else LOW,
        title=tr("Time for a glass of water"),
        body=body,
        slot=ctx.slot,
        actions=(NudgeAction(tr("Log {ml} ml water", ml=GLASS_ML), tool="log_drink",
                             args={"drink_type": "water", "quantity_ml": GLASS_ML}),),
        expires_after=timedelta(minutes=90),
    )


WATER = Rule(name="water", label=N_("Water reminder"), trigger=WINDOW, priority=2, decide=decide)
