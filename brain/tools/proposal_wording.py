"""A proposal as the action in the person's words: one translated template per tool ("Create the task «Call
mom», due Thursday, December 3"), its days and times as `LongDay` values that the renderer writes in the person's
language and zone. A tool without a template reads as its name with its arguments, still without ISO dates."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from brain.goals.templates import TEMPLATES as GOAL_TEMPLATES
from brain.i18n import N_, LongDay, Text, ntr, tr
from brain.modules.drink.service import drink_label
from brain.modules.food.service import meal_label
from brain.projections.streaks import streak_label

MAX_SHOWN = 80  # characters of one text argument


def _shown(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 1] + "…"


def _ref(value: Any) -> Text:
    """A task, event, place or goal as the model named it: a list number, or a title in quotes."""
    text = _shown(value)
    if text.isascii() and text.isdigit():
        return tr("no. {number}", number=int(text))
    return tr("«{name}»", name=text)


def _day(value: Any, year: int | None = None) -> LongDay | str:
    """An ISO date or date-time argument as a day (and time) the renderer writes in the person's zone; with its
    year when that is not `year` (the year the proposal was made)."""
    if isinstance(value, LongDay):
        return value
    parsed: date
    if isinstance(value, datetime | date):
        parsed = value
    else:
        text = str(value)
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00")) if "T" in text or len(text) > 10 \
                else date.fromisoformat(text)
        except ValueError:
            return _shown(text)
    return LongDay(parsed, with_year=year is not None and parsed.year != year)


def _changes(args: Mapping[str, Any], names: Mapping[str, str]) -> Text:
    """The fields an update changes: 'title «Buy oat milk», due Friday, December 4'."""
    parts: list[Text] = []
    for key, label in names.items():
        if key not in args:
            continue
        value = args[key]
        if key in ("due_date", "start_time", "end_time"):
            parts.append(tr(label, value=value))
        else:
            parts.append(tr(label, value=_shown(value)))
    if not parts:
        return tr("nothing")
    text = parts[0]
    for part in parts[1:]:
        text = tr("{first}, {second}", first=text, second=part)
    return text


_TASK_FIELDS = {"title": N_("title «{value}»"), "due_date": N_("due {value}"), "priority": N_("priority {value}"),
                "description": N_("notes «{value}»")}
_EVENT_FIELDS = {"title": N_("title «{value}»"), "start_time": N_("start {value}"), "end_time": N_("end {value}"),
                 "location": N_("place «{value}»"), "description": N_("notes «{value}»")}


def _create_task(a: Mapping[str, Any]) -> Text:
    if a.get("due_date"):
        return tr("Create the task «{title}», due {due}", title=_shown(a.get("title", "")), due=_day(a["due_date"]))
    return tr("Create the task «{title}»", title=_shown(a.get("title", "")))


def _add_subtask(a: Mapping[str, Any]) -> Text:
    return tr("Add «{title}» under the task {task}", title=_shown(a.get("title", "")), task=_ref(a.get("task", "")))


def _create_event(a: Mapping[str, Any]) -> Text:
    if a.get("location"):
        return tr("Put «{title}» in your calendar on {start}, at {location}", title=_shown(a.get("title", "")),
                  start=_day(a.get("start_time", "")), location=_shown(a["location"]))
    return tr("Put «{title}» in your calendar on {start}", title=_shown(a.get("title", "")),
              start=_day(a.get("start_time", "")))


def _pause_pulse(a: Mapping[str, Any]) -> Text:
    if a.get("days"):
        return ntr("Pause all reminders for {count} day", "Pause all reminders for {count} days", int(a["days"]))
    return tr("Pause all reminders until you resume them")


def _joined(parts: list[Text]) -> Text:
    text = parts[0]
    for part in parts[1:]:
        text = tr("{first}, {second}", first=text, second=part)
    return text


def _log_drink(a: Mapping[str, Any]) -> Text:
    drink = _shown(a["name"]) if a.get("name") else drink_label(str(a.get("drink_type", "other")))
    count = int(a.get("count") or 1)
    if not a.get("quantity_ml"):
        return tr("Log {count} × {drink}", count=count, drink=drink) if count > 1 else tr("Log {drink}", drink=drink)
    ml = int(a["quantity_ml"])
    return tr("Log {count} × {ml} ml {drink}", count=count, ml=ml, drink=drink) if count > 1 \
        else tr("Log {ml} ml {drink}", ml=ml, drink=drink)


def _correct_last_drink(a: Mapping[str, Any]) -> Text:
    parts: list[Text] = []
    if a.get("quantity_ml"):
        parts.append(tr("{ml} ml", ml=int(a["quantity_ml"])))
    if a.get("name"):
        parts.append(tr("«{name}»", name=_shown(a["name"])))
    elif a.get("drink_type"):
        parts.append(drink_label(str(a["drink_type"])))
    return tr("Correct your last drink: {changes}", changes=_joined(parts)) if parts \
        else tr("Correct your last drink")


def _log_meal(a: Mapping[str, Any]) -> Text:
    what = _shown(a.get("description", ""))
    kind = meal_label(str(a["meal_type"])) if a.get("meal_type") else None
    if a.get("kcal"):
        return tr("Log {meal}: «{what}» ({kcal} kcal)", meal=kind, what=what, kcal=int(a["kcal"])) if kind \
            else tr("Log the meal «{what}» ({kcal} kcal)", what=what, kcal=int(a["kcal"]))
    return tr("Log {meal}: «{what}»", meal=kind, what=what) if kind else tr("Log the meal «{what}»", what=what)


def _correct_last_meal(a: Mapping[str, Any]) -> Text:
    parts: list[Text] = []
    if a.get("meal_type"):
        parts.append(meal_label(str(a["meal_type"])))
    if a.get("description"):
        parts.append(tr("«{name}»", name=_shown(a["description"])))
    if a.get("kcal"):
        parts.append(tr("{kcal} kcal", kcal=int(a["kcal"])))
    return tr("Correct your last meal: {changes}", changes=_joined(parts)) if parts else tr("Correct your last meal")


def _create_reminder(a: Mapping[str, Any]) -> Text:
    if a.get("repeat"):
        return tr("Remind you of «{text}» from {at}, and again as it repeats", text=_shown(a.get("text", "")),
                  at=_day(a.get("at", "")))
    return tr("Remind you of «{text}» on {at}", text=_shown(a.get("text", "")), at=_day(a.get("at", "")))


def _set_task_reminder(a: Mapping[str, Any]) -> Text:
    if a.get("minutes_before"):
        return ntr("Remind you of the task {task} {count} minute before it is due",
                   "Remind you of the task {task} {count} minutes before it is due", int(a["minutes_before"]),
                   task=_ref(a.get("task", "")))
    return tr("Remind you of the task {task} when it is due", task=_ref(a.get("task", "")))


def _create_goal_from_template(a: Mapping[str, Any]) -> Text:
    template = GOAL_TEMPLATES.get(str(a.get("template", "")))
    if template is None:
        raise ValueError("unknown goal template")
    return tr("Start the goal «{title}»", title=template.title_text)


def _skip_streak_day(a: Mapping[str, Any]) -> Text:
    streak = streak_label(str(a.get("streak", "")))
    if a.get("date"):
        return tr("Count {day} as a skip day for your {streak} streak", day=_day(a["date"]), streak=streak)
    return tr("Count today as a skip day for your {streak} streak", streak=streak)


def _draft_ritual(a: Mapping[str, Any]) -> Text:
    if a.get("title"):
        return tr("Draft the ritual «{title}» for you to look at", title=_shown(a["title"]))
    return tr("Draft a ritual for you to look at")


def _undo_last_drink(a: Mapping[str, Any]) -> Text:
    if a.get("drink_type") and not a.get("entry_ids"):
        return tr("Take back your last {drink}", drink=drink_label(str(a["drink_type"])))
    return tr("Take back your last drink")


TEMPLATES: dict[str, Callable[[Mapping[str, Any]], Text]] = {
    "create_task": _create_task,
    "complete_task": lambda a: tr("Mark the task {task} as done", task=_ref(a.get("task", ""))),
    "uncomplete_task": lambda a: tr("Open the task {task} again", task=_ref(a.get("task", ""))),
    "reschedule_task": lambda a: tr("Move the task {task} to {due}", task=_ref(a.get("task", "")),
                                    due=_day(a.get("due_date", ""))),
    "update_task": lambda a: tr("Change the task {task}: {changes}", task=_ref(a.get("task", "")),
                                changes=_changes(a, _TASK_FIELDS)),
    "delete_task": lambda a: tr("Delete the task {task} and its subtasks", task=_ref(a.get("task", ""))),
    "add_subtask": _add_subtask,
    "create_event": _create_event,
    "move_event": lambda a: tr("Move the appointment {event} to {start}", event=_ref(a.get("event", "")),
                               start=_day(a.get("start_time", ""))),
    "update_event": lambda a: tr("Change the appointment {event}: {changes}", event=_ref(a.get("event", "")),
                                 changes=_changes(a, _EVENT_FIELDS)),
    "delete_event": lambda a: tr("Delete the appointment {event}", event=_ref(a.get("event", ""))),
    "set_drink_goal": lambda a: tr("Set your daily water goal to {ml} ml", ml=int(a.get("daily_ml", 0))),
    "set_nutrition_goal": lambda a: tr("Set your daily calorie goal to {kcal} kcal",
                                       kcal=int(a.get("kcal", 0))),
    "create_place": lambda a: tr("Save the place «{name}»", name=_shown(a.get("name", ""))),
    "delete_place": lambda a: tr("Delete the place {place} and its visits", place=_ref(a.get("place", ""))),
    "pause_goal": lambda a: tr("Pause the goal {goal}", goal=_ref(a.get("goal", ""))),
    "resume_goal": lambda a: tr("Resume the goal {goal}", goal=_ref(a.get("goal", ""))),
    "abandon_goal": lambda a: tr("Stop the goal {goal} for good", goal=_ref(a.get("goal", ""))),
    "pause_pulse": _pause_pulse,
    "resume_pulse": lambda a: tr("Resume the reminders"),
    "log_drink": _log_drink,
    "log_drink_preset": lambda a: tr("Log your drink «{name}»", name=_shown(a.get("preset", ""))),
    "create_drink_preset": lambda a: tr("Save «{name}» ({ml} ml) as a drink you log with one tap",
                                        name=_shown(a.get("name", "")), ml=int(a.get("quantity_ml", 0))),
    "correct_last_drink": _correct_last_drink,
    "undo_last_drink": _undo_last_drink,
    "delete_drink": lambda a: tr("Delete a drink from your log"),
    "log_meal": _log_meal,
    "correct_last_meal": _correct_last_meal,
    "delete_meal": lambda a: tr("Delete a meal from your log"),
    "visit_place": lambda a: tr("Check you in at {place}", place=_ref(a.get("place", ""))),
    "delete_visit": lambda a: tr("Delete the visit {visit}", visit=_ref(a.get("visit", ""))),
    "log_location": lambda a: tr("Store where you are now"),
    "start_tracking": lambda a: tr("Turn on location tracking"),
    "stop_tracking": lambda a: tr("Turn off location tracking"),
    "create_reminder": _create_reminder,
    "delete_reminder": lambda a: tr("Delete the reminder {reminder}", reminder=_ref(a.get("reminder", ""))),
    "move_reminder": lambda a: tr("Move the reminder {reminder} to {time}", reminder=_ref(a.get("reminder", "")),
                                  time=_day(a.get("at") or a.get("time", ""))),
    "set_task_reminder": _set_task_reminder,
    "create_goal": lambda a: tr("Start the goal «{title}»", title=_shown(a.get("title", ""))),
    "create_goal_from_template": _create_goal_from_template,
    "skip_streak_day": _skip_streak_day,
    "draft_ritual": _draft_ritual,
    "undo_rule_adaptation": lambda a: tr("Undo what a reminder learned about you"),
}


def action_text(tool_name: str, arguments: Mapping[str, Any], *, year: int | None = None) -> Text:
    """What the call would do, as a phrase in the person's words (no question mark); its days carry their year
    when it is not `year` (the year the proposal was made)."""
    arguments = {k: _day(v, year) if _looks_like_day(k) and v not in (None, "") else v for k, v in arguments.items()}
    template = TEMPLATES.get(tool_name)
    if template is not None:
        try:
            return template(arguments)
        except (TypeError, ValueError):  # an argument of an unexpected shape: the generic wording
            pass
    if not arguments:
        return tr("Run «{tool}»", tool=tool_name)
    shown: Text | str = ""
    for key, value in arguments.items():
        item = tr("{name}: {value}", name=key, value=_day(value) if _looks_like_day(key) else _shown(value))
        shown = item if shown == "" else tr("{first}, {second}", first=shown, second=item)
    return tr("Run «{tool}» with {arguments}", tool=tool_name, arguments=shown)


def _looks_like_day(key: str) -> bool:
    return key in ("date", "due_date", "start_time", "end_time", "until") or key.endswith(("_date", "_time", "_at"))
