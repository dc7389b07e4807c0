"""ToolSpecs over the projections: today's snapshot, the streaks, and skipping a streak day."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from brain.i18n import ntr, tr
from brain.people.local_time import local_date
from brain.projections.day_snapshot import day_snapshot
from brain.projections.streaks import STREAKS, skip_day, streak_label, streaks_for
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


async def _day_snapshot(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    snapshot = await day_snapshot(ctx.uow.session, ctx.user, ctx.uow.now)
    return ToolResult.success(
        tr("Today: {open} open tasks ({overdue} overdue), {events} events, water {water} of {goal} ml, "
           "{meals} meals with {kcal} kcal.", open=snapshot.tasks_open, overdue=snapshot.tasks_overdue,
           events=snapshot.events_today, water=snapshot.water_ml, goal=snapshot.water_goal_ml, meals=snapshot.meals,
           kcal=snapshot.kcal),
        **snapshot.as_data(),
    )


async def _streaks(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    views = await streaks_for(ctx.uow.session, ctx.user, local_date(ctx.user, ctx.uow.now))
    data = [{**asdict(v), "last_active": v.last_active.isoformat() if v.last_active else None,
             "strength": round(v.strength, 4)} for v in views]
    alive = sum(1 for v in views if v.current > 0)
    at_risk = sum(1 for v in views if v.status == "at_risk")
    message = (
        ntr("{count} streak running ({at_risk} at risk).", "{count} streaks running ({at_risk} at risk).", alive,
            at_risk=at_risk)
        if alive else tr("No streak is running right now.")
    )
    return ToolResult.success(message, streaks=data)


async def _skip(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    day = args.get("date") or local_date(ctx.user, ctx.uow.now)
    streak = args["streak"]
    await skip_day(ctx.uow, ctx.user, ctx.actor, streak, day)
    return ToolResult.success(
        tr("{date} is a skip day for your {streak} streak: it stays alive without growing.", date=day,
           streak=streak_label(streak)),
        streak=streak, date=day.isoformat(),
    )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("get_day_snapshot", "projections",
             "The person's day so far: tasks (open, done, overdue, due today), calendar (today, upcoming, next), "
             "water against the goal, coffee, meals and kcal against the goal, protein, places visited.",
             (), "read", _day_snapshot),
    ToolSpec("get_streaks", "projections",
             "The person's streaks (water, tasks, meals): current days, longest, status active/at_risk/broken, "
             "habit strength 0..1, and whether today is a skip day.", (), "read", _streaks),
    ToolSpec("skip_streak_day", "projections",
             "Mark a day as a skip (freeze) day for one streak so it neither grows nor breaks it (at most 2 per "
             "streak in any 7 days).",
             (ToolParam("streak", "string", "Which streak.", required=True, enum=STREAKS),
              ToolParam("date", "date", "Local day to skip (YYYY-MM-DD); today if omitted.")),
             "write", _skip),
)
