"""Tools of the pulse: pause and resume nudges, show the pulse status, undo a learned rule adaptation."""

from __future__ import annotations

import uuid
from typing import Any

from brain.feedback.learning import active_adaptations, undo_adaptation
from brain.i18n import N_, tr
from brain.pulse.activity import MAX_PAUSE_DAYS, is_paused, pause_pulse, pulse_states, resume_pulse, vacation_first_day
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec


async def _pause(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    last = args.get("last_day")
    if args.get("first_day") is not None and last is None:
        return ToolResult.failure(tr("Which day does the vacation end? e.g. /vacation 3.8.-10.8."), "missing_end")
    until = await pause_pulse(ctx.uow, ctx.user, ctx.actor, args.get("days"), first_day=args.get("first_day"),
                              last_day=last)
    if until is None:
        return ToolResult.success(tr("Reminders are paused until you say /resume."), until=None)
    if last is not None:
        first = vacation_first_day(ctx.user, ctx.uow.now, args.get("first_day"))  # as pause_pulse stored it
        return ToolResult.success(
            tr("Vacation from {first} to {last}: no reminders then, and your streaks and goals are kept. /resume "
               "ends it early.", first=first, last=last), until=until.isoformat())
    return ToolResult.success(tr("Reminders are paused until {until}, and your streaks are kept. /resume brings "
                                 "them back earlier.", until=until), until=until.isoformat())


async def _resume(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    if await resume_pulse(ctx.uow, ctx.user, ctx.actor):
        return ToolResult.success(tr("Reminders are back on."), resumed=True)
    return ToolResult.success(tr("Reminders were not paused."), resumed=False)


async def _status(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    state = (await pulse_states(ctx.uow.session, [ctx.user.id])).get(ctx.user.id)
    paused = is_paused(state, ctx.uow.now)
    adaptations = await active_adaptations(ctx.uow.session, ctx.user.id)
    return ToolResult.success(
        None, paused=paused,
        paused_until=state.paused_until.isoformat() if paused and state and state.paused_until else None,
        quiet_start=ctx.user.quiet_start.strftime("%H:%M"), quiet_end=ctx.user.quiet_end.strftime("%H:%M"),
        adaptations=[{"id": str(a.id), "rule": a.rule, "change": a.change, "offset_minutes": a.offset_minutes,
                      "backoff_factor": a.backoff_factor} for a in adaptations],
    )


async def _undo(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    try:
        adaptation_id = uuid.UUID(args["adaptation_id"])
    except ValueError:
        return ToolResult.failure(tr("There is no such change to undo."), "not_found")
    row = await undo_adaptation(ctx.uow, ctx.user.id, adaptation_id, ctx.actor)
    return ToolResult.success(tr("Done: that reminder works as before again."), rule=row.rule, change=row.change)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("pause_pulse", "pulse", "Pause all reminders (vacation mode: streaks and goals are kept), for some days "
             "from now, for a vacation from one day to another, or until resumed.",
             (ToolParam("days", "integer", "How many days from now; until resumed if nothing is given.", minimum=1,
                        maximum=MAX_PAUSE_DAYS, label=N_("The number of days")),
              ToolParam("first_day", "date", "A vacation's first day (default today)."),
              ToolParam("last_day", "date", "A vacation's last day.")), "write", _pause),
    ToolSpec("resume_pulse", "pulse", "End a pause of the reminders.", (), "write", _resume),
    ToolSpec("get_pulse_status", "pulse", "Whether reminders are paused, quiet hours, and learned rule changes.",
             (), "read", _status),
    ToolSpec("undo_rule_adaptation", "pulse", "Undo a change the reminders learned (moved later, backed off).",
             (ToolParam("adaptation_id", "string", "Id of the adaptation.", required=True, max_length=64),),
             "write", _undo),
)
