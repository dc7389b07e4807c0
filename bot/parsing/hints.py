"""What to write instead, when the rule-based reader did not understand a message but can tell what it was about:
"erinnere mich irgendwann an Oma" names a reminder without a time, so the answer shows how a reminder is written,
not the general examples of drinks and tasks."""

from __future__ import annotations

import re
from enum import Enum


class Topic(Enum):
    REMINDER = "reminder"
    APPOINTMENT = "appointment"
    TASK = "task"
    DRINK = "drink"
    MEAL = "meal"
    PLACE = "place"
    DELETE = "delete"  # something to take back, not said which way ("lösche die Pizza")


# By the first word stem found, in this order: a reminder about an appointment is about the reminder; a request to
# delete is about deleting, whatever it names.
_TOPICS: tuple[tuple[Topic, re.Pattern[str]], ...] = (
    (Topic.DELETE, re.compile(r"^(?:(?:please|bitte)\s+)?(?:delete|remove|lösche|lösch|loesche|entferne|streiche)\b",
                              re.I)),
    (Topic.REMINDER, re.compile(r"\b(?:erinner\w*|remind\w*)\b", re.I)),
    (Topic.APPOINTMENT, re.compile(r"\b(?:termin\w*|appointment\w*|kalender|calendar|meeting)\b", re.I)),
    (Topic.TASK, re.compile(r"\b(?:aufgabe\w*|task\w*|to-?dos?|erledig\w*)\b", re.I)),
    (Topic.DRINK, re.compile(r"\b(?:getrunken|trinke\w*|drank|drink\w*|wasser|water|kaffee\w*|coffee\w*|tee|tea)\b",
                             re.I)),
    (Topic.MEAL, re.compile(r"\b(?:gegessen|esse\w*|ate|eat\w*|meal\w*|mahlzeit\w*|frühstück|mittagessen|abendessen"
                            r"|breakfast|lunch|dinner|kcal|kalorien|calories)\b", re.I)),
    (Topic.PLACE, re.compile(r"\b(?:ort|orte|place|places|checke?\s+ein|check\s+in)\b", re.I)),
)


def topic_of(text: str) -> Topic | None:
    """What a message the reader did not understand was about, by its words; None when nothing says."""
    if len(text) > 300:
        return None
    for topic, pattern in _TOPICS:
        if pattern.search(text):
            return topic
    return None


# A request to the companion: an imperative first ("delete the gym thing", "verschiebe das auf später"), or "can you",
# "kannst du". Not a statement about the person, so not said to be remembered. ("Mark" and "Update:" open statements
# too: "Mark is my brother".)
_REQUEST_RE = re.compile(
    r"^(?:(?:please|bitte|hey|ok|okay)[,!]?\s+)*(?:(?:can|could|would|will)\s+you|(?:kannst|könntest|koenntest|würdest)"
    r"\s+du|(?:delete|remove|cancel|move|change|rename|edit|show|list|add|set|put|create|schedule|reschedule|"
    r"undo|send|give|find|search|lösch\w*|loesch\w*|entferne|streiche|verschieb\w*|verleg\w*|änder\w*|"
    r"aender\w*|benenne|zeig\w*|liste|trag|füge|fuege|setz\w*|stelle?(?!\s+dir\s+vor)|markier\w*|schick\w*|such\w*|finde|"
    r"tell\s+me|help\s+me|explain|erzähl\w*|erklär\w*|sag\s+mir|hilf\s+mir)\b)",
    re.I)


def request_said(text: str) -> bool:
    """Whether a message asks the companion to do something (see _REQUEST_RE)."""
    return len(text) <= 300 and _REQUEST_RE.match(text.strip()) is not None
