"""The steps a ritual is made of, stored as JSON on the ritual and validated on the way in and out:

- tool_call     runs one tool with fixed arguments ("Drink a glass of water" -> log_drink water 250 ml)
- number_input  asks for a number (preset buttons, or typed) and passes it to a tool as one argument
- text_input    asks for a few words; they go to a tool argument and/or the long-term memory
- mood_picker   a mood from 1 to 5, optionally passed to a tool
- info_display  shows part of the day (tasks, calendar, drinks, food, streaks, goals) and moves on by itself
- checklist     items to tick off (an item may run a tool), done when all are ticked or on "Done"
- breathing     a breathing rhythm (in, hold, out, hold) for some cycles, done on "Done" (no timer runs)

Labels of template steps are English message ids, translated when shown; labels the person or the companion
wrote are shown as written."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

InfoSource = Literal["tasks_today", "events_today", "events_week", "drink_progress", "nutrition_progress", "streaks",
                     "goals"]
INFO_SOURCES: tuple[str, ...] = ("tasks_today", "events_today", "events_week", "drink_progress", "nutrition_progress",
                                 "streaks", "goals")
BreathingPattern = Literal["box", "4-7-8", "coherent"]
# Seconds of (breathe in, hold, breathe out, hold).
BREATHING_PATTERNS: dict[str, tuple[int, int, int, int]] = {
    "box": (4, 4, 4, 4), "4-7-8": (4, 7, 8, 0), "coherent": (5, 0, 5, 0),
}
MOODS = (1, 2, 3, 4, 5)
MAX_STEPS = 12
MAX_LABEL = 200
MAX_CHECKLIST_ITEMS = 8


class _Step(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    label: str = Field(min_length=1, max_length=MAX_LABEL)


class _ToolTarget(BaseModel):
    """Where a step's answer goes: `tool` called with `base_args` plus {param: answer}."""

    tool: str | None = None
    param: str | None = None
    base_args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _param_needs_tool(self) -> _ToolTarget:
        if (self.tool is None) != (self.param is None):
            raise ValueError("tool and param go together")
        return self

    def call_with(self, answer: Any) -> tuple[str, dict[str, Any]] | None:
        if self.tool is None or self.param is None:
            return None
        return self.tool, {**self.base_args, self.param: answer}


class ToolCallStep(_Step):
    type: Literal["tool_call"] = "tool_call"
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class NumberInputStep(_Step, _ToolTarget):
    type: Literal["number_input"] = "number_input"
    unit: str | None = Field(default=None, max_length=16)
    minimum: int = 0
    maximum: int = 100_000
    presets: tuple[int, ...] = ()

    @model_validator(mode="after")
    def _bounds(self) -> NumberInputStep:
        if self.minimum > self.maximum or any(not self.minimum <= p <= self.maximum for p in self.presets):
            raise ValueError("presets must lie between minimum and maximum")
        return self


class TextInputStep(_Step, _ToolTarget):
    type: Literal["text_input"] = "text_input"
    placeholder: str | None = Field(default=None, max_length=MAX_LABEL)
    remember: bool = False  # the answer also goes to the long-term memory


class MoodPickerStep(_Step, _ToolTarget):
    type: Literal["mood_picker"] = "mood_picker"


class InfoDisplayStep(_Step):
    type: Literal["info_display"] = "info_display"
    source: InfoSource


class ChecklistItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    label: str = Field(min_length=1, max_length=MAX_LABEL)
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)


class ChecklistStep(_Step):
    type: Literal["checklist"] = "checklist"
    items: tuple[ChecklistItem, ...] = Field(min_length=1, max_length=MAX_CHECKLIST_ITEMS)


class BreathingStep(_Step):
    type: Literal["breathing"] = "breathing"
    pattern: BreathingPattern = "box"
    cycles: int = Field(default=4, ge=1, le=20)

    @property
    def rhythm(self) -> tuple[int, int, int, int]:
        return BREATHING_PATTERNS[self.pattern]


Step = Annotated[
    ToolCallStep | NumberInputStep | TextInputStep | MoodPickerStep | InfoDisplayStep | ChecklistStep
    | BreathingStep,
    Field(discriminator="type"),
]
STEP_TYPES: tuple[str, ...] = ("tool_call", "number_input", "text_input", "mood_picker", "info_display", "checklist",
                               "breathing")
# Steps that wait for the person; an info step is shown and passed on the way.
INTERACTIVE = frozenset(STEP_TYPES) - {"info_display"}
_STEPS = TypeAdapter(list[Step])


def parse_steps(data: Any) -> list[Step]:
    """Validated steps from stored JSON (raises pydantic.ValidationError on anything malformed)."""
    steps = _STEPS.validate_python(data)
    if not 1 <= len(steps) <= MAX_STEPS:
        raise ValueError(f"a ritual has 1 to {MAX_STEPS} steps")
    return steps


def dump_steps(steps: list[Step]) -> list[dict[str, Any]]:
    return [step.model_dump(mode="json", exclude_defaults=False) for step in steps]


def tools_used(steps: list[Step]) -> set[str]:
    names: set[str] = set()
    for step in steps:
        if isinstance(step, ToolCallStep):
            names.add(step.tool)
        elif isinstance(step, NumberInputStep | TextInputStep | MoodPickerStep) and step.tool is not None:
            names.add(step.tool)
        elif isinstance(step, ChecklistStep):
            names.update(item.tool for item in step.items if item.tool is not None)
    return names

