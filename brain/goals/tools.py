"""ToolSpecs over the goal service. A `goal` argument is a short reference (list position, id or
title fragment) resolved by `service.find_goal`."""

from __future__ import annotations

from typing import Any

from brain.goals import service
from brain.goals.models import Goal
from brain.goals.periods import PERIODS
from brain.goals.service import COMPARISONS, MAX_FILTER_VALUE, MAX_TARGET, MAX_TITLE, METRICS, GoalProgress
from brain.goals.templates import TEMPLATE_IDS
from brain.goals.tracker import EVENT_SOURCES
from brain.i18n import ntr, tr
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


def goal_data(goal: Goal) -> dict[str, Any]:
    return {
        "id": str(goal.id), "title": goal.title, "metric": goal.metric, "event_type": goal.event_type,
        "field": goal.field, "filter_field": goal.filter_field, "filter_value": goal.filter_value,
        "target": goal.target, "period": goal.period, "comparison": goal.comparison, "status": goal.status,
        "template": goal.template,
    }


def progress_data(progress: GoalProgress, position: int) -> dict[str, Any]:
    return {
        "position": position, "id": str(progress.goal_id), "title": progress.title, "metric": progress.metric,
        "period": progress.period, "comparison": progress.comparison, "target": progress.target,
        "value": progress.value, "reached": progress.reached, "status": progress.status,
        "period_start": progress.period_start.isoformat(), "period_end": progress.period_end.isoformat(),
        "template": progress.template, "measures": progress.measures,
    }


async def _list(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    goals = await service.goals_progress(ctx.uow.session, ctx.user, ctx.uow.now)
    return ToolResult.success(
        ntr("You have {count} goal.", "You have {count} goals.", len(goals)),
        goals=[progress_data(p, position) for position, p in enumerate(goals, start=1)],
    )


async def _from_template(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    goal = await service.create_from_template(ctx.uow, ctx.user, ctx.actor, args["template"])
    return ToolResult.success(tr("New goal: {title}.", title=goal.title), **goal_data(goal))


async def _create(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    goal = await service.create_goal(
        ctx.uow, ctx.user, ctx.actor, title=args["title"], metric=args["metric"], event_type=args["event_type"],
        field=args.get("field"), filter_field=args.get("filter_field"), filter_value=args.get("filter_value"),
        target=args["target"], period=args.get("period", "day"), comparison=args.get("comparison", ">="),
    )
    return ToolResult.success(tr("New goal: {title}.", title=goal.title), **goal_data(goal))


async def _pause(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    goal = await service.pause_goal(ctx.uow, ctx.user, ctx.actor, args["goal"])
    return ToolResult.success(tr("Paused {title}. /goal resume picks it up again.", title=goal.title),
                              **goal_data(goal))


async def _resume(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    goal = await service.resume_goal(ctx.uow, ctx.user, ctx.actor, args["goal"])
    return ToolResult.success(tr("{title} counts again from now on.", title=goal.title), **goal_data(goal))


async def _abandon(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    goal = await service.abandon_goal(ctx.uow, ctx.user, ctx.actor, args["goal"])
    return ToolResult.success(tr("Stopped {title}. Its history is kept.", title=goal.title), **goal_data(goal))


_GOAL = ToolParam("goal", "string", "Which goal: its number in the goal list, its id, or part of its title.",
                  required=True, max_length=MAX_TITLE)
_SUM_FIELDS = sorted({f for source in EVENT_SOURCES.values() for f in source.sum_fields})
_FILTER_FIELDS = sorted({f for source in EVENT_SOURCES.values() for f in source.filter_fields})

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("list_goals", "goals", "List the person's goals with their progress in the current day, week or "
             "month; numbers in the result can be used to refer to them.", (), "read", _list),
    ToolSpec("create_goal_from_template", "goals", "Start one of the ready-made goals: water_8_glasses (8 water "
             "logs a day), tasks_5, meals_3, kcal_max_2000, places_3_new (a week), coffee_max_3.",
             (ToolParam("template", "string", "Which template.", required=True, enum=TEMPLATE_IDS),),
             "write", _from_template),
    ToolSpec("create_goal", "goals", "Start a custom goal: count events (event_count), add up a number in them "
             "(event_sum with field, e.g. DrinkLogged quantity_ml or MealLogged calories), or follow a streak "
             "(streak_days with field water, tasks or meals), per day, week (from Monday) or month.",
             (ToolParam("title", "string", "A short title in the person's language, e.g. 'At least 8 glasses of "
                        "water a day'.", required=True, max_length=MAX_TITLE),
              ToolParam("metric", "string", "What to measure.", required=True, enum=METRICS),
              ToolParam("event_type", "string", "The event that counts.", required=True,
                        enum=tuple(EVENT_SOURCES)),
              ToolParam("field", "string", "event_sum: the number to add up (" + ", ".join(_SUM_FIELDS) + "); "
                        "streak_days: the streak (water, tasks, meals).", max_length=64),
              ToolParam("filter_field", "string", "Count only events whose field has filter_value ("
                        + ", ".join(_FILTER_FIELDS) + ").", max_length=64),
              ToolParam("filter_value", "string", "The value filter_field must have, e.g. water.",
                        max_length=MAX_FILTER_VALUE),
              ToolParam("target", "number", "The target value.", required=True, minimum=0, maximum=MAX_TARGET),
              ToolParam("period", "string", "Per day, week or month (default day).", enum=PERIODS),
              ToolParam("comparison", "string", "At least (>=, default), at most (<=) or exactly (=) the target.",
                        enum=COMPARISONS)),
             "write", _create),
    ToolSpec("pause_goal", "goals", "Pause a goal; events do not count for it until it is resumed.", (_GOAL,),
             "write", _pause),
    ToolSpec("resume_goal", "goals", "Resume a paused goal.", (_GOAL,), "write", _resume),
    ToolSpec("abandon_goal", "goals", "Stop a goal for good (its history is kept).", (_GOAL,), "destructive",
             _abandon),
)
