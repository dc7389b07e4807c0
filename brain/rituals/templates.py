"""Ritual templates: ready-made routines a person starts with one tap (and can schedule). Titles and step
labels are English message ids, shown in the person's language. Each template suggests when it could run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time

from brain.i18n import N_
from brain.rituals.steps import (
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
from brain.schedules.weekdays import EVERY_DAY

WATER = {"drink_type": "water"}


@dataclass(frozen=True)
class RitualTemplate:
    id: str
    title: str  # an N_() msgid
    steps: tuple[Step, ...]
    suggested_at: time | None = None  # None: started by hand
    suggested_days: int = EVERY_DAY


TEMPLATES: dict[str, RitualTemplate] = {t.id: t for t in (
    RitualTemplate("morning", N_("Morning routine"), (
        ToolCallStep(label=N_("Drink a glass of water"), tool="log_drink", args={**WATER, "quantity_ml": 250}),
        InfoDisplayStep(label=N_("Your day at a glance"), source="events_today"),
        InfoDisplayStep(label=N_("Today's tasks"), source="tasks_today"),
        InfoDisplayStep(label=N_("Your streaks"), source="streaks"),
        MoodPickerStep(label=N_("How do you feel this morning?")),
    ), suggested_at=time(7, 30)),
    RitualTemplate("evening", N_("Evening routine"), (
        InfoDisplayStep(label=N_("What you drank today"), source="drink_progress"),
        InfoDisplayStep(label=N_("What you ate today"), source="nutrition_progress"),
        InfoDisplayStep(label=N_("Your goals today"), source="goals"),
        TextInputStep(label=N_("What went well today?"), placeholder=N_("A good talk with Anna"), remember=True),
        MoodPickerStep(label=N_("How was your day, from 1 to 5?")),
    ), suggested_at=time(21, 30)),
    RitualTemplate("drink_check", N_("Drink check"), (
        InfoDisplayStep(label=N_("Water so far"), source="drink_progress"),
        NumberInputStep(label=N_("How much water do you want to log?"), tool="log_drink", param="quantity_ml",
                        base_args=WATER, unit="ml", minimum=50, maximum=2000, presets=(150, 250, 330, 500)),
    )),
    RitualTemplate("weekly_review", N_("Weekly review"), (
        InfoDisplayStep(label=N_("How your week went"), source="streaks"),
        InfoDisplayStep(label=N_("Your goals"), source="goals"),
        TextInputStep(label=N_("What do you take with you from this week?"), remember=True),
        TextInputStep(label=N_("One thing to get done next week"), tool="create_task", param="title",
                      placeholder=N_("Book the dentist")),
        InfoDisplayStep(label=N_("Coming up"), source="events_week"),
    ), suggested_at=time(18, 0), suggested_days=1 << 6),
    RitualTemplate("wind_down", N_("Wind-down"), (
        ChecklistStep(label=N_("Get ready for the night"), items=(
            ChecklistItem(label=N_("Screens away")),
            ChecklistItem(label=N_("Clothes for tomorrow ready")),
            ChecklistItem(label=N_("A glass of water"), tool="log_drink", args={**WATER, "quantity_ml": 250}),
        )),
        BreathingStep(label=N_("4-7-8 breathing"), pattern="4-7-8", cycles=4),
        TextInputStep(label=N_("What moved you today?"), placeholder=N_("The call with my sister"), remember=True),
    ), suggested_at=time(21, 45)),
)}
TEMPLATE_IDS: tuple[str, ...] = tuple(TEMPLATES)
