"""Ritual steps written as short lines, as the companion drafts them from a wish ("make me a morning routine")
and as the person can read them in the proposal. One step per line; an optional label after "|":

    water 250 | Start with a glass of water
    show calendar
    show tasks
    mood
    ask What went well today?
    task One thing to get done tomorrow
    check Screens away, Clothes ready
    breathe 4-7-8 4
    log water

`water [ml]`, `coffee`/`tea [ml]` log a drink; `log water` asks how much; `show <tasks|calendar|drinks|food|
streaks|goals>` shows part of the day; `mood` asks for a mood 1-5; `ask <question>` asks for words (kept in
the memory); `task <question>` asks for words that become a task; `check <a>, <b>` is a checklist;
`breathe [box|4-7-8|coherent] [cycles]` is a breathing rhythm."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from brain.errors import DomainError
from brain.i18n import N_, tr
from brain.rituals.steps import (
    BREATHING_PATTERNS,
    MAX_STEPS,
    BreathingStep,
    ChecklistItem,
    ChecklistStep,
    InfoDisplayStep,
    MoodPickerStep,
    NumberInputStep,
    Step,
    TextInputStep,
    ToolCallStep,
)

SHOW_SOURCES: dict[str, str] = {
    "tasks": "tasks_today", "calendar": "events_today", "events": "events_today", "drinks": "drink_progress",
    "water": "drink_progress", "food": "nutrition_progress", "meals": "nutrition_progress", "streaks": "streaks",
    "goals": "goals", "week": "events_week", "coming_up": "events_week",
}
SHOW_LABELS: dict[str, str] = {
    "tasks_today": N_("Today's tasks"), "events_today": N_("Your day at a glance"),
    "drink_progress": N_("What you drank today"), "nutrition_progress": N_("What you ate today"),
    "streaks": N_("Your streaks"), "goals": N_("Your goals"), "events_week": N_("Coming up"),
}
DRINKS = ("water", "coffee", "tea")
DEFAULT_ML = {"water": 250, "coffee": 200, "tea": 250}
_NUMBER = re.compile(r"^\d{1,4}$")


def parse_draft(text: str) -> list[Step]:
    """The steps of a draft, one per non-empty line (";" also separates); DomainError names a bad line."""
    lines = [part.strip() for line in text.splitlines() for part in line.split(";") if part.strip()]
    if not lines:
        raise DomainError(tr("A ritual needs at least one step."), code="no_steps")
    if len(lines) > MAX_STEPS:
        raise DomainError(tr("A ritual has at most {max} steps.", max=MAX_STEPS), code="too_many_steps")
    steps = []
    for number, line in enumerate(lines, start=1):
        try:
            steps.append(_step(line))
        except (ValueError, ValidationError):
            raise DomainError(tr("I can't read step {number}: {line}", number=number, line=line[:120]),
                              code="bad_step") from None
    return steps


def _step(line: str) -> Step:
    body, _, label = line.partition("|")
    words = body.split()
    if not words:
        raise ValueError("empty step")
    head, rest = words[0].lower(), words[1:]
    text = " ".join(rest)
    own = label.strip() or None

    def named(default: str) -> str:
        return own or default

    if head in DRINKS:
        ml = DEFAULT_ML[head]
        if rest:
            if len(rest) > 2 or not _NUMBER.match(rest[0]) or (len(rest) == 2 and rest[1].lower() != "ml"):
                raise ValueError("amount")
            ml = int(rest[0])
        default = N_("Drink a glass of water") if head == "water" else N_("Log a drink")
        return ToolCallStep(label=named(default), tool="log_drink", args={"drink_type": head, "quantity_ml": ml})
    if head == "log" and text.lower() == "water":
        return NumberInputStep(label=named(N_("How much water do you want to log?")), tool="log_drink",
                               param="quantity_ml", base_args={"drink_type": "water"}, unit="ml", minimum=50,
                               maximum=2000, presets=(150, 250, 330, 500))
    if head == "show":
        source = SHOW_SOURCES.get(text.lower())
        if source is None:
            raise ValueError("source")
        return InfoDisplayStep(label=named(SHOW_LABELS[source]), source=source)
    if head == "mood":
        return MoodPickerStep(label=named(text or N_("How do you feel, from 1 to 5?")))
    if head == "ask":
        return TextInputStep(label=named(_required(text)), remember=True)
    if head == "task":
        return TextInputStep(label=named(_required(text)), tool="create_task", param="title")
    if head == "check":
        items = [item.strip() for item in text.split(",") if item.strip()]
        return ChecklistStep(label=named(N_("Tick off")), items=tuple(ChecklistItem(label=item) for item in items))
    if head in ("breathe", "breath"):
        return _breathing(rest, own)
    raise ValueError("kind")


def _breathing(rest: list[str], label: str | None) -> BreathingStep:
    args: dict[str, Any] = {}
    for word in rest:
        if word.lower() in BREATHING_PATTERNS:
            args["pattern"] = word.lower()
        elif _NUMBER.match(word):
            args["cycles"] = int(word)
        else:
            raise ValueError("breathing")
    return BreathingStep(label=label or N_("Breathe"), **args)


def _required(text: str) -> str:
    if not text.strip():
        raise ValueError("question")
    return text.strip()
