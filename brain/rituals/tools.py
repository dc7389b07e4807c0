"""ToolSpecs over the rituals. `draft_ritual` is a write: when the companion calls it from a wish ("make me a
morning routine") the policy gate turns it into a proposal, and approving the proposal saves the ritual (and
its schedule). `list_rituals` lets the companion see what exists."""

from __future__ import annotations

from typing import Any

from brain.errors import DomainError
from brain.i18n import Renderer, ntr, tr
from brain.rituals import drafting
from brain.rituals.service import create_ritual, list_rituals, ritual_title, schedule_ritual
from brain.rituals.templates import TEMPLATE_IDS, TEMPLATES
from brain.schedules.weekdays import EVERY_DAY, describe_weekdays, parse_weekdays
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec

MAX_DRAFT = 2000


async def _draft(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    template = TEMPLATES.get(args["template"]) if args.get("template") else None
    render = Renderer(ctx.user.locale, ctx.user.timezone)
    if args.get("steps"):
        steps = drafting.parse_draft(args["steps"])
    elif template is not None:
        steps = list(template.steps)
    else:
        raise DomainError(tr("A ritual needs steps or a template."), code="no_steps")
    title = args.get("title") or (render(tr(template.title)) if template is not None else "")
    days = EVERY_DAY
    if args.get("days"):
        parsed = parse_weekdays(args["days"])
        if parsed is None:
            raise DomainError(tr("I don't understand the days {days}. Try \"weekdays\" or \"mon, wed, fri\".",
                                 days=args["days"][:60]), code="bad_days")
        days = parsed
    ritual = await create_ritual(ctx.uow, ctx.user, ctx.actor, title=title, steps=steps,
                                 template=None if args.get("steps") else args.get("template"))
    message = ntr("New ritual: {title}, {count} step.", "New ritual: {title}, {count} steps.", len(steps),
                  title=ritual_title(ritual, render))
    data: dict[str, Any] = {"id": str(ritual.id), "title": ritual.title, "steps": len(steps)}
    if args.get("time") is not None:
        await schedule_ritual(ctx.uow, ctx.user, ritual, args["time"], days)
        message = tr("{saved} I'll start it with you {days} at {time}.", saved=message,
                     days=describe_weekdays(days, render), time=args["time"])
        data.update(time=args["time"].isoformat(timespec="minutes"), weekdays=days)
    return ToolResult.success(message, **data)


async def _list(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    render = Renderer(ctx.user.locale, ctx.user.timezone)
    listed = await list_rituals(ctx.uow.session, ctx.user.id)
    rituals = [{
        "position": item.position, "id": str(item.ritual.id), "title": ritual_title(item.ritual, render),
        "template": item.ritual.template, "steps": len(item.ritual.steps),
        "time": item.schedule.at.isoformat(timespec="minutes") if item.schedule else None,
        "days": describe_weekdays(item.schedule.weekdays, render) if item.schedule else None,
    } for item in listed]
    return ToolResult.success(ntr("You have {count} ritual.", "You have {count} rituals.", len(rituals)),
                              rituals=rituals, templates=list(TEMPLATE_IDS))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("draft_ritual", "rituals",
             "Save a guided routine for the person (a button flow, optionally at a time on some days), e.g. from "
             "'make me a morning routine'. Either name a template or write the steps, one per line: "
             "'water 250', 'coffee', 'log water' (asks how much), 'show tasks|calendar|drinks|food|streaks|goals', "
             "'mood', 'ask <question>' (answer kept in memory), 'task <question>' (answer becomes a task), "
             "'check <item>, <item>', 'breathe box|4-7-8|coherent <cycles>'; a label may follow '|'.",
             (ToolParam("title", "string", "Name of the ritual, in the person's language.", max_length=120),
              ToolParam("steps", "string", "The steps, one per line (see the description).", max_length=MAX_DRAFT),
              ToolParam("template", "string", "Start from this template instead of writing steps.",
                        enum=TEMPLATE_IDS),
              ToolParam("time", "time", "Local time to start it (HH:MM); without it the person starts it by hand."),
              ToolParam("days", "string", "Days for the time: 'daily' (default), 'weekdays', 'weekends', or names "
                        "such as 'mon, wed, fri'.", max_length=60)),
             "write", _draft),
    ToolSpec("list_rituals", "rituals", "The person's rituals with their schedules, and the templates there are.",
             (), "read", _list),
)
