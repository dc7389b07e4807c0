"""/goal (ziel, goals, ziele): goals with their progress and one-tap templates, a guided button flow
for a custom goal (metric -> at least/at most -> target -> period), a goal from a short phrase,
and pause / resume / stop / history. The flow keeps its state in each button's payload only, so a
half-finished flow survives a restart."""

from __future__ import annotations

from typing import Any

from bot.commands import Command
from bot.turn import PendingButton, Turn
from brain.errors import DomainError
from brain.goals.periods import PERIODS
from brain.goals.phrase import parse_goal_phrase
from brain.goals.service import find_goal, goal_history
from brain.goals.templates import FLOW_MEASURES, MEASURES, TEMPLATES, Measure, goal_title, measure_key
from brain.i18n import N_, Text, ntr, tr

FLOW_COMPARISONS: tuple[str, ...] = (">=", "<=")
HISTORY_SHOWN = 8
_PROGRESS: dict[str, str] = {
    "day": N_("{position}. {title}: {value}/{target} today"),
    "week": N_("{position}. {title}: {value}/{target} this week"),
    "month": N_("{position}. {title}: {value}/{target} this month"),
}
_COMPARISON_LABELS: dict[str, str] = {">=": N_("At least"), "<=": N_("At most")}
_PERIOD_LABELS: dict[str, str] = {"day": N_("Per day"), "week": N_("Per week"), "month": N_("Per month")}
_PAUSE = frozenset({"pause", "pausieren", "pausiere"})
_RESUME = frozenset({"resume", "continue", "weiter", "fortsetzen", "fortführen"})
_STOP = frozenset({"stop", "abandon", "end", "stopp", "beenden", "aufgeben"})
_HISTORY = frozenset({"history", "verlauf"})


def _rows(buttons: list[PendingButton], per_row: int = 2) -> list[list[PendingButton]]:
    return [buttons[i:i + per_row] for i in range(0, len(buttons), per_row)]


async def goal(turn: Turn, args: str) -> None:
    word, _, rest = args.strip().partition(" ")
    verb = word.lower()
    if not args.strip():
        await _overview(turn)
    elif verb in _PAUSE:
        await _by_reference(turn, "pause_goal", rest, tr("Which goal? E.g. /goal pause 2"))
    elif verb in _RESUME:
        await _by_reference(turn, "resume_goal", rest, tr("Which goal? E.g. /goal resume 2"))
    elif verb in _STOP:
        await _confirm_stop(turn, rest)
    elif verb in _HISTORY:
        await _history(turn, rest)
    else:
        await _from_phrase(turn, args)


def _progress_line(turn: Turn, item: dict[str, Any]) -> str:
    line = turn.t(tr(_PROGRESS[item["period"]], position=item["position"], title=item["title"],
                     value=item["value"], target=item["target"]))
    if item["status"] == "paused":
        return line + " " + turn.t(tr("(paused)"))
    if item["reached"]:
        return line + " ✓"
    if item["comparison"] == "<=" and item["value"] > item["target"]:
        return line + " " + turn.t(tr("(over the limit)"))
    return line


async def _overview(turn: Turn) -> None:
    result = await turn.tool("list_goals")
    if not result.ok:
        turn.say_result(result)
        return
    items: list[dict[str, Any]] = result.data.get("goals", [])
    in_use = {item["template"] for item in items}
    measured = {item.get("measures") for item in items}  # "at most 2,000 kcal" is not offered next to 1,800 kcal
    buttons = [
        turn.tool_button(tr("+ {goal}", goal=template.label_text), "create_goal_from_template", template=template.id)
        for template in TEMPLATES.values() if template.id not in in_use and template.measures not in measured
    ]
    buttons.append(turn.button(tr("Custom goal…"), "goal_flow"))
    if items:
        lines: list[Text | str] = [tr("Your goals:"), *(_progress_line(turn, item) for item in items),
                                   tr("Add one, or /goal pause|resume|stop <number>:")]
    else:
        lines = [tr("No goals yet. Pick one, make your own, or write it like /goal 8 glasses of water a day:")]
    turn.say(*lines, buttons=_rows(buttons))


async def _by_reference(turn: Turn, tool: str, reference: str, missing: Text) -> None:
    if not reference.strip():
        turn.say(missing)
        return
    turn.say_result(await turn.tool(tool, {"goal": reference.strip()}))


async def _confirm_stop(turn: Turn, reference: str) -> None:
    if not reference.strip():
        turn.say(tr("Which goal? E.g. /goal stop 2"))
        return
    try:
        async with turn.brain.transactions.read() as session:
            found = await find_goal(session, turn.user, reference)
    except DomainError as refused:
        turn.say(refused.text)
        return
    if found.goal.status == "abandoned":
        turn.say(tr("{title} was already stopped.", title=found.goal.title))
        return
    turn.say(
        tr("Stop the goal {title}? Its history is kept.", title=found.goal.title),
        # The id, not the position: the list may change before the button is pressed.
        buttons=[[turn.tool_button(tr("Stop it"), "abandon_goal", goal=str(found.goal.id)),
                  turn.button(tr("Keep it"), "goal_flow", step="keep")]],
    )


