"""A fact as the person reads it, in their language: its own wording when the extractor wrote one (the answers to
nudges), else said from its key ("weekday:drink:coffee:0" is "On Mondays you usually drink coffee."); a fact the
model proposed keeps its sentence as the model wrote it."""

from __future__ import annotations

from datetime import date
from typing import Any

from brain.i18n import Text, ntr, tr
from brain.modules.drink.service import drink_label
from brain.modules.food.service import meal_label
from brain.pulse.nudges import text_from_json


def fact_text(key: str, statement: str, said: dict[str, Any] | None) -> Text | str:
    if said:
        return text_from_json(said)
    parts = key.split(":")
    activity = _activity(parts[1:-1]) if len(parts) >= 3 else None
    if activity is None:
        return statement
    kind, last = parts[0], parts[-1]
    if kind == "weekday" and last.isdecimal():
        return tr("On {day}s you usually {activity}.", day=_weekday(int(last)), activity=activity)
    if kind == "window" and last in _PARTS:
        return tr("You usually {activity} {part}.", activity=activity, part=_PARTS[last])
    if kind == "frequency" and "/" in last:
        rate, unit = last.split("/", 1)
        if rate.isdecimal() and unit in ("day", "week"):
            return (ntr("You {activity} about once a day.", "You {activity} about {count} times a day.", int(rate),
                        activity=activity) if unit == "day"
                    else ntr("You {activity} about once a week.", "You {activity} about {count} times a week.",
                             int(rate), activity=activity))
    return statement


def _weekday(day: int) -> Text:
    return _DAY_NAMES[day % 7]


_DAY_NAMES: tuple[Text, ...] = (tr("Monday"), tr("Tuesday"), tr("Wednesday"), tr("Thursday"), tr("Friday"),
                                tr("Saturday"), tr("Sunday"))
_PARTS: dict[str, Text] = {"morning": tr("in the morning"), "afternoon": tr("in the afternoon"),
                           "evening": tr("in the evening"), "night": tr("at night")}


def _activity(key: list[str]) -> Text | None:
    """What the person does, as the fact keys name it: "drink:water", "meal:lunch", "task"."""
    if key[:1] == ["drink"] and len(key) == 2:
        return tr("drink {drink}", drink=drink_label(key[1]))
    if key[:1] == ["meal"] and len(key) == 2:
        return tr("have {meal}", meal=meal_label(key[1]))
    if key == ["task"]:
        return tr("complete tasks")
    return None


def relevant_today(key: str, today: date) -> bool:
    """Whether a fact is worth saying in the morning summary of `today`: a habit of this weekday, and how the person
    answers nudges (so they know the bot knows)."""
    parts = key.split(":")
    if parts[0] == "weekday":
        return parts[-1] == str(today.weekday())
    return parts[0] == "nudge"