async def _history(turn: Turn, reference: str) -> None:
    try:
        async with turn.brain.transactions.read() as session:
            found = await find_goal(session, turn.user, reference or "1")
            periods = await goal_history(session, turn.user, found.goal.id, limit=HISTORY_SHOWN)
    except DomainError as refused:
        turn.say(refused.text)
        return
    lines: list[Text | str] = [tr("{title}, period by period:", title=found.goal.title)]
    for period in periods:
        line = turn.t(tr("{date}: {value}/{target}", date=period.period_start, value=period.value,
                         target=period.target))
        if period.reached:
            line += " ✓"
        elif period.paused:
            line += " " + turn.t(tr("(paused: vacation)"))
        elif not period.closed:
            line += " " + turn.t(tr("(running)"))
        lines.append(line)
    turn.say(*lines)


def _goal_call(turn: Turn, measure: Measure, comparison: str, target: float, period: str) -> dict[str, Any]:
    call: dict[str, Any] = {
        "title": turn.t(goal_title(measure, comparison, target, period)), "metric": measure.metric,
        "event_type": measure.event_type, "target": target, "period": period, "comparison": comparison,
    }
    for key in ("field", "filter_field", "filter_value"):
        if getattr(measure, key) is not None:
            call[key] = getattr(measure, key)
    return call


async def _from_phrase(turn: Turn, text: str) -> None:
    phrase = parse_goal_phrase(text)
    if phrase is None:
        turn.say(tr("I couldn't read that as a goal. Write it like /goal 8 glasses of water a day, "
                    "/goal max 3 coffees a day or /goal 3 new places a week, or send /goal to pick one."))
        return
    measure = MEASURES[phrase.measure]
    turn.say_result(await turn.tool("create_goal", _goal_call(turn, measure, phrase.comparison, phrase.target,
                                                              phrase.period)))


# How many coffees a day the limits offered to someone who wants to drink less allow.
LESS_COFFEE_LIMITS = (2, 3)


async def less_coffee(turn: Turn) -> None:
    """"I want to drink less coffee": the day's coffee, and a daily limit to keep count with (one button each), or the
    limit already kept."""
    progress = await turn.tool("get_drink_progress", {})
    goals = await turn.tool("list_goals")
    if not progress.ok or not goals.ok:
        turn.say_result(progress if not progress.ok else goals)
        return
    count = progress.data["coffee_count"]
    cups = ntr("{count} cup", "{count} cups", count, count=count)
    measure = MEASURES["coffees"]
    coffee = measure_key(measure.metric, measure.event_type, measure.field, measure.filter_field, measure.filter_value,
                         "day").rsplit("|", 1)[0]  # a day's or a week's coffees
    kept = next((item for item in goals.data.get("goals", [])
                 if str(item.get("measures", "")).rsplit("|", 1)[0] == coffee), None)
    if kept is not None:
        turn.say(tr("Good plan! Coffee today: {cups}. Your goal keeps count: {goal}.", cups=cups, goal=kept["title"]))
        return
    turn.say(tr("Good plan! Coffee today: {cups}. A daily limit helps: I count each coffee against it and tell you "
                "how you did. Pick one, or write e.g. \"max 2 coffees a day\".", cups=cups),
             buttons=[[turn.tool_button(tr("+ {goal}", goal=goal_title(measure, "<=", float(n), "day")),
                                        "create_goal", **_goal_call(turn, measure, "<=", float(n), "day"))
                       for n in LESS_COFFEE_LIMITS]])


# ---- the guided flow --------------------------------------------------------------------------


async def goal_flow(turn: Turn, payload: dict[str, Any]) -> None:
    """One step of the custom-goal flow; the payload holds the choices made so far."""
    if payload.get("step") == "keep":
        turn.say(tr("Fine, the goal stays."))
        return
    measure_key, comparison = payload.get("measure"), payload.get("comparison")
    target, period = payload.get("target"), payload.get("period")
    # A token's payload is written by us, but check it as if it were not: a bad one creates nothing.
    measure = MEASURES.get(measure_key) if measure_key in FLOW_MEASURES else None
    if (measure_key is not None and measure is None) \
            or (comparison is not None and comparison not in FLOW_COMPARISONS) \
            or (target is not None and (measure is None or target not in measure.targets)) \
            or (period is not None and period not in PERIODS):
        turn.say(tr("That button is not valid."))
        return
    if measure is None:
        turn.say(tr("What should the goal count?"), buttons=_rows(
            [turn.button(tr(MEASURES[key].label), "goal_flow", measure=key) for key in FLOW_MEASURES], 3))
    elif comparison is None:
        turn.say(tr("{what}: at least or at most?", what=tr(measure.label)), buttons=[[
            turn.button(tr(_COMPARISON_LABELS[c]), "goal_flow", measure=measure.key, comparison=c)
            for c in FLOW_COMPARISONS]])
    elif target is None:
        turn.say(tr("{what}: how many?", what=tr(measure.label)), buttons=_rows([
            turn.button(measure.amount(n), "goal_flow", measure=measure.key, comparison=comparison, target=n)
            for n in measure.targets]))
    elif period is None:
        turn.say(tr("Per day, per week or per month?"), buttons=[[
            turn.button(tr(_PERIOD_LABELS[p]), "goal_flow", measure=measure.key, comparison=comparison,
                        target=target, period=p)
            for p in PERIODS]])
    else:
        turn.say_result(await turn.tool("create_goal", _goal_call(turn, measure, comparison, float(target), period)))


COMMANDS = (
    Command("goal", N_("/goal 8 glasses of water a day"), N_("Goals: progress, templates, or your own"), goal,
            aliases=("ziel", "goals", "ziele")),
)
ACTIONS = {"goal_flow": goal_flow}
